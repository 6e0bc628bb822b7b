// cohort run: load a model (on this node or a cluster), print the prompt, stream the
// generated text to stdout; timings go to stderr so stdout carries only text.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_session.h"
#include "runtime/generator.h"
#include "text/sampler.h"

namespace cohort::cli {
namespace {

struct RunConfig {
  ModelFlags model;
  std::string prompt;
  int64_t n_predict = 128;
  bool no_bos = false;
  text::SamplerConfig sampling;
  std::string trace_path;  // one line per generated token: id and the top-2 logits
};

// "id top1 logit1 top2 logit2": lets tests locate near-ties where modes may diverge.
void write_trace_line(FILE* f, int32_t id, const std::vector<float>& l) {
  int64_t a = 0, b = -1;
  for (int64_t i = 1; i < static_cast<int64_t>(l.size()); ++i) {
    if (l[i] > l[a]) {
      b = a;
      a = i;
    } else if (b < 0 || l[i] > l[b]) {
      b = i;
    }
  }
  std::fprintf(f, "%d %lld %.6f %lld %.6f\n", id, static_cast<long long>(a), l[a],
               static_cast<long long>(b), b >= 0 ? l[b] : 0.0f);
}

int run(const RunConfig& cfg) {
  auto session = open_model_session(cfg.model);
  if (!session.is_ok()) {
    std::fprintf(stderr, "error: %s\n", session.status().message().c_str());
    return 1;
  }
  ModelSession& ms = **session;
  if (ms.mpi_worker) {  // an MPI rank other than 0: its part is done
    if (!ms.mpi_served.is_ok()) {
      std::fprintf(stderr, "error: %s\n", ms.mpi_served.message().c_str());
      return 1;
    }
    return 0;
  }
  const text::Tokenizer& tk = *ms.tokenizer;
  std::vector<int32_t> prompt = tk.encode(cfg.prompt, !cfg.no_bos && tk.add_bos_default(), false);
  if (prompt.empty()) {
    std::fprintf(stderr, "error: the prompt is empty and the model has no BOS token\n");
    return 1;
  }
  std::fwrite(cfg.prompt.data(), 1, cfg.prompt.size(), stdout);
  std::fflush(stdout);

  text::Sampler sampler(cfg.sampling, ms.hparams.n_vocab);
  text::Detokenizer detok(tk);
  runtime::Generator gen(*ms.stepper, [&](int32_t id) { return tk.is_eog(id); });
  FILE* trace = cfg.trace_path.empty() ? nullptr : std::fopen(cfg.trace_path.c_str(), "w");
  runtime::GenerateStats st;
  Status s = gen.generate(
      prompt, cfg.n_predict, sampler,
      [&](int32_t id) {
        if (trace) write_trace_line(trace, id, gen.last_logits());
        if (tk.is_eog(id)) return false;
        const std::string piece = detok.push(id);
        std::fwrite(piece.data(), 1, piece.size(), stdout);
        std::fflush(stdout);
        return true;
      },
      &st);
  if (trace) std::fclose(trace);
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
  CLI::App* cmd =
      app.add_subcommand("run", "Generate text from a prompt (on this node or a cluster)");
  add_model_flags(cmd, &cfg->model);
  cmd->add_option("-p,--prompt", cfg->prompt, "Prompt text")->required();
  cmd->add_option("-n,--n-predict", cfg->n_predict, "Tokens to generate")
      ->check(CLI::Range(0, 1 << 24));
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
  cmd->add_option("--trace", cfg->trace_path,
                  "Write 'id top1 logit1 top2 logit2' per generated token to this file");
  cmd->callback([cfg, runner] { *runner = [cfg] { return run(*cfg); }; });
}

}  // namespace cohort::cli
