// cohort template: render a chat template with a JSON context and print the prompt
// byte-exact (no newline added). The template comes from a GGUF's tokenizer.chat_template
// (-m; bos_token/eos_token default to the model's token texts) or from a file (--template).
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "text/chat_template.h"

namespace cohort::cli {
namespace {

struct TemplateConfig {
  std::string model_path;
  std::string template_path;
  std::string context_path;
  std::string now;
};

Result<std::string> read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::io_error("template: cannot open " + path);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::io_error("template: cannot read " + path);
  return s;
}

Result<nlohmann::ordered_json> read_context(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  try {
    auto j = nlohmann::ordered_json::parse(*text);
    if (!j.is_object())
      return Status::invalid_argument("template: " + path + " is not a JSON object");
    return j;
  } catch (const std::exception& e) {
    return Status::invalid_argument("template: " + path + ": " + e.what());
  }
}

// The text of token `id_key`'s id in the GGUF's vocabulary, if both exist.
std::optional<std::string> token_text(const format::GgufFile& f, std::string_view id_key) {
  auto id = f.get_int(id_key);
  const format::GgufArray* tokens = f.get_array("tokenizer.ggml.tokens");
  if (!id || !tokens || *id < 0 || static_cast<uint64_t>(*id) >= tokens->strings.size()) {
    return std::nullopt;
  }
  return std::string(tokens->strings[static_cast<size_t>(*id)]);
}

int fail(const Status& st) {
  std::fprintf(stderr, "error: %s\n", st.message().c_str());
  return 1;
}

int run_template(const TemplateConfig& cfg) {
  if (cfg.model_path.empty() && cfg.template_path.empty()) {
    std::fprintf(stderr, "error: template: one of -m/--model or --template is required\n");
    return 2;
  }
  auto context = read_context(cfg.context_path);
  if (!context.is_ok()) return fail(context.status());
  std::string source;
  if (!cfg.model_path.empty()) {
    auto file = open_model(cfg.model_path, "");
    if (!file.is_ok()) return fail(file.status());
    if (auto t = file->get_string("tokenizer.chat_template")) source = std::string(*t);
    for (const auto& [var, key] : {std::pair{"bos_token", "tokenizer.ggml.bos_token_id"},
                                   std::pair{"eos_token", "tokenizer.ggml.eos_token_id"}}) {
      if (context->contains(var)) continue;
      if (auto text = token_text(*file, key)) (*context)[var] = *text;
    }
  } else {
    auto text = read_text_file(cfg.template_path);
    if (!text.is_ok()) return fail(text.status());
    source = std::move(*text);
  }
  text::RenderOptions opts;
  if (!cfg.now.empty()) {
    auto now = text::parse_local_time(cfg.now);
    if (!now.is_ok()) return fail(now.status());
    opts.now = *now;
  }
  auto prompt = text::render_chat_template(source, *context, opts);
  if (!prompt.is_ok()) return fail(prompt.status());
  std::fwrite(prompt->data(), 1, prompt->size(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace

void add_template_command(CLI::App& app, Runner* runner) {
  auto cfg = std::make_shared<TemplateConfig>();
  CLI::App* cmd = app.add_subcommand("template", "Render a chat template with a JSON context");
  auto* model = cmd->add_option("-m,--model", cfg->model_path,
                                "GGUF file whose tokenizer.chat_template to render");
  auto* tmpl = cmd->add_option("--template", cfg->template_path, "Jinja2 template file");
  model->excludes(tmpl);
  tmpl->excludes(model);
  cmd->add_option("--context", cfg->context_path,
                  "JSON object whose keys become the template's variables")
      ->required();
  cmd->add_option("--now", cfg->now,
                  "Local time strftime_now() sees, e.g. 2025-01-15T10:30:00 (default: now)");
  cmd->callback([cfg, runner] { *runner = [cfg] { return run_template(*cfg); }; });
}

}  // namespace cohort::cli
