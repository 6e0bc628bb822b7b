// `cohort template` end to end: the printed prompt is byte-identical to Python jinja2's
// render (no newline added), --now pins strftime_now, a template that raises exits non-zero
// with "error: " + its message, -m takes the GGUF's template and its bos/eos token texts,
// and a GGUF without a template uses the documented fallback.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/shared_data.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"
#include "text/jinja_reference.h"

namespace cohort {
namespace {

using testing::run_command;
using testing::shell_quote;

using testing::kCohortBinary;
constexpr const char* kNow = "2025-01-15T10:30:00";

std::string write(const testing::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::string templates_dir() { return testing::kSharedData + "/templates/"; }

TEST(CliTemplate, PrintsExactlyWhatPythonJinja2Renders) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  if (auto why = testing::reference_unavailable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  testing::TempDir dir;
  const std::string ctx = write(dir, "ctx.json", R"J({
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": "Héllo \"there\""}],
    "tools": [{"type": "function", "function": {"name": "now", "description": "Time.",
               "parameters": {"type": "object", "properties": {}}}}],
    "add_generation_prompt": true, "enable_thinking": false,
    "bos_token": "<|begin_of_text|>", "eos_token": "<|eot_id|>"})J");
  for (const char* name : {"meta-llama--Llama-3.2-3B-Instruct.jinja", "Qwen--Qwen3-0.6B.jinja",
                           "openai--gpt-oss-120b.jinja", "google--gemma-3-4b-it.jinja"}) {
    SCOPED_TRACE(name);
    const std::string tmpl = templates_dir() + name;
    auto want = testing::render_reference(tmpl, ctx, kNow, dir.file("err.txt"));
    ASSERT_TRUE(want.ok) << want.out;
    auto got = run_command(kCohortBinary + " template --template " + shell_quote(tmpl) +
                           " --context " + shell_quote(ctx) + " --now " + kNow + " 2>/dev/null");
    EXPECT_EQ(got.exit_code, 0);
    EXPECT_EQ(got.out, want.out);
  }
}

TEST(CliTemplate, RaisingTemplateExitsNonZeroWithItsMessage) {
  testing::TempDir dir;
  const std::string tmpl = write(
      dir, "t.jinja",
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}ok");
  const std::string ctx =
      write(dir, "ctx.json", R"({"messages": [{"role": "system", "content": "x"}]})");
  auto r = run_command(kCohortBinary + " template --template " + shell_quote(tmpl) + " --context " +
                       shell_quote(ctx) + " 2>&1 >/dev/null");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(r.out, "error: System role not supported\n");
}

TEST(CliTemplate, BadInputIsAOneLineError) {
  testing::TempDir dir;
  const std::string tmpl = write(dir, "t.jinja", "{{ x");
  const std::string ctx = write(dir, "ctx.json", "{}");
  const std::string bad_ctx = write(dir, "bad.json", "[1, 2");
  for (const std::string& args :
       {"--template " + tmpl + " --context " + ctx, "--template " + tmpl + " --context " + bad_ctx,
        "--template /nonexistent.jinja --context " + ctx, "--context " + ctx,
        "--template " + tmpl + " --context " + ctx + " --now yesterday"}) {
    SCOPED_TRACE(args);
    auto r = run_command(kCohortBinary + " template " + args + " 2>&1 >/dev/null");
    EXPECT_NE(r.exit_code, 0);
    EXPECT_EQ(r.out.rfind("error: ", 0), 0u) << r.out;
    EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << r.out;
  }
}

TEST(CliTemplate, ModelTemplateAndTokenTexts) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string model = testing::kSharedData + "/vocab/ggml-vocab-phi-3.gguf";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "missing " << model;
  testing::TempDir dir;
  // This GGUF's template is "{{ bos_token }}" + a <|user|>/<|assistant|> loop; its BOS
  // token (id 1) is "<s>".
  const std::string ctx =
      write(dir, "ctx.json", R"({"messages": [{"role": "user", "content": "Hi"}]})");
  auto r = run_command(kCohortBinary + " template -m " + shell_quote(model) + " --context " +
                       shell_quote(ctx) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "<s><|user|>\nHi<|end|>\n<|assistant|>\n");
  const std::string ctx_bos = write(
      dir, "ctx2.json", R"({"bos_token": "[B]", "messages": [{"role": "user", "content": "Hi"}]})");
  r = run_command(kCohortBinary + " template -m " + shell_quote(model) + " --context " +
                  shell_quote(ctx_bos) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "[B]<|user|>\nHi<|end|>\n<|assistant|>\n");
}

TEST(CliTemplate, ModelWithoutTemplateUsesTheFallback) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  const std::string model = testing::kSharedData + "/models/stories260K.gguf";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << "missing " << model;
  testing::TempDir dir;
  const std::string ctx = write(dir, "ctx.json", R"({"messages": [
      {"role": "system", "content": "S"}, {"role": "user", "content": "U"}],
      "add_generation_prompt": true})");
  auto r = run_command(kCohortBinary + " template -m " + shell_quote(model) + " --context " +
                       shell_quote(ctx) + " 2>&1");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.out, "<|system|>\nS\n<|user|>\nU\n<|assistant|>\n");
}

}  // namespace
}  // namespace cohort
