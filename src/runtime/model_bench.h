// The speed of one model on this node, as `cohort bench` measures it (llama-bench's tests):
//   pp<N>: prompt processing, one prompt of N tokens from an empty cache, fed in forward
//          steps of the model's batch size; tok/s = N / time.
//   tg<N>: token generation, N single-token steps after a short untimed prompt; tok/s =
//          N / time.
// With a depth D > 0 (llama-bench's -d), both run after D positions already in the cache
// ("pp128 @ d4096"): attention then reads D more keys and values per token, which is what
// long contexts cost. The D positions are filled with pseudo-random keys and values rather
// than by a D-token prefill (16k tokens of prefill would take minutes): attention's work
// does not depend on the values.
// Each test runs once to warm up, then `reps` timed times; the result is the mean and the
// sample standard deviation of the per-repetition tok/s.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/moe_ffn.h"
#include "runtime/roofline.h"

namespace cohort::runtime {

struct ModelFacts {
  std::string name;               // file name without folders
  std::string type;               // the weight type holding most matrix bytes ("q4_0")
  uint64_t model_bytes = 0;       // every tensor in the file
  uint64_t bytes_per_token = 0;   // weights one token's forward reads: all tensors but the
                                  // embedding table (one row of it), which counts whole when
                                  // it is also the output projection, and of a mixture of
                                  // experts only the experts a token is routed to
                                  // (n_expert_used of n_expert: the active parameters)
  uint64_t params_per_token = 0;  // matrix elements multiplied per token, same rule: a
                                  // forward costs 2 x params_per_token FLOP (attention aside)
  uint64_t prompt_params_per_token = 0;  // the same less the output projection, which a
                                         // prompt runs for its last token only
};

ModelFacts model_facts(const format::GgufFile& file);

struct BenchOptions {
  int64_t n_prompt = 128;       // pp test length; 0 skips it
  int64_t n_gen = 64;           // tg test length; 0 skips it
  int reps = 3;                 // timed repetitions, >= 1
  int64_t depth = 0;            // cache positions filled before each test
  DType kv_type = DType::kF16;  // the cache's element type (f16, f32 or q8_0)
  // Optional: reads `bracket_passes` passes of this probe before the tg test's first timed
  // repetition and after each, so that each repetition has the memory speed of its own
  // minutes (BenchResult::rep_read_before, rep_read_after).
  ReadProbe* bracket = nullptr;
  int bracket_passes = 16;
  // With bracket, also a paired read after each timed token of the tg test: the probe reads
  // as many bytes as the token did (ReadProbe::gbps_of_bytes), right after it on the same
  // threads, so that every token has a plain read of its size made within milliseconds of it
  // (BenchResult::token_s, pair_read_gbps). The repetition's tok/s then counts the tokens'
  // own time only. About doubles the tg test's time.
  bool pair_tokens = false;
  // Optional: after each timed repetition of the pp test, this table's FMA chains run on every
  // thread of the pool for as long as the repetition took (fma_gflops_over), so that each
  // repetition has the FMA rate of its own seconds (BenchResult::rep_fma_gflops).
  const kernels::KernelTable* pair_fma = nullptr;
};

// Positions of the untimed prompt before a tg test.
inline constexpr int64_t kGenPromptTokens = 4;

struct BenchResult {
  std::string test;  // "pp128", "tg64", "tg64 @ d4096"
  int64_t n_tokens = 0;
  int64_t depth = 0;
  // KV cache bytes one token of the test reads on average (keys and values of every
  // position it attends, all layers): at depth, part of the bandwidth a token needs.
  uint64_t kv_bytes_per_token = 0;
  std::string kv_type;            // the cache's element type ("f16", "q8_0")
  uint64_t kv_bytes_per_pos = 0;  // cache bytes of one position (keys and values, all layers)
  // Attention's FLOP one token of the test costs on average, all layers: 2 x n_heads x
  // (key length + value length) per position it attends (scores and the weighted sum of
  // values; the softmax's few operations a score left out). Beside the weights' 2 x params,
  // which is all the FLOP/s figures count; at depth it is most of a prompt's work.
  double attn_flop_per_token = 0;
  double tok_s = 0;               // mean over repetitions
  double tok_s_sd = 0;            // sample standard deviation (0 for one repetition)
  std::vector<double> rep_tok_s;  // each timed repetition's tok/s
  // With BenchOptions::bracket, for a tg test: per repetition, the probe's best pass (GB/s)
  // just before it and just after it; else empty.
  std::vector<double> rep_read_before, rep_read_after;
  // With BenchOptions::pair_tokens, for a tg test: every timed token's seconds, and the GB/s
  // of the plain read of the same bytes just after it (token_bytes each); else empty.
  std::vector<double> token_s, pair_read_gbps;
  std::vector<uint64_t> token_bytes;
  // With BenchOptions::pair_fma, for a pp test: per repetition, the GFLOP/s of the FMA run as
  // long as it just after it; else empty.
  std::vector<double> rep_fma_gflops;
  // Where the pool's threads spent the timed repetitions (ThreadPool::Timing, summed over
  // them; the pool counts nothing on one thread): the repetitions' wall time, the fork-join
  // steps run, the wall time inside steps (the rest the calling thread worked alone) and the
  // threads' time waiting at joins for a step's slowest part.
  double wall_s = 0;
  int64_t pool_steps = 0;
  double step_s = 0;
  double join_wait_s = 0;
};

// Builds the whole model of file on this node (kernel table kt, every thread of pool,
// prompt steps of at most batch tokens, a cache of o.kv_type just long enough for the tests
// and the depth), then
// runs the pp test and the tg test. Token ids are fixed pseudo-random ids of the
// vocabulary. Errors: the model cannot be built, or a forward step fails. usage, when given,
// receives a mixture-of-experts model's routing counts over all tests (left empty for a
// dense model).
Result<std::vector<BenchResult>> run_model_bench(const format::GgufFile& file,
                                                 const kernels::KernelTable& kt, ThreadPool& pool,
                                                 int64_t batch, const BenchOptions& o,
                                                 model::ExpertUsage* usage = nullptr);

}  // namespace cohort::runtime
