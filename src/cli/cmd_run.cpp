// cohort run: load a model, print the prompt, stream the generated text to stdout; timings
// go to stderr so stdout carries only text.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "comm/communicator.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "model/transformer.h"
#include "runtime/generator.h"
#include "text/sampler.h"
#include "text/tokenizer.h"

namespace cohort::cli {
namespace {

struct RunConfig {
  std::string model_path;
  std::string tokenizer_path;
  std::string prompt;
  int64_t n_predict = 128;
  int threads = 0;
  int64_t ctx = 0;
  std::string kv_type = "f16";
  int64_t batch = 64;
  bool no_bos = false;
  text::SamplerConfig sampling;
};

int run(const RunConfig& cfg) {
  const double t_load = now_s();
  Result<format::GgufFile> file = open_model(cfg.model_path, cfg.tokenizer_path);
  if (!file.is_ok()) {
    std::fprintf(stderr, "error: %s\n", file.status().message().c_str());
    return 1;
  }
  auto tok = text::Tokenizer::from_gguf(*file);
  if (!tok.is_ok()) {
    std::fprintf(stderr, "error: %s\n", tok.status().message().c_str());
    return 1;
  }
  ThreadPool pool(cfg.threads);
  auto comm = comm::make_local_communicator();
  const kernels::KernelTable& kt = kernels::best();
  auto hp = model::HParams::from_gguf(*file);
  if (!hp.is_ok()) {
    std::fprintf(stderr, "error: %s\n", hp.status().message().c_str());
    return 1;
  }
  auto model =
      model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool, kt, cfg.batch);
  if (!model.is_ok()) {
    std::fprintf(stderr, "error: %s\n", model.status().message().c_str());
    return 1;
  }
  // Context: the model's trained length, capped at 4096 unless -c asks for more or less.
  int64_t n_ctx = std::min<int64_t>(hp->n_ctx_train, 4096);
  if (cfg.ctx > 0) n_ctx = std::min<int64_t>(cfg.ctx, hp->n_ctx_train);
  const DType kv_type = cfg.kv_type == "f32" ? DType::kF32 : DType::kF16;
  auto kv = (*model)->new_cache(n_ctx, kv_type);
  if (!kv.is_ok()) {
    std::fprintf(stderr, "error: %s\n", kv.status().message().c_str());
    return 1;
  }
  COHORT_LOG_INFO(
      "run: %s: %s; %d threads, %s kernels, ctx %lld (%s KV, %.1f MiB), loaded in %.2f s",
      file->name().c_str(), hp->summary().c_str(), pool.size(), kt.isa,
      static_cast<long long>(n_ctx), kv_type == DType::kF32 ? "f32" : "f16",
      kv->bytes() / 1048576.0, now_s() - t_load);

  const text::Tokenizer& tk = **tok;
  std::vector<int32_t> prompt = tk.encode(cfg.prompt, !cfg.no_bos && tk.add_bos_default(), false);
  if (prompt.empty()) {
    std::fprintf(stderr, "error: the prompt is empty and the model has no BOS token\n");
    return 1;
  }
  std::fwrite(cfg.prompt.data(), 1, cfg.prompt.size(), stdout);
  std::fflush(stdout);

  text::Sampler sampler(cfg.sampling, hp->n_vocab);
  text::Detokenizer detok(tk);
  runtime::Generator gen(**model, *kv, [&](int32_t id) { return tk.is_eog(id); });
  runtime::GenerateStats st;
  Status s = gen.generate(
      prompt, cfg.n_predict, sampler,
      [&](int32_t id) {
        if (tk.is_eog(id)) return false;
        const std::string piece = detok.push(id);
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        return true;
      },
      &st);
  const std::string rest = detok.flush();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  if (!s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  std::fprintf(stderr, "prompt: %lld tokens in %.3f s (%.1f tok/s)\n",
               static_cast<long long>(st.n_prompt), st.prompt_s,
               st.prompt_s > 0 ? st.n_prompt / st.prompt_s : 0.0);
  std::fprintf(stderr, "generate: %lld tokens in %.3f s (%.1f tok/s)%s\n",
               static_cast<long long>(st.n_generated), st.generate_s,
               st.generate_s > 0 ? st.n_generated / st.generate_s : 0.0,
               st.stopped_at_eog ? ", stopped at end of text" : "");
  return 0;
}

}  // namespace

void add_run_command(CLI::App& app, Runner* runner) {
  auto cfg = std::make_shared<RunConfig>();
  CLI::App* cmd = app.add_subcommand("run", "Generate text from a prompt on this machine");
  cmd->add_option("-m,--model", cfg->model_path, "GGUF file or llama2.c checkpoint")->required();
  cmd->add_option("--tokenizer", cfg->tokenizer_path,
                  "llama2.c tokenizer file (for .bin checkpoints)");
  cmd->add_option("-p,--prompt", cfg->prompt, "Prompt text")->required();
  cmd->add_option("-n,--n-predict", cfg->n_predict, "Tokens to generate")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("-t,--threads", cfg->threads, "Compute threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("-c,--ctx", cfg->ctx, "Context length cap (default: min(trained, 4096))")
      ->check(CLI::Range(0, 1 << 24));
  cmd->add_option("--kv-type", cfg->kv_type, "KV cache type")->check(CLI::IsMember({"f16", "f32"}));
  cmd->add_option("-b,--batch", cfg->batch, "Prompt tokens per forward step")
      ->check(CLI::Range(1, 4096));
  cmd->add_flag("--no-bos", cfg->no_bos, "Do not prepend the BOS token");
  cmd->add_option("--temp", cfg->sampling.temperature, "Temperature (0: greedy)");
  cmd->add_option("--top-k", cfg->sampling.top_k, "Top-k (0: off)");
  cmd->add_option("--top-p", cfg->sampling.top_p, "Top-p (1: off)");
  cmd->add_option("--min-p", cfg->sampling.min_p, "Min-p (0: off)");
  cmd->add_option("--repeat-penalty", cfg->sampling.repeat_penalty, "Repetition penalty (1: off)");
  cmd->add_option("--repeat-last-n", cfg->sampling.repeat_last_n,
                  "Tokens the penalties look back over");
  cmd->add_option("--frequency-penalty", cfg->sampling.frequency_penalty, "Frequency penalty");
  cmd->add_option("--presence-penalty", cfg->sampling.presence_penalty, "Presence penalty");
  cmd->add_option("--seed", cfg->sampling.seed, "Sampling seed");
  cmd->callback([cfg, runner] { *runner = [cfg] { return run(*cfg); }; });
}

}  // namespace cohort::cli
