#include "runtime/bench_report.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "core/stats.h"

namespace cohort::runtime {

std::string format(const char* fmt, ...) {
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof(buf), fmt, ap);
  va_end(ap);
  return buf;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += format("\\u%04x", static_cast<unsigned>(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

namespace {

double ratio(double a, double b) { return b > 0 ? a / b : 0; }

// "[a,b,c]" of v.
std::string json_array(const std::vector<double>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += format("%s%.6g", i ? "," : "", v[i]);
  return s + "]";
}

}  // namespace

BenchFigures bench_figures(const ModelFacts& m, const BenchResult& r, const Roofline& roof) {
  BenchFigures f;
  f.gbps = static_cast<double>(m.bytes_per_token + r.kv_bytes_per_token) * r.tok_s / 1e9;
  f.bw_frac = ratio(f.gbps, roof.read_gbps_n);
  const bool prompt = r.test.starts_with("pp");
  const uint64_t params = prompt ? m.prompt_params_per_token : m.params_per_token;
  f.gflops = 2.0 * static_cast<double>(params) * r.tok_s / 1e9;
  f.fma_frac = ratio(f.gflops, roof.fma_gflops_n);
  const double flop_per_token = 2.0 * static_cast<double>(params) + r.attn_flop_per_token;
  f.gflops_with_attention = flop_per_token * r.tok_s / 1e9;
  f.fma_frac_with_attention = ratio(f.gflops_with_attention, roof.fma_gflops_n);
  if (r.pool_steps > 0 && r.wall_s > 0 && roof.threads > 1) {
    const double thread_s = r.wall_s * roof.threads;
    f.steps_per_token = static_cast<double>(r.pool_steps) /
                        (static_cast<double>(r.n_tokens) * static_cast<double>(r.rep_tok_s.size()));
    f.join_wait_frac = r.join_wait_s / thread_s;
    f.alone_frac = std::max(0.0, r.wall_s - r.step_s) * (roof.threads - 1) / thread_s;
  }
  const size_t reps = r.rep_tok_s.size();
  if (reps > 0 && r.rep_read_before.size() == reps && r.rep_read_after.size() == reps) {
    const double bytes = static_cast<double>(m.bytes_per_token + r.kv_bytes_per_token);
    std::vector<double> fracs, reads, all_fracs, all_reads;
    for (size_t i = 0; i < reps; ++i) {
      const double lo = std::min(r.rep_read_before[i], r.rep_read_after[i]);
      const double hi = std::max(r.rep_read_before[i], r.rep_read_after[i]);
      const double frac = ratio(bytes * r.rep_tok_s[i] / 1e9, hi);
      all_fracs.push_back(frac);
      all_reads.push_back(hi);
      if (lo >= kSteadyReads * hi) {
        fracs.push_back(frac);
        reads.push_back(hi);
      }
    }
    f.steady_reps = static_cast<int>(fracs.size());
    f.bw_frac_bracketed = median(fracs.empty() ? all_fracs : fracs);
    f.read_gbps_bracketed = median(reads.empty() ? all_reads : reads);
  }
  const size_t tokens = r.token_s.size();
  if (tokens > 0 && r.pair_read_gbps.size() == tokens && r.token_bytes.size() == tokens) {
    std::vector<double> fracs, token_gbps;
    for (size_t i = 0; i < tokens; ++i) {
      const double gbps = ratio(static_cast<double>(r.token_bytes[i]) / 1e9, r.token_s[i]);
      token_gbps.push_back(gbps);
      fracs.push_back(ratio(gbps, r.pair_read_gbps[i]));
    }
    f.bw_frac_paired = median(fracs);
    f.token_gbps_paired = median(token_gbps);
    f.read_gbps_paired = median(r.pair_read_gbps);
    f.paired_tokens = static_cast<int>(tokens);
  }
  if (reps > 0 && r.rep_fma_gflops.size() == reps) {
    std::vector<double> fracs, fracs_with_attention;
    for (size_t i = 0; i < reps; ++i) {
      fracs.push_back(
          ratio(2.0 * static_cast<double>(params) * r.rep_tok_s[i] / 1e9, r.rep_fma_gflops[i]));
      fracs_with_attention.push_back(
          ratio(flop_per_token * r.rep_tok_s[i] / 1e9, r.rep_fma_gflops[i]));
    }
    f.fma_frac_paired = median(fracs);
    f.fma_frac_paired_with_attention = median(fracs_with_attention);
    f.fma_gflops_paired = median(r.rep_fma_gflops);
    f.paired_reps = static_cast<int>(reps);
  }
  return f;
}

std::string bench_table_header() {
  return format("| %-28s | %-6s | %10s | %8s | %7s | %13s | %20s | %38s |\n", "model", "type",
                "size", "params", "threads", "test", "t/s", "of roofline (bracketed reads)") +
         "| ---------------------------- | ------ | ---------: | -------: | ------: | "
         "------------: | "
         "-------------------: | -------------------------------------: |\n";
}

std::string bench_table_row(const ModelFacts& m, int threads, const BenchResult& r,
                            const Roofline& roof) {
  const BenchFigures f = bench_figures(m, r, roof);
  const bool tg = r.test.rfind("tg", 0) == 0;
  std::string roofline = tg ? format("%6.1f GB/s %3.0f%%", f.gbps, 100 * f.bw_frac)
                            : format("%5.0f GFLOP/s %3.0f%%", f.gflops, 100 * f.fma_frac);
  if (tg && f.read_gbps_bracketed > 0) {
    roofline += format(" (%3.0f%% of %5.1f, %d/%zu)", 100 * f.bw_frac_bracketed,
                       f.read_gbps_bracketed, f.steady_reps, r.rep_tok_s.size());
  }
  return format("| %-28s | %-6s | %6.2f MiB | %7.2fM | %7d | %13s | %10.2f ± %7.2f | %38s |\n",
                m.name.c_str(), m.type.c_str(), static_cast<double>(m.model_bytes) / (1 << 20),
                static_cast<double>(m.params_per_token) / 1e6, threads, r.test.c_str(), r.tok_s,
                r.tok_s_sd, roofline.c_str());
}

std::string bench_json_line(const ModelFacts& m, int threads, const BenchResult& r,
                            const Roofline& roof) {
  const BenchFigures f = bench_figures(m, r, roof);
  const std::string head = format(
      "{\"model\":%s,\"type\":%s,\"isa\":%s,\"threads\":%d,\"test\":%s,\"n_tokens\":%lld,"
      "\"depth\":%lld,\"kv_bytes_per_token\":%llu,"
      "\"tok_s\":%.6g,\"tok_s_sd\":%.6g,\"bytes\":%llu,\"bytes_per_token\":%llu,"
      "\"params\":%llu,\"gbps\":%.6g,\"bw_frac\":%.4f,\"gflops\":%.6g,\"fma_frac\":%.4f,"
      "\"kv_type\":%s,\"kv_bytes_per_pos\":%llu,\"probes\":%s",
      json_string(m.name).c_str(), json_string(m.type).c_str(), json_string(roof.isa).c_str(),
      threads, json_string(r.test).c_str(), static_cast<long long>(r.n_tokens),
      static_cast<long long>(r.depth), static_cast<unsigned long long>(r.kv_bytes_per_token),
      r.tok_s, r.tok_s_sd, static_cast<unsigned long long>(m.model_bytes),
      static_cast<unsigned long long>(m.bytes_per_token),
      static_cast<unsigned long long>(m.params_per_token), f.gbps, f.bw_frac, f.gflops, f.fma_frac,
      json_string(r.kv_type).c_str(), static_cast<unsigned long long>(r.kv_bytes_per_pos),
      json_string(roof.probes_isa != nullptr ? roof.probes_isa : roof.isa).c_str());
  // The arrays grow with -r: appended, not formatted (format() stops at 1023 characters).
  std::string line = head + ",\"rep_tok_s\":" + json_array(r.rep_tok_s);
  line += format(
      ",\"attn_flop_per_token\":%.6g,\"gflops_with_attention\":%.6g,"
      "\"fma_frac_with_attention\":%.4f",
      r.attn_flop_per_token, f.gflops_with_attention, f.fma_frac_with_attention);
  if (f.read_gbps_bracketed > 0) {
    line += format(",\"bw_frac_bracketed\":%.4f,\"read_gbps_bracketed\":%.6g,\"steady_reps\":%d",
                   f.bw_frac_bracketed, f.read_gbps_bracketed, f.steady_reps);
    line += ",\"rep_read_before\":" + json_array(r.rep_read_before);
    line += ",\"rep_read_after\":" + json_array(r.rep_read_after);
  }
  if (f.paired_tokens > 0) {
    line += format(
        ",\"bw_frac_paired\":%.4f,\"token_gbps_paired\":%.6g,\"read_gbps_paired\":%.6g,"
        "\"paired_tokens\":%d",
        f.bw_frac_paired, f.token_gbps_paired, f.read_gbps_paired, f.paired_tokens);
    line += ",\"token_s\":" + json_array(r.token_s);
    line += ",\"pair_read_gbps\":" + json_array(r.pair_read_gbps);
  }
  if (f.paired_reps > 0) {
    line += format(
        ",\"fma_frac_paired\":%.4f,\"fma_gflops_paired\":%.6g,"
        "\"fma_frac_paired_with_attention\":%.4f",
        f.fma_frac_paired, f.fma_gflops_paired, f.fma_frac_paired_with_attention);
    line += ",\"rep_fma_gflops\":" + json_array(r.rep_fma_gflops);
  }
  if (f.steps_per_token > 0) {
    line += format(",\"steps_per_token\":%.1f,\"join_wait_frac\":%.4f,\"alone_frac\":%.4f",
                   f.steps_per_token, f.join_wait_frac, f.alone_frac);
  }
  return line + "}";
}

std::string pool_time_text(const BenchResult& r, const Roofline& roof) {
  const BenchFigures f = bench_figures(ModelFacts{}, r, roof);
  if (f.steps_per_token <= 0) return "";
  return format(
      "%s: threads %.1f%% in steps' work, %.1f%% waiting at joins, %.1f%% beside the calling "
      "thread alone; %.1f steps a token\n",
      r.test.c_str(), 100 * (1 - f.join_wait_frac - f.alone_frac), 100 * f.join_wait_frac,
      100 * f.alone_frac, f.steps_per_token);
}

std::string paired_reads_text(const BenchResult& r) {
  const BenchFigures f = bench_figures(ModelFacts{}, r, Roofline{});
  if (f.paired_tokens == 0) return "";
  return format(
      "%s: tokens read %.0f%% of a plain read of the same bytes just after each (median of %d "
      "tokens: %.1f against %.1f GB/s)\n",
      r.test.c_str(), 100 * f.bw_frac_paired, f.paired_tokens, f.token_gbps_paired,
      f.read_gbps_paired);
}

std::string paired_fma_text(const ModelFacts& m, const BenchResult& r) {
  const BenchFigures f = bench_figures(m, r, Roofline{});
  if (f.paired_reps == 0) return "";
  return format(
      "%s: prompts ran %.0f%% of the FMA rate of an FMA run as long as each just after it "
      "(median of %d: %.0f against %.0f GFLOP/s)\n",
      r.test.c_str(), 100 * f.fma_frac_paired, f.paired_reps, f.gflops, f.fma_gflops_paired);
}

std::string attention_flop_text(const ModelFacts& m, const BenchResult& r, const Roofline& roof) {
  if (!r.test.starts_with("pp") || r.depth <= 0) return "";
  const BenchFigures f = bench_figures(m, r, roof);
  std::string paired;
  if (f.paired_reps > 0)
    paired = format(" (paired %.0f%%)", 100 * f.fma_frac_paired_with_attention);
  return format(
      "%s: with attention's %.2f GFLOP a token beside the weights' %.2f, %.0f GFLOP/s, %.0f%% of "
      "FMA peak%s\n",
      r.test.c_str(), r.attn_flop_per_token / 1e9,
      2.0 * static_cast<double>(m.prompt_params_per_token) / 1e9, f.gflops_with_attention,
      100 * f.fma_frac_with_attention, paired.c_str());
}

std::string expert_usage_text(const model::ExpertUsage& u) {
  std::string s = format("expert usage (tokens routed to each of %lld experts, per layer):\n",
                         static_cast<long long>(u.n_expert));
  for (int64_t l = u.layer_begin; l < u.layer_begin + u.n_layers; ++l) {
    std::vector<int64_t> order(static_cast<size_t>(u.n_expert));
    uint64_t total = 0, unused = 0;
    for (int64_t e = 0; e < u.n_expert; ++e) {
      order[e] = e;
      total += u.at(l, e);
      unused += u.at(l, e) == 0;
    }
    if (total == 0) {  // deepseek2's leading dense layers route nothing
      s += format("  layer %3lld: no token routed (a dense layer)\n", (long long)l);
      continue;
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return u.at(l, a) > u.at(l, b); });
    s += format("  layer %3lld: min %llu mean %.1f max %llu; unused %llu; busiest", (long long)l,
                (unsigned long long)u.at(l, order.back()), double(total) / u.n_expert,
                (unsigned long long)u.at(l, order.front()), (unsigned long long)unused);
    for (size_t i = 0; i < std::min<size_t>(3, order.size()); ++i)
      s += format(" #%lld (%llu)", (long long)order[i], (unsigned long long)u.at(l, order[i]));
    s += "\n";
  }
  return s;
}

std::string expert_usage_json_lines(const model::ExpertUsage& u) {
  std::string s;
  for (int64_t l = u.layer_begin; l < u.layer_begin + u.n_layers; ++l) {
    s += format("{\"test\":\"expert_usage\",\"layer\":%lld,\"tokens\":[", (long long)l);
    for (int64_t e = 0; e < u.n_expert; ++e)
      s += format("%s%llu", e ? "," : "", (unsigned long long)u.at(l, e));
    s += "]}\n";
  }
  return s;
}

std::string roofline_text(const Roofline& roof) {
  return format(
      "roofline (%s kernels):\n"
      "  memory read:  %7.1f GB/s on 1 thread, %7.1f GB/s on %d threads (best of %d passes)\n"
      "                median %.1f, slowest %.1f; on %d threads median %.1f, slowest %.1f\n"
      "  FMA peak:     %7.1f GFLOP/s on 1 thread, %7.1f GFLOP/s on %d threads\n",
      roof.isa, roof.read_gbps_1, roof.read_gbps_n, roof.threads, roof.read_passes,
      roof.read_gbps_1_median, roof.read_gbps_1_min, roof.threads, roof.read_gbps_n_median,
      roof.read_gbps_n_min, roof.fma_gflops_1, roof.fma_gflops_n, roof.threads);
}

std::string roofline_json_line(const Roofline& roof) {
  return format(
      "{\"test\":\"roofline\",\"isa\":%s,\"threads\":%d,\"read_gbps_1\":%.6g,"
      "\"read_gbps_n\":%.6g,\"fma_gflops_1\":%.6g,\"fma_gflops_n\":%.6g,"
      "\"read_gbps_1_median\":%.6g,\"read_gbps_1_min\":%.6g,\"read_gbps_n_median\":%.6g,"
      "\"read_gbps_n_min\":%.6g,\"read_passes\":%d}",
      json_string(roof.isa).c_str(), roof.threads, roof.read_gbps_1, roof.read_gbps_n,
      roof.fma_gflops_1, roof.fma_gflops_n, roof.read_gbps_1_median, roof.read_gbps_1_min,
      roof.read_gbps_n_median, roof.read_gbps_n_min, roof.read_passes);
}

}  // namespace cohort::runtime
