// The bench library on stories260K (and a synthetic llama for the Q8_0 cache): model facts
// count what a token reads, the tests run and report positive speeds, and the report's
// derived figures and JSON are consistent.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/clock.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/synth.h"
#include "runtime/bench_report.h"
#include "runtime/model_bench.h"
#include "runtime/roofline.h"
#include "support/shared_data.h"
#include "support/temp_dir.h"

namespace cohort::runtime {
namespace {

const std::string kModel = testing::kSharedData + "/models/stories260K.gguf";

// A synthetic llama of these widths (synth's defaults otherwise), written to path and opened.
Result<format::GgufFile> synthetic_llama(const std::string& path, int64_t dim, int64_t heads,
                                         int64_t kv_heads, int64_t ffn) {
  model::SynthConfig c;
  c.dim = dim;
  c.n_heads = heads;
  c.n_kv_heads = kv_heads;
  c.ffn_dim = ffn;
  COHORT_RETURN_IF_ERROR(model::write_synthetic_model(c, path));
  return format::GgufFile::open(path);
}

TEST(ModelBench, FactsAndRunOnStories) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto file = format::GgufFile::open(kModel);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  const ModelFacts f = model_facts(*file);
  EXPECT_EQ(f.name, "stories260K.gguf");
  EXPECT_EQ(f.type, "f32");
  uint64_t total = 0;
  for (const auto& t : file->tensors()) total += t.bytes;
  EXPECT_EQ(f.model_bytes, total);
  // A token reads every tensor but the embedding table, unless that is also the output.
  const auto* embd = file->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  const bool tied = file->find_tensor("output.weight") == nullptr;
  EXPECT_EQ(f.bytes_per_token, tied ? total : total - embd->bytes);
  EXPECT_GT(f.params_per_token, 0u);
  EXPECT_LE(f.params_per_token * 4, f.bytes_per_token);  // f32: 4 bytes per parameter
  // A prompt token multiplies everything but the output projection (the embedding table
  // when tied): vocabulary x dim fewer.
  const auto* out = tied ? embd : file->find_tensor("output.weight");
  EXPECT_EQ(f.prompt_params_per_token, f.params_per_token - out->n_elements());

  ThreadPool pool(2);
  BenchOptions o;
  o.n_prompt = 7;
  o.n_gen = 3;
  o.reps = 2;
  auto results = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].test, "pp7");
  EXPECT_EQ((*results)[1].test, "tg3");
  for (const BenchResult& r : *results) {
    EXPECT_GT(r.tok_s, 0.0) << r.test;
    EXPECT_GE(r.tok_s_sd, 0.0) << r.test;
  }
}

// At depth the tests start after that many cached positions and count the cache bytes a
// token reads: depth x the bytes of one position (every layer's key and value), plus half
// the test's own tokens on average.
TEST(ModelBench, DepthRunsAfterFilledPositions) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto file = format::GgufFile::open(kModel);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  ThreadPool pool(2);
  BenchOptions o;
  o.n_prompt = 8;
  o.n_gen = 4;
  o.reps = 1;
  o.depth = 100;
  auto results = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  ASSERT_EQ(results->size(), 2u);
  const BenchResult& pp = (*results)[0];
  const BenchResult& tg = (*results)[1];
  EXPECT_EQ(pp.test, "pp8 @ d100");
  EXPECT_EQ(tg.test, "tg4 @ d100");
  EXPECT_EQ(pp.depth, 100);
  EXPECT_GT(pp.tok_s, 0.0);
  EXPECT_GT(tg.tok_s, 0.0);
  // stories260K: 5 layers, 4 KV heads of 8 dims, F16 keys and values: 5 x 2 x 32 x 2 bytes.
  const double per_pos = 5 * 2 * 32 * 2;
  EXPECT_NEAR(static_cast<double>(pp.kv_bytes_per_token), per_pos * (100 + 4.5), 1.0);
  EXPECT_NEAR(static_cast<double>(tg.kv_bytes_per_token), per_pos * (104 + 2.5), 1.0);
  EXPECT_EQ(pp.kv_type, "f16");
  EXPECT_EQ(pp.kv_bytes_per_pos, per_pos);
  // Attention's FLOP over the same positions: 5 layers x 8 heads x 2 x (8 key + 8 value dims).
  const double flop_per_pos = 5 * 8 * 2 * (8 + 8);
  EXPECT_DOUBLE_EQ(pp.attn_flop_per_token, flop_per_pos * (100 + 4.5));
  EXPECT_DOUBLE_EQ(tg.attn_flop_per_token, flop_per_pos * (104 + 2.5));

  // Depth 0 names the tests as before, and a token then reads only the test's own positions.
  o.depth = 0;
  auto plain = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(plain.is_ok());
  EXPECT_EQ((*plain)[0].test, "pp8");
  EXPECT_LT((*plain)[0].kv_bytes_per_token, pp.kv_bytes_per_token);
}

// --kv-type q8_0: the cache holds 34 bytes per 32 values, and the bytes a token reads at
// depth shrink with it (a synthetic llama with heads of 32 dims: stories260K's 8 are too
// few for a Q8_0 block).
TEST(ModelBench, Q8CacheReadsItsOwnBytes) {
  testing::TempDir dir;
  auto file = synthetic_llama(dir.file("m.gguf"), 128, 4, 2, 256);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  ThreadPool pool(2);
  BenchOptions o;
  o.n_prompt = 4;
  o.n_gen = 2;
  o.reps = 1;
  o.depth = 64;
  o.kv_type = DType::kQ8_0;
  auto results = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  const BenchResult& pp = (*results)[0];
  EXPECT_EQ(pp.kv_type, "q8_0");
  // 2 layers x keys and values x 2 KV heads x one block of 34 bytes.
  const double per_pos = 2 * 2 * 2 * 34;
  EXPECT_EQ(pp.kv_bytes_per_pos, per_pos);
  EXPECT_NEAR(static_cast<double>(pp.kv_bytes_per_token), per_pos * (64 + 2.5), 1.0);
  EXPECT_GT(pp.tok_s, 0.0);
}

// The pool's timing covers the timed repetitions only: their wall time is the tokens over
// the tok/s, the steps ran inside it, and no thread waited longer than the steps lasted (a
// synthetic llama whose matrices are large enough to run on both threads).
TEST(ModelBench, PoolTimingCoversTheTimedRepetitions) {
  testing::TempDir dir;
  auto file = synthetic_llama(dir.file("m.gguf"), 512, 8, 4, 1024);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  ThreadPool pool(2);
  BenchOptions o;
  o.n_prompt = 6;
  o.n_gen = 4;
  o.reps = 2;
  auto results = run_model_bench(*file, kernels::best(), pool, 8, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  for (const BenchResult& r : *results) {
    double wall = 0;
    for (double v : r.rep_tok_s) wall += static_cast<double>(r.n_tokens) / v;
    EXPECT_NEAR(r.wall_s, wall, 1e-3 * wall) << r.test;
    EXPECT_GT(r.pool_steps, 0) << r.test;
    EXPECT_GT(r.step_s, 0.0) << r.test;
    EXPECT_LE(r.step_s, r.wall_s) << r.test;
    EXPECT_GE(r.join_wait_s, 0.0) << r.test;
    EXPECT_LE(r.join_wait_s, 2 * r.step_s) << r.test;
    EXPECT_FALSE(pool_time_text(r, Roofline{.threads = 2}).empty()) << r.test;
  }
  // Timing is off again once the bench is done.
  pool.run([](int, int) {});
  EXPECT_EQ(pool.timing().steps, 0);
}

// The pool's timing as fractions of the threads' time: 2 threads for 2 s of wall are 4
// thread-seconds; 0.2 s waiting at joins is 5%, 0.4 s of wall outside steps leaves the
// second thread waiting 0.4 s, 10%.
TEST(BenchReport, PoolTimeIsAFractionOfTheThreadsTime) {
  BenchResult r;
  r.test = "tg8";
  r.n_tokens = 8;
  r.rep_tok_s = {8.0, 8.0};
  r.tok_s = 8.0;
  r.wall_s = 2.0;
  r.pool_steps = 160;
  r.step_s = 1.6;
  r.join_wait_s = 0.2;
  Roofline roof;
  roof.threads = 2;
  const BenchFigures f = bench_figures(ModelFacts{}, r, roof);
  EXPECT_DOUBLE_EQ(f.steps_per_token, 10.0);
  EXPECT_DOUBLE_EQ(f.join_wait_frac, 0.05);
  EXPECT_DOUBLE_EQ(f.alone_frac, 0.1);
  EXPECT_EQ(pool_time_text(r, roof),
            "tg8: threads 85.0% in steps' work, 5.0% waiting at joins, 10.0% beside the calling "
            "thread alone; 10.0 steps a token\n");
  const nlohmann::json j = nlohmann::json::parse(bench_json_line(ModelFacts{}, 2, r, roof));
  EXPECT_DOUBLE_EQ(j.at("join_wait_frac").get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(j.at("alone_frac").get<double>(), 0.1);
  // Nothing counted (one thread): no figures, no line, no JSON fields.
  r.pool_steps = 0;
  EXPECT_EQ(pool_time_text(r, roof), "");
  EXPECT_FALSE(
      nlohmann::json::parse(bench_json_line(ModelFacts{}, 2, r, roof)).contains("join_wait_frac"));
}

TEST(BenchReport, FiguresAndJsonAgree) {
  ModelFacts m;
  m.name = "a \"quoted\" name.gguf";
  m.type = "q4_0";
  m.model_bytes = 1000;
  m.bytes_per_token = 800;
  m.params_per_token = 500;
  BenchResult r;
  r.test = "tg64";
  r.n_tokens = 64;
  r.tok_s = 1e6;
  r.tok_s_sd = 2.5;
  Roofline roof;
  roof.threads = 2;
  roof.read_gbps_n = 1.6;
  roof.fma_gflops_n = 4.0;
  const BenchFigures f = bench_figures(m, r, roof);
  EXPECT_DOUBLE_EQ(f.gbps, 0.8);       // 800 B x 1e6 tok/s
  EXPECT_DOUBLE_EQ(f.bw_frac, 0.5);    // of 1.6 GB/s
  EXPECT_DOUBLE_EQ(f.gflops, 1.0);     // 2 x 500 x 1e6
  EXPECT_DOUBLE_EQ(f.fma_frac, 0.25);  // of 4 GFLOP/s
  // A prompt test counts the prompt's parameters (no output projection per token).
  m.prompt_params_per_token = 400;
  BenchResult pp = r;
  pp.test = "pp128";
  EXPECT_DOUBLE_EQ(bench_figures(m, pp, roof).gflops, 0.8);  // 2 x 400 x 1e6
  EXPECT_DOUBLE_EQ(bench_figures(m, r, roof).gflops, 1.0);   // tg still counts all 500
  const auto j = nlohmann::json::parse(bench_json_line(m, 2, r, roof), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j["model"], m.name);
  EXPECT_EQ(j["type"], "q4_0");
  EXPECT_EQ(j["test"], "tg64");
  EXPECT_EQ(j["threads"], 2);
  EXPECT_EQ(j["bytes"], 1000);
  EXPECT_DOUBLE_EQ(j["tok_s"].get<double>(), 1e6);
  EXPECT_DOUBLE_EQ(j["bw_frac"].get<double>(), 0.5);
  EXPECT_EQ(j["isa"], "ref");
  EXPECT_EQ(j["probes"], "ref");  // no other table's probes: the kernels'
  Roofline judged = roof;
  judged.isa = "avx2";
  judged.probes_isa = "avx512_vnni";
  const auto jj = nlohmann::json::parse(bench_json_line(m, 2, r, judged), nullptr, false);
  EXPECT_EQ(jj["isa"], "avx2");
  EXPECT_EQ(jj["probes"], "avx512_vnni");
  const auto rj = nlohmann::json::parse(roofline_json_line(roof), nullptr, false);
  ASSERT_TRUE(rj.is_object());
  EXPECT_EQ(rj["test"], "roofline");
  EXPECT_DOUBLE_EQ(rj["read_gbps_n"].get<double>(), 1.6);
  roof.read_gbps_n_median = 1.5;
  roof.read_gbps_n_min = 1.3;
  roof.read_passes = 24;
  const auto rs = nlohmann::json::parse(roofline_json_line(roof), nullptr, false);
  EXPECT_DOUBLE_EQ(rs["read_gbps_n"].get<double>(), 1.6);  // the best, as before
  EXPECT_DOUBLE_EQ(rs["read_gbps_n_median"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(rs["read_gbps_n_min"].get<double>(), 1.3);
  EXPECT_EQ(rs["read_passes"], 24);
  EXPECT_NE(roofline_text(roof).find("median 1.5, slowest 1.3"), std::string::npos)
      << roofline_text(roof);
  EXPECT_NE(bench_table_row(m, 2, r, roof).find("50%"), std::string::npos);

  // At depth, the cache bytes a token reads count towards its bandwidth.
  r.kv_bytes_per_token = 800;
  r.depth = 4096;
  EXPECT_DOUBLE_EQ(bench_figures(m, r, roof).gbps, 1.6);
  const auto jd = nlohmann::json::parse(bench_json_line(m, 2, r, roof), nullptr, false);
  EXPECT_EQ(jd["depth"], 4096);
  EXPECT_EQ(jd["kv_bytes_per_token"], 800);
  r.kv_type = "q8_0";
  r.kv_bytes_per_pos = 1088;
  const auto jq = nlohmann::json::parse(bench_json_line(m, 2, r, roof), nullptr, false);
  EXPECT_EQ(jq["kv_type"], "q8_0");
  EXPECT_EQ(jq["kv_bytes_per_pos"], 1088);
}

// A bracketed tg test's fraction is the median, over the repetitions whose probes before and
// after agree (steady), of each one's GB/s over the better of those probes: not the mean
// speed over the roofline measured beforehand. Without bracketing it is absent; with no
// steady repetition it is taken over all. Many repetitions do not cut the JSON line short.
TEST(BenchReport, BracketedFractionIsTheMedianOfEachSteadyRepetitionsOwn) {
  ModelFacts m;
  m.name = "m.gguf";
  m.type = "q4_0";
  m.bytes_per_token = 1000;
  BenchResult r;
  r.test = "tg64";
  r.tok_s = 2e6;
  r.rep_tok_s = {1e6, 2e6, 3e6, 1e6};  // 1, 2, 3 and 1 GB/s
  Roofline roof;
  roof.read_gbps_n = 4.0;
  EXPECT_DOUBLE_EQ(bench_figures(m, r, roof).bw_frac_bracketed, 0.0);
  EXPECT_TRUE(nlohmann::json::parse(bench_json_line(m, 2, r, roof))["bw_frac_bracketed"].is_null());
  // Fractions 0.5, 0.8 (the better probe, after), 1.0; the fourth met a change of speed
  // (1.0 then 4.0 GB/s) and is not judged.
  r.rep_read_before = {2.0, 2.2, 2.9, 1.0};
  r.rep_read_after = {1.9, 2.5, 3.0, 4.0};
  const BenchFigures f = bench_figures(m, r, roof);
  EXPECT_DOUBLE_EQ(f.bw_frac, 0.5);  // 2 GB/s of 4
  EXPECT_DOUBLE_EQ(f.bw_frac_bracketed, 0.8);
  EXPECT_DOUBLE_EQ(f.read_gbps_bracketed, 2.5);
  EXPECT_EQ(f.steady_reps, 3);
  const auto j = nlohmann::json::parse(bench_json_line(m, 2, r, roof), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_DOUBLE_EQ(j["bw_frac_bracketed"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["read_gbps_bracketed"].get<double>(), 2.5);
  EXPECT_EQ(j["steady_reps"], 3);
  EXPECT_EQ(j["rep_read_before"].size(), 4u);
  EXPECT_DOUBLE_EQ(j["rep_read_after"][3].get<double>(), 4.0);
  EXPECT_DOUBLE_EQ(j["rep_tok_s"][2].get<double>(), 3e6);
  EXPECT_NE(bench_table_row(m, 2, r, roof).find("( 80% of   2.5, 3/4)"), std::string::npos)
      << bench_table_row(m, 2, r, roof);
  // No steady repetition: all of them (fractions 0.5, 0.4, 1.0, 0.25; median 0.45).
  r.rep_read_before = {1.0, 5.0, 3.0, 1.0};
  r.rep_read_after = {2.0, 2.0, 1.0, 4.0};
  EXPECT_DOUBLE_EQ(bench_figures(m, r, roof).bw_frac_bracketed, 0.45);
  EXPECT_EQ(bench_figures(m, r, roof).steady_reps, 0);
  r.rep_tok_s.assign(1000, 1e6);
  r.rep_read_before.assign(1000, 2.0);
  r.rep_read_after.assign(1000, 2.0);
  const auto big = nlohmann::json::parse(bench_json_line(m, 2, r, roof), nullptr, false);
  ASSERT_TRUE(big.is_object());
  EXPECT_EQ(big["rep_read_after"].size(), 1000u);
  EXPECT_DOUBLE_EQ(big["bw_frac_bracketed"].get<double>(), 0.5);
}

// A 5-token prompt test and a 3-token generation test, bracketed by probe.
BenchOptions small_bracketed(ReadProbe& probe, int reps, int passes) {
  BenchOptions o;
  o.n_prompt = 5;
  o.n_gen = 3;
  o.reps = reps;
  o.bracket = &probe;
  o.bracket_passes = passes;
  return o;
}

// With a probe to bracket them, each tg repetition gets the read speed measured around it
// (a positive GB/s); a pp test gets none.
TEST(ModelBench, BracketedGenerationReadsAroundEachRepetition) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto file = format::GgufFile::open(kModel);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  ThreadPool pool(2);
  ReadProbe probe(kernels::best(), pool, /*windows=*/1);  // 64 MiB: small under sanitizers
  const BenchOptions o = small_bracketed(probe, /*reps=*/3, /*passes=*/2);
  auto results = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_TRUE((*results)[0].rep_read_before.empty());
  EXPECT_EQ((*results)[0].rep_tok_s.size(), 3u);
  const BenchResult& tg = (*results)[1];
  ASSERT_EQ(tg.rep_tok_s.size(), 3u);
  ASSERT_EQ(tg.rep_read_before.size(), 3u);
  ASSERT_EQ(tg.rep_read_after.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_GT(tg.rep_read_before[i], 0.0);
    EXPECT_GT(tg.rep_read_after[i], 0.0);
  }
  // One probe between two repetitions: after the first, before the second.
  EXPECT_DOUBLE_EQ(tg.rep_read_after[0], tg.rep_read_before[1]);
}

// A paired tg test's fraction is the median over its tokens of each token's GB/s over the
// read just after it: not the ratio of the medians, and not the mean speed over the roofline.
// Without paired reads it is absent.
TEST(BenchReport, PairedFractionIsTheMedianOfEachTokensOwn) {
  BenchResult r;
  r.test = "tg3";
  r.rep_tok_s = {1.0};
  Roofline roof;
  roof.read_gbps_n = 100.0;
  EXPECT_EQ(bench_figures(ModelFacts{}, r, roof).paired_tokens, 0);
  EXPECT_EQ(paired_reads_text(r), "");
  EXPECT_TRUE(
      nlohmann::json::parse(bench_json_line(ModelFacts{}, 2, r, roof))["bw_frac_paired"].is_null());
  // Tokens of 1 GB in 0.1, 0.05 and 0.5 s: 10, 20 and 2 GB/s, against reads of 40, 25 and 4:
  // fractions 0.25, 0.8 and 0.5 (median 0.5; the ratio of the medians would be 10 / 25).
  r.token_bytes = {1000000000, 1000000000, 1000000000};
  r.token_s = {0.1, 0.05, 0.5};
  r.pair_read_gbps = {40.0, 25.0, 4.0};
  const BenchFigures f = bench_figures(ModelFacts{}, r, roof);
  EXPECT_EQ(f.paired_tokens, 3);
  EXPECT_DOUBLE_EQ(f.bw_frac_paired, 0.5);
  EXPECT_DOUBLE_EQ(f.token_gbps_paired, 10.0);
  EXPECT_DOUBLE_EQ(f.read_gbps_paired, 25.0);
  EXPECT_EQ(paired_reads_text(r),
            "tg3: tokens read 50% of a plain read of the same bytes just after each (median of 3 "
            "tokens: 10.0 against 25.0 GB/s)\n");
  const auto j = nlohmann::json::parse(bench_json_line(ModelFacts{}, 2, r, roof), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_DOUBLE_EQ(j["bw_frac_paired"].get<double>(), 0.5);
  EXPECT_EQ(j["paired_tokens"], 3);
  EXPECT_EQ(j["token_s"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["pair_read_gbps"][2].get<double>(), 4.0);
}

// With paired reads every timed token of the tg test gets its seconds, its bytes (the
// weights, and the cache it attends) and a read of those bytes; the repetition's tok/s counts
// the tokens' own time. A pp test gets none, and without pair_tokens a tg test neither.
TEST(ModelBench, PairedGenerationReadsAfterEachToken) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto file = format::GgufFile::open(kModel);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  ThreadPool pool(2);
  ReadProbe probe(kernels::best(), pool, /*windows=*/1);
  BenchOptions o = small_bracketed(probe, /*reps=*/2, /*passes=*/1);
  auto plain = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_TRUE((*plain)[1].token_s.empty());
  o.pair_tokens = true;
  auto results = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_TRUE((*results)[0].token_s.empty());
  const BenchResult& tg = (*results)[1];
  ASSERT_EQ(tg.token_s.size(), 6u);  // 3 tokens x 2 timed repetitions
  ASSERT_EQ(tg.pair_read_gbps.size(), 6u);
  ASSERT_EQ(tg.token_bytes.size(), 6u);
  const uint64_t weights = model_facts(*file).bytes_per_token;
  double rep0_s = 0;
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_GT(tg.token_s[i], 0.0);
    EXPECT_GT(tg.pair_read_gbps[i], 0.0);
    EXPECT_GT(tg.token_bytes[i], weights);  // and the cache it attends
    if (i > 0 && i != 3) {
      EXPECT_GT(tg.token_bytes[i], tg.token_bytes[i - 1]);  // one more position
    }
    if (i < 3) rep0_s += tg.token_s[i];
  }
  EXPECT_EQ(tg.token_bytes[0], tg.token_bytes[3]);  // each repetition from the same position
  EXPECT_NEAR(tg.rep_tok_s[0], 3.0 / rep0_s, 1e-9 * tg.rep_tok_s[0]);
}

// A pp test's paired FMA fraction is the median over its repetitions of each one's GFLOP/s
// (2 x the prompt's parameters x its tok/s) over the FMA run just after it; absent without
// those runs.
TEST(BenchReport, PairedFmaFractionIsTheMedianOfEachRepetitionsOwn) {
  BenchResult r;
  r.test = "pp8";
  r.rep_tok_s = {10.0, 20.0, 40.0};
  r.tok_s = 70.0 / 3;
  ModelFacts m;
  m.params_per_token = 1000000000;
  m.prompt_params_per_token = 500000000;  // 1 GFLOP a prompt token
  Roofline roof;
  roof.fma_gflops_n = 100.0;
  EXPECT_EQ(bench_figures(m, r, roof).paired_reps, 0);
  EXPECT_EQ(paired_fma_text(m, r), "");
  EXPECT_TRUE(nlohmann::json::parse(bench_json_line(m, 2, r, roof))["fma_frac_paired"].is_null());
  // 10, 20 and 40 GFLOP/s against FMA runs of 50, 25 and 50: 0.2, 0.8, 0.8 (median 0.8; the
  // ratio of the medians would be 20 / 50).
  r.rep_fma_gflops = {50.0, 25.0, 50.0};
  const BenchFigures f = bench_figures(m, r, roof);
  EXPECT_EQ(f.paired_reps, 3);
  EXPECT_DOUBLE_EQ(f.fma_frac_paired, 0.8);
  EXPECT_DOUBLE_EQ(f.fma_gflops_paired, 50.0);
  EXPECT_NEAR(f.fma_frac, 0.7 / 3, 1e-12);  // the mean rate over the probe, as before
  EXPECT_EQ(paired_fma_text(m, r),
            "pp8: prompts ran 80% of the FMA rate of an FMA run as long as each just after it "
            "(median of 3: 23 against 50 GFLOP/s)\n");
  const auto j = nlohmann::json::parse(bench_json_line(m, 2, r, roof), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_DOUBLE_EQ(j["fma_frac_paired"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(j["fma_gflops_paired"].get<double>(), 50.0);
  EXPECT_EQ(j["rep_fma_gflops"].size(), 3u);
}

// At depth a prompt's figures also count attention's FLOP beside the weights' (and paired, over
// each repetition's FMA run); at depth 0 and for tg tests the text says nothing.
TEST(BenchReport, PromptAtDepthCountsAttentionFlop) {
  BenchResult r;
  r.test = "pp8 @ d4096";
  r.depth = 4096;
  r.rep_tok_s = {10.0, 30.0};
  r.tok_s = 20.0;
  r.attn_flop_per_token = 1.5e9;
  ModelFacts m;
  m.params_per_token = 1000000000;
  m.prompt_params_per_token = 500000000;  // 1 GFLOP a prompt token, 2.5 with attention
  Roofline roof;
  roof.fma_gflops_n = 100.0;
  BenchFigures f = bench_figures(m, r, roof);
  EXPECT_DOUBLE_EQ(f.gflops, 20.0);
  EXPECT_DOUBLE_EQ(f.gflops_with_attention, 50.0);
  EXPECT_DOUBLE_EQ(f.fma_frac_with_attention, 0.5);
  EXPECT_EQ(f.fma_frac_paired_with_attention, 0.0);
  EXPECT_EQ(attention_flop_text(m, r, roof),
            "pp8 @ d4096: with attention's 1.50 GFLOP a token beside the weights' 1.00, 50 "
            "GFLOP/s, 50% of FMA peak\n");
  // 25 and 75 GFLOP/s with attention against FMA runs of 50 and 100: 0.5 and 0.75.
  r.rep_fma_gflops = {50.0, 100.0};
  f = bench_figures(m, r, roof);
  EXPECT_DOUBLE_EQ(f.fma_frac_paired_with_attention, 0.625);
  EXPECT_EQ(attention_flop_text(m, r, roof),
            "pp8 @ d4096: with attention's 1.50 GFLOP a token beside the weights' 1.00, 50 "
            "GFLOP/s, 50% of FMA peak (paired 62%)\n");
  const auto j = nlohmann::json::parse(bench_json_line(m, 2, r, roof), nullptr, false);
  ASSERT_TRUE(j.is_object());
  EXPECT_DOUBLE_EQ(j["attn_flop_per_token"].get<double>(), 1.5e9);
  EXPECT_DOUBLE_EQ(j["gflops_with_attention"].get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(j["fma_frac_with_attention"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(j["fma_frac_paired_with_attention"].get<double>(), 0.625);
  r.depth = 0;
  r.test = "pp8";
  EXPECT_EQ(attention_flop_text(m, r, roof), "");
  r.depth = 4096;
  r.test = "tg8 @ d4096";
  EXPECT_EQ(attention_flop_text(m, r, roof), "");
}

// The FMA rate over a span runs for at least that span, on one thread or several. (Not how it
// compares between them: ctest runs two tests at once on a 2-core CI machine.)
TEST(Roofline, FmaOverASpanRunsAtLeastThatLong) {
  for (const int threads : {1, 2}) {
    ThreadPool pool(threads);
    const double t0 = now_s();
    EXPECT_GT(fma_gflops_over(kernels::best(), pool, 0.05), 0.0) << threads;
    EXPECT_GE(now_s() - t0, 0.05) << threads;
  }
}

// With pair_fma every timed repetition of the pp test gets the FMA rate of a run as long as it,
// made just after it; the tg test gets none, and without pair_fma the pp test neither.
TEST(ModelBench, PairedPromptsRunFmaAfterEachRepetition) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto file = format::GgufFile::open(kModel);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  ThreadPool pool(2);
  BenchOptions o;
  o.n_prompt = 8;
  o.n_gen = 2;
  o.reps = 2;
  auto plain = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(plain.is_ok()) << plain.status().message();
  EXPECT_TRUE((*plain)[0].rep_fma_gflops.empty());
  o.pair_fma = &kernels::best();
  auto results = run_model_bench(*file, kernels::best(), pool, 4, o);
  ASSERT_TRUE(results.is_ok()) << results.status().message();
  ASSERT_EQ(results->size(), 2u);
  const BenchResult& pp = (*results)[0];
  ASSERT_EQ(pp.rep_fma_gflops.size(), 2u);
  for (double g : pp.rep_fma_gflops) EXPECT_GT(g, 0.0);
  EXPECT_TRUE((*results)[1].rep_fma_gflops.empty());
}

// The expert-usage table names a layer no token was routed to (a dense layer) as such,
// and gives the others' spread and busiest experts.
TEST(BenchReport, ExpertUsageTextNamesDenseLayers) {
  model::ExpertUsage u;
  u.layer_begin = 0;
  u.n_layers = 2;
  u.n_expert = 4;
  u.tokens = {0, 0, 0, 0, 5, 0, 9, 2};
  const std::string text = expert_usage_text(u);
  EXPECT_NE(text.find("layer   0: no token routed (a dense layer)"), std::string::npos) << text;
  EXPECT_NE(text.find("layer   1: min 0 mean 4.0 max 9; unused 1; busiest #2 (9) #0 (5) #3 (2)"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace cohort::runtime
