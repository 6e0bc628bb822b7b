// How `cohort bench` prints: a llama-bench-like table for people, one JSON object per line
// for scripts, and the roofline they are judged against. Pure formatting of measured
// numbers; nothing here measures.
#pragma once

#include <string>

#include "runtime/model_bench.h"
#include "runtime/roofline.h"

namespace cohort::runtime {

// printf into a string (up to 1023 characters), and the JSON string literal of s: the two
// pieces every bench report is printed with.
std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string json_string(const std::string& s);

// What one test achieved against the roofline of the threads it ran on (read_gbps_n and
// fma_gflops_n). Bandwidth counts weight bytes (ModelFacts::bytes_per_token) per token;
// FLOP counts 2 x params_per_token per token, and for a prompt test ("pp...") 2 x
// prompt_params_per_token: a prompt's tokens do not run the output projection, only its last
// does (that one token's FLOP are left out). Both are given for every test, though bandwidth
// is what bounds tg and FLOP/s what bounds pp.
struct BenchFigures {
  double gbps = 0;      // GB/s of weights (and, at depth, KV cache) read
  double bw_frac = 0;   // gbps / read_gbps_n
  double gflops = 0;    // GFLOP/s
  double fma_frac = 0;  // gflops / fma_gflops_n
  // With BenchResult::rep_read_before/_after (a bracketed tg test; else all 0): each
  // repetition's GB/s over the better of its two probes; the median of those fractions over
  // the steady repetitions (whose two probes are within kSteadyReads of each other: the
  // others met a change of memory speed and cannot be judged; over all of them when none is
  // steady), the median of their better probes, and how many were steady. On a host whose
  // memory speed moves, this is the fraction to read: bw_frac divides by a probe made
  // before the model was even loaded.
  double bw_frac_bracketed = 0;
  double read_gbps_bracketed = 0;
  int steady_reps = 0;
  // With BenchResult::token_s (a tg test with paired reads; else all 0): the median over
  // its tokens of each token's GB/s over the GB/s of the plain read of the same bytes made
  // just after it, the medians of the two GB/s themselves, and how many tokens. Each
  // token is judged against a read of its own size and milliseconds, so a memory speed that
  // moves within seconds moves both sides of a pair.
  double bw_frac_paired = 0;
  double token_gbps_paired = 0;
  double read_gbps_paired = 0;
  int paired_tokens = 0;
  // With BenchResult::rep_fma_gflops (a pp test with paired FMA runs; else all 0): the median
  // over its repetitions of each one's GFLOP/s over the GFLOP/s of the FMA run as long as it
  // made just after it, the median of those runs' GFLOP/s, and how many repetitions. A core
  // whose clock moves from minute to minute (a shared VM) moves both sides of a pair, where
  // fma_frac divides by the best ~20 ms run of a probe made before the tests (or after them).
  double fma_frac_paired = 0;
  double fma_gflops_paired = 0;
  int paired_reps = 0;
  // The same FLOP/s figures counting attention's FLOP too (BenchResult::attn_flop_per_token
  // beside the weights'): what a prompt at depth is judged by, since there attention is
  // most of its work. fma_frac_paired_with_attention is 0 without paired FMA runs.
  double gflops_with_attention = 0;
  double fma_frac_with_attention = 0;
  double fma_frac_paired_with_attention = 0;
  // From the pool's timing (BenchResult::pool_steps > 0; else all 0): fork-join steps per
  // token, and of the threads' time (wall x roof.threads) the fractions spent waiting at
  // joins for a step's slowest part, and waiting while the calling thread worked alone
  // between steps. What is left is the time the threads spent inside steps' work.
  double steps_per_token = 0;
  double join_wait_frac = 0;
  double alone_frac = 0;
};
// A bracketed repetition is steady when its slower probe read at least this fraction of its
// faster one.
inline constexpr double kSteadyReads = 0.85;
BenchFigures bench_figures(const ModelFacts& m, const BenchResult& r, const Roofline& roof);

std::string bench_table_header();
// One table row; the tg rows show bandwidth, the pp rows FLOP/s.
std::string bench_table_row(const ModelFacts& m, int threads, const BenchResult& r,
                            const Roofline& roof);
// One JSON object (no newline): model, type, isa, threads, test, n_tokens, tok_s, tok_s_sd,
// bytes, bytes_per_token, params, gbps, bw_frac, gflops, fma_frac, kv_type, kv_bytes_per_pos,
// probes (the table whose probes measured the roofline: roof.probes_isa, else roof.isa),
// rep_tok_s (an array), attn_flop_per_token, gflops_with_attention, fma_frac_with_attention; for a
// bracketed test also bw_frac_bracketed, read_gbps_bracketed, steady_reps, and rep_read_before and
// rep_read_after (arrays); for a paired one bw_frac_paired, token_gbps_paired, read_gbps_paired,
// paired_tokens, and token_s and pair_read_gbps (arrays, a value per timed token); for a pp test
// with paired FMA runs fma_frac_paired, fma_gflops_paired, fma_frac_paired_with_attention and
// rep_fma_gflops (an array); where the pool counted steps, steps_per_token, join_wait_frac and
// alone_frac.
std::string bench_json_line(const ModelFacts& m, int threads, const BenchResult& r,
                            const Roofline& roof);

// Where a test's thread time went, for people ("tg64: threads 97.2% in steps' work, 0.8%
// waiting at joins, 2.0% beside the calling thread alone; 82.0 steps a token"), or "" where
// the pool counted nothing (one thread).
std::string pool_time_text(const BenchResult& r, const Roofline& roof);

// A paired tg test's figures, for people ("tg64: tokens read 93% of a plain read of the same
// bytes just after each (median of 192 tokens: 29.1 against 31.3 GB/s)"), or "" for a test
// without paired reads.
std::string paired_reads_text(const BenchResult& r);

// A pp test's paired FMA figures, for people ("pp128: prompts ran 86% of the FMA rate of an FMA
// run as long as each just after it (median of 3: 390 against 452 GFLOP/s)"), or "" for a
// test without them. Its GFLOP/s is the test's mean (m's prompt FLOP).
std::string paired_fma_text(const ModelFacts& m, const BenchResult& r);

// A prompt test at depth, counting attention's FLOP beside the weights', for people
// ("pp128 @ d16384: with attention's 2.16 GFLOP a token beside the weights' 1.95, 359 GFLOP/s,
// 78% of FMA peak (paired 79%)": a 1B F16 model, stop 54), or "" for a tg test or one at depth 0
// (where attention's share is under 1%).
std::string attention_flop_text(const ModelFacts& m, const BenchResult& r, const Roofline& roof);

// A mixture-of-experts model's routing counts: per layer, for people, the spread of tokens
// over experts (min/mean/max, the busiest three, how many got none); for scripts, one JSON
// object per layer with test "expert_usage" and every expert's count.
std::string expert_usage_text(const model::ExpertUsage& u);
std::string expert_usage_json_lines(const model::ExpertUsage& u);

// Several lines for people, and one JSON object with test "roofline" (read_gbps_1/_n, the
// best passes, and fma_gflops_1/_n; then the read passes' spread: read_gbps_1_median,
// read_gbps_1_min, read_gbps_n_median, read_gbps_n_min, read_passes).
std::string roofline_text(const Roofline& roof);
std::string roofline_json_line(const Roofline& roof);

}  // namespace cohort::runtime
