// cohort tokenize: text -> token ids with the vocabulary inside a GGUF (a vocab-only GGUF
// is enough: no weights are read). Prints the ids on one line, space-separated.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "text/tokenizer.h"

namespace cohort::cli {
namespace {

struct TokenizeConfig {
  std::string model;
  std::string tokenizer_path;  // llama2.c checkpoints only
  bool no_bos = false;
  bool special = false;
  bool from_stdin = false;
  std::string text;
  bool has_text = false;
};

// All of stdin, byte for byte (NULs and invalid UTF-8 included).
bool read_stdin(std::string* out) {
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), stdin)) > 0) out->append(buf, n);
  return std::ferror(stdin) == 0;
}

int tokenize(const TokenizeConfig& cfg) {
  if (cfg.from_stdin == cfg.has_text) {
    std::fprintf(stderr, "error: tokenize: give the text either as TEXT or with --stdin\n");
    return 2;
  }
  auto file = open_model(cfg.model, cfg.tokenizer_path);
  if (!file.is_ok()) {
    std::fprintf(stderr, "error: %s\n", file.status().message().c_str());
    return 1;
  }
  auto tok = text::Tokenizer::from_gguf(*file);
  if (!tok.is_ok()) {
    std::fprintf(stderr, "error: %s\n", tok.status().message().c_str());
    return 1;
  }
  std::string input;
  if (cfg.from_stdin) {
    if (!read_stdin(&input)) {
      std::fprintf(stderr, "error: tokenize: reading standard input failed\n");
      return 1;
    }
  } else {
    input = cfg.text;
  }
  const text::Tokenizer& t = **tok;
  const std::vector<int32_t> ids = t.encode(input, t.add_bos_default() && !cfg.no_bos, cfg.special);
  std::string line;
  line.reserve(ids.size() * 7 + 1);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  if (std::fwrite(line.data(), 1, line.size(), stdout) != line.size() || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "error: tokenize: writing standard output failed\n");
    return 1;
  }
  return 0;
}

}  // namespace

void add_tokenize_command(CLI::App& app, Runner* runner) {
  auto cfg = std::make_shared<TokenizeConfig>();
  CLI::App* cmd = app.add_subcommand(
      "tokenize", "Print the token ids of a text (needs only the vocabulary of the model file)");
  cmd->add_option("-m,--model", cfg->model, "GGUF file (vocab-only is enough)")->required();
  cmd->add_option("--tokenizer", cfg->tokenizer_path,
                  "llama2.c tokenizer file (for .bin checkpoints)");
  cmd->add_flag("--no-bos", cfg->no_bos, "Do not add BOS even if the vocabulary asks for it");
  cmd->add_flag("--special", cfg->special,
                "Recognise special-token texts (\"<|im_end|>\") in the text as their ids");
  cmd->add_flag("--stdin", cfg->from_stdin, "Read the text from standard input, byte-exact");
  cmd->add_option("text", cfg->text, "The text (or use --stdin)");
  cmd->callback([cfg, cmd, runner] {
    cfg->has_text = cmd->count("text") > 0;
    *runner = [cfg] { return tokenize(*cfg); };
  });
}

}  // namespace cohort::cli
