// cohort bench: prompt-processing and generation speed of a model on this node, judged
// against the machine's measured roofline (runtime/model_bench.h, runtime/roofline.h).
// Results go to stdout (a table, or JSON lines with --json); progress goes to stderr.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "runtime/bench_report.h"
#include "runtime/model_bench.h"
#include "runtime/roofline.h"

namespace cohort::cli {
namespace {

struct BenchConfig {
  std::string model_path;
  int threads = 0;
  // Prompt tokens per forward step: llama-bench's default micro-batch, so that a pp test of up
  // to 512 tokens runs as one step there and here. (The serving default is 64: a long step
  // delays the tokens of the requests decoding beside it.) On the Zen 4 VM of stop 21, 1B F16
  // pp128 on 2 threads, four rounds: 81-83% of FMA peak in steps of 64, 84-87% in one step.
  int64_t batch = 512;
  runtime::BenchOptions options;
  bool json = false;
  bool roofline_only = false;
  bool no_gemm = false;
  bool no_pack = false;
  bool huge_pages = false;
  bool no_bracket = false;  // tg repetitions without the read probe around each
  std::string kv_type = "f16";
  std::string isa;         // a kernel table by name (kernels::available()); empty: the best one
  std::string probes_isa;  // the table whose probes measure the roofline; empty: the best one
  std::string decode_pairs = "auto";     // on, off: kernels::set_decode_in_pairs; auto: the CPU's
  std::string decode_prefetch = "auto";  // on, off: kernels::set_decode_prefetch; auto: the CPU's
  std::string decode_width = "auto";     // 512, 256: kernels::set_decode_wide; auto: the CPU's
  std::string split = "steal";           // static: kernels::set_split_stealing(false)
  std::string spin_pause = "on";         // off: ThreadPool::set_spin_pause(false)
  int64_t slice_cols = -1;               // >= 0: kernels::set_pack_slice_cols
  int64_t prefetch_bytes = 0;            // > 0: kernels::set_decode_prefetch_bytes
};

int usage_error(const char* message) {
  std::fprintf(stderr, "error: bench: %s\n", message);
  return 2;
}

// The kernel table named `isa` (the best one where empty), or null after an error message.
const kernels::KernelTable* table_for(const std::string& isa) {
  if (isa.empty()) return &kernels::best();
  std::string names;
  const kernels::KernelTable* t = kernels::table_named(isa, &names);
  if (t == nullptr) {
    std::fprintf(stderr, "error: bench: no %s kernels on this CPU (it runs: %s)\n", isa.c_str(),
                 names.c_str());
  }
  return t;
}

int bench(const BenchConfig& cfg) {
  if (cfg.model_path.empty() && !cfg.roofline_only) {
    return usage_error("give a model (-m FILE), or --roofline for the machine alone");
  }
  if (cfg.options.n_prompt == 0 && cfg.options.n_gen == 0 && !cfg.roofline_only) {
    return usage_error("-p 0 and -n 0 leave nothing to measure");
  }
  if (cfg.options.pair_tokens && cfg.no_bracket) {
    return usage_error("--paired needs the read probe: drop --no-bracket");
  }
  if (cfg.decode_pairs != "auto") kernels::set_decode_in_pairs(cfg.decode_pairs == "on");
  if (cfg.decode_prefetch != "auto") kernels::set_decode_prefetch(cfg.decode_prefetch == "on");
  if (cfg.prefetch_bytes > 0) kernels::set_decode_prefetch_bytes(cfg.prefetch_bytes);
  if (cfg.decode_width != "auto") kernels::set_decode_wide(cfg.decode_width == "512");
  kernels::set_split_stealing(cfg.split == "steal");
  ThreadPool::set_spin_pause(cfg.spin_pause == "on");
  if (cfg.slice_cols >= 0) kernels::set_pack_slice_cols(cfg.slice_cols);
  // --isa: another table this CPU runs, for comparing kernels on the same model and minutes;
  // --probes: the table whose probes (read and FMA) measure the roofline.
  const kernels::KernelTable* run_table = table_for(cfg.isa);
  const kernels::KernelTable* probes = table_for(cfg.probes_isa);
  if (run_table == nullptr || probes == nullptr) return 2;
  ThreadPool pool(cfg.threads);
  std::fprintf(stderr, "bench: measuring the roofline (threads: %d)\n", pool.size());
  const runtime::Roofline roof = runtime::measure_roofline(*probes, pool);
  if (cfg.roofline_only) {
    std::fputs(cfg.json ? (runtime::roofline_json_line(roof) + "\n").c_str()
                        : runtime::roofline_text(roof).c_str(),
               stdout);
    if (cfg.model_path.empty()) return 0;
  } else if (!cfg.json) {
    std::fputs(runtime::roofline_text(roof).c_str(), stderr);
  }

  auto file = open_model(cfg.model_path, "", cfg.huge_pages);
  if (!file.is_ok()) {
    std::fprintf(stderr, "error: %s\n", file.status().message().c_str());
    return 1;
  }
  kernels::KernelTable kt = *run_table;
  // --no-gemm: the table without batched kernels, so prompts take the per-pair path.
  if (cfg.no_gemm) {
    for (kernels::TypeOps& ops : kt.types) ops.gemm = nullptr;
  }
  // --no-pack: the table without packed layouts, so the weights stay in the file's layout.
  if (cfg.no_pack) {
    for (kernels::TypeOps& ops : kt.types) ops.packed = {};
  }
  const runtime::ModelFacts facts = runtime::model_facts(*file);
  std::fprintf(stderr, "bench: %s (%s, %.2f MiB), %s kernels%s%s, batch %lld, %s KV cache\n",
               facts.name.c_str(), facts.type.c_str(),
               static_cast<double>(facts.model_bytes) / (1 << 20), kt.isa,
               cfg.no_gemm ? " without gemm" : "", cfg.no_pack ? " without packing" : "",
               static_cast<long long>(cfg.batch), cfg.kv_type.c_str());
  runtime::BenchOptions options = cfg.options;
  options.kv_type = *dtype_from_name(cfg.kv_type);  // one of the names the flag accepts
  // The read probe around each tg repetition: made here, after the model is open, so that
  // its buffer is gone once the bench is.
  std::unique_ptr<runtime::ReadProbe> probe;
  if (!cfg.no_bracket && options.n_gen > 0) {
    probe = std::make_unique<runtime::ReadProbe>(*probes, pool);
    options.bracket = probe.get();
  }
  // --paired: each prompt repetition also gets an FMA run of its length right after it.
  if (options.pair_tokens) options.pair_fma = probes;
  model::ExpertUsage usage;
  auto results = runtime::run_model_bench(*file, kt, pool, cfg.batch, options, &usage);
  if (!results.is_ok()) {
    std::fprintf(stderr, "error: %s\n", results.status().message().c_str());
    return 1;
  }
  const int threads = pool.size();
  // The tests' lines name the kernels that ran them (the roofline's probes are the best
  // table's, or --probes', whichever --isa chose).
  runtime::Roofline test_roof = roof;
  test_roof.probes_isa = roof.isa;
  test_roof.isa = kt.isa;
  // The pp rows' FMA peak is the better of the one before the tests and one after them: on
  // the Zen 4 VM of stop 29 a bench now and then measured its 2-thread peak at the 1-thread
  // value (117 of 233 GFLOP/s), though its prompts then ran on both threads.
  if (options.n_prompt > 0) {
    test_roof.fma_gflops_n =
        std::max(roof.fma_gflops_n, runtime::measure_fma_gflops(*probes, pool, true));
  }
  if (!cfg.json) std::fputs(runtime::bench_table_header().c_str(), stdout);
  for (const runtime::BenchResult& r : *results) {
    const std::string line = cfg.json
                                 ? runtime::bench_json_line(facts, threads, r, test_roof) + "\n"
                                 : runtime::bench_table_row(facts, threads, r, test_roof);
    std::fputs(line.c_str(), stdout);
  }
  if (!cfg.json) {
    for (const runtime::BenchResult& r : *results) {
      std::fputs(runtime::pool_time_text(r, test_roof).c_str(), stdout);
      std::fputs(runtime::paired_reads_text(r).c_str(), stdout);
      std::fputs(runtime::paired_fma_text(facts, r).c_str(), stdout);
      std::fputs(runtime::attention_flop_text(facts, r, test_roof).c_str(), stdout);
    }
  }
  if (usage.n_expert > 0) {
    std::fputs((cfg.json ? runtime::expert_usage_json_lines(usage)
                         : "\n" + runtime::expert_usage_text(usage))
                   .c_str(),
               stdout);
  }
  return 0;
}

}  // namespace

void add_bench_command(CLI::App& app, Runner* runner) {
  auto cfg = std::make_shared<BenchConfig>();
  CLI::App* cmd =
      app.add_subcommand("bench", "Measure prompt and generation speed against the roofline");
  cmd->add_option("-m,--model", cfg->model_path, "GGUF file");
  cmd->add_option("-t,--threads", cfg->threads, "Compute threads (default: all cores)")
      ->check(CLI::Range(0, 1024));
  cmd->add_option("-b,--batch", cfg->batch,
                  "Prompt tokens per forward step (default 512, as llama-bench's micro-batch)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("-p,--n-prompt", cfg->options.n_prompt, "Prompt tokens of the pp test (0: skip)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("-n,--n-gen", cfg->options.n_gen, "Generated tokens of the tg test (0: skip)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("-r,--repetitions", cfg->options.reps, "Timed repetitions of each test")
      ->check(CLI::Range(1, 1000));
  cmd->add_option("-d,--depth", cfg->options.depth,
                  "Run the tests after this many positions in the cache (long-context cost)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--kv-type,--cache-type", cfg->kv_type,
                  "KV cache type: f16, f32 or q8_0 (about half the bytes of f16)")
      ->check(CLI::IsMember({"f16", "f32", "q8_0"}))
      ->capture_default_str();
  cmd->add_flag("--json", cfg->json, "One JSON object per line per test");
  cmd->add_flag("--roofline", cfg->roofline_only,
                "Print the measured memory bandwidth and FMA peak (and bench -m if given)");
  cmd->add_flag("--huge-pages", cfg->huge_pages,
                "Copy the model into memory backed by 2 MiB pages instead of mapping the file");
  cmd->add_flag("--no-gemm", cfg->no_gemm,
                "Prompts without the batched kernels (one dot product per row and token)");
  cmd->add_flag("--no-bracket", cfg->no_bracket,
                "Generation repetitions without a read probe just before and after each (the "
                "bracketed fraction of read bandwidth)");
  cmd->add_flag("--paired", cfg->options.pair_tokens,
                "After each generated token, a plain read of as many bytes as it read, on the "
                "same threads: tokens judged against reads of their own size and moment "
                "(about doubles the tg test's time); and after each prompt repetition, FMA "
                "chains on every thread as long as it took (the pp test's paired FMA rate)");
  cmd->add_flag("--no-pack", cfg->no_pack,
                "Multiply the weights in the file's layout instead of packed panels of rows");
  cmd->add_option("--isa", cfg->isa,
                  "Kernels to run instead of the best this CPU has: ref, avx2, avx2_vnni, "
                  "avx2_vnni_evex or avx512_vnni");
  cmd->add_option("--probes", cfg->probes_isa,
                  "Measure the roofline (read bandwidth, FMA peak) with this table's probes "
                  "instead of the best one's: --isa avx2 --probes avx2 judges the AVX2 kernels "
                  "as a CPU without AVX-512 would");
  cmd->add_option("--slice-cols", cfg->slice_cols,
                  "Pack matrices wider than this in column slices of this width (0: whole; "
                  "default 2048)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_option("--decode-pairs", cfg->decode_pairs,
                  "Packed decode products two panels per pass (on) or one (off); auto: on for "
                  "Intel CPUs, off for others")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_option("--decode-prefetch", cfg->decode_prefetch,
                  "Packed decode products (and the read probe) prefetch their weights (on) or "
                  "leave it to the hardware (off); auto: on for Intel CPUs and AMD families 17h "
                  "(Zen 1, Zen 2) and 1Ah (Zen 5), off for others")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  cmd->add_option("--decode-prefetch-bytes", cfg->prefetch_bytes,
                  "How far ahead of their reads the decode products (but Q6_K's) and the read "
                  "probe prefetch (default: 4096 on AMD family 1Ah, 1024 elsewhere)")
      ->check(CLI::Range(64, 1 << 20));
  cmd->add_option("--decode-width", cfg->decode_width,
                  "AVX-512 decode products of Q4_0, Q8_0 and F16 (and the read probe) in 512-bit "
                  "registers, blocks in runs (512), or in 256-bit halves a block at a time "
                  "(256); auto: 512 on AMD family 1Ah (Zen 5), 256 elsewhere")
      ->check(CLI::IsMember({"auto", "512", "256"}))
      ->capture_default_str();
  cmd->add_option("--split", cfg->split,
                  "How a matrix product's threads share its rows: steal (each its share, then "
                  "chunks of another's left) or static (one fixed share each)")
      ->check(CLI::IsMember({"steal", "static"}))
      ->capture_default_str();
  cmd->add_option("--spin-pause", cfg->spin_pause,
                  "Waiting threads spin with the pause instruction (on) or bare loads (off)")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  add_bench_cluster_command(*cmd, runner);
  // CLI11 runs this callback after the subcommand's: leave `bench cluster` its runner.
  cmd->callback([cfg, cmd, runner] {
    if (cmd->got_subcommand("cluster")) return;
    *runner = [cfg] { return bench(*cfg); };
  });
}

}  // namespace cohort::cli
