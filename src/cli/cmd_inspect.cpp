// cohort inspect: what a model file holds, without running it.
#include <cinttypes>
#include <cstdio>
#include <map>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "model/hparams.h"
#include "text/tokenizer.h"

namespace cohort::cli {
namespace {

struct InspectConfig {
  std::string path;
  std::string tokenizer_path;
  bool all_metadata = false;
  bool no_tensors = false;
};

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i) r += (i ? " x " : "") + std::to_string(s[i]);
  return r;
}

std::string human_bytes(uint64_t b) {
  char buf[32];
  if (b >= (1ull << 30))
    std::snprintf(buf, sizeof(buf), "%.2f GiB", b / 1073741824.0);
  else if (b >= (1ull << 20))
    std::snprintf(buf, sizeof(buf), "%.2f MiB", b / 1048576.0);
  else if (b >= (1ull << 10))
    std::snprintf(buf, sizeof(buf), "%.1f KiB", b / 1024.0);
  else
    std::snprintf(buf, sizeof(buf), "%" PRIu64 " B", b);
  return buf;
}

int inspect(const InspectConfig& cfg) {
  auto file = open_model(cfg.path, cfg.tokenizer_path);
  if (!file.is_ok()) {
    std::fprintf(stderr, "error: %s\n", file.status().message().c_str());
    return 1;
  }
  const format::GgufFile& f = *file;
  std::printf("file:          %s\n", f.name().c_str());
  std::printf("format:        GGUF v%u, %s, alignment %" PRIu64
              ", %zu metadata keys, %zu tensors\n",
              f.version(), human_bytes(f.file_bytes()).c_str(), f.alignment(), f.metadata().size(),
              f.tensors().size());
  auto arch = f.get_string("general.architecture");
  std::printf("architecture:  %s\n", arch ? std::string(*arch).c_str() : "(none)");
  if (auto name = f.get_string("general.name"))
    std::printf("name:          %s\n", std::string(*name).c_str());

  auto hp = model::HParams::from_gguf(f);
  if (hp.is_ok()) {
    std::printf("hyper-params:  %s\n", hp->summary().c_str());
  } else {
    std::printf("hyper-params:  (not runnable here: %s)\n", hp.status().message().c_str());
  }

  auto tok = text::Tokenizer::from_gguf(f);
  auto tok_model = f.get_string("tokenizer.ggml.model");
  if (tok.is_ok()) {
    const text::Tokenizer& t = **tok;
    std::printf("tokenizer:     %s, %d tokens, bos %d, eos %d%s\n", std::string(t.kind()).c_str(),
                t.n_vocab(), t.bos_id(), t.eos_id(), t.add_bos_default() ? ", adds BOS" : "");
  } else if (tok_model) {
    std::printf("tokenizer:     %s (%s)\n", std::string(*tok_model).c_str(),
                tok.status().message().c_str());
  } else {
    std::printf("tokenizer:     (none)\n");
  }
  if (auto pre = f.get_string("tokenizer.ggml.pre"))
    std::printf("pre-tokenizer: %s\n", std::string(*pre).c_str());
  auto tmpl = f.get_string("tokenizer.chat_template");
  std::printf("chat template: %s\n",
              tmpl ? ("present (" + std::to_string(tmpl->size()) + " bytes)").c_str() : "absent");

  if (cfg.all_metadata) {
    std::printf("\nmetadata:\n");
    for (const auto& kv : f.metadata()) {
      std::printf("  %-48s %-8s %s\n", std::string(kv.key).c_str(),
                  format::gguf_type_name(kv.value.type), kv.value.to_display_string().c_str());
    }
  }

  uint64_t total_bytes = 0;
  int64_t total_elems = 0;
  std::map<std::string, std::pair<int, uint64_t>> by_type;
  if (!cfg.no_tensors && !f.tensors().empty()) {
    std::printf("\n%-40s %-6s %-22s %12s\n", "tensor", "type", "shape", "bytes");
  }
  for (const auto& t : f.tensors()) {
    if (!cfg.no_tensors) {
      std::printf("%-40s %-6s %-22s %12" PRIu64 "\n", std::string(t.name).c_str(),
                  std::string(dtype_name(t.type)).c_str(), shape_str(t.shape).c_str(), t.bytes);
    }
    total_bytes += t.bytes;
    total_elems += t.n_elements();
    auto& e = by_type[std::string(dtype_name(t.type))];
    e.first++;
    e.second += t.bytes;
  }
  std::printf("\ntotals:        %zu tensors, %.3f M parameters, %s of weights\n",
              f.tensors().size(), total_elems / 1e6, human_bytes(total_bytes).c_str());
  for (const auto& [type, e] : by_type) {
    std::printf("  %-6s %5d tensors %12s\n", type.c_str(), e.first, human_bytes(e.second).c_str());
  }
  return 0;
}

}  // namespace

void add_inspect_command(CLI::App& app, Runner* runner) {
  auto cfg = std::make_shared<InspectConfig>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show what a model file holds");
  cmd->add_option("file", cfg->path, "GGUF file or llama2.c checkpoint")->required();
  cmd->add_option("--tokenizer", cfg->tokenizer_path,
                  "llama2.c tokenizer file (for .bin checkpoints)");
  cmd->add_flag("--metadata", cfg->all_metadata, "Print every metadata key");
  cmd->add_flag("--no-tensors", cfg->no_tensors, "Omit the tensor table");
  cmd->callback([cfg, runner] { *runner = [cfg] { return inspect(*cfg); }; });
}

}  // namespace cohort::cli
