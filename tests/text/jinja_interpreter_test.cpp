// The Jinja2 interpreter on its own: one test per construct (expectations are jinja2's
// outputs), the deliberate differences from jinja2's sandbox, and hostile templates that
// must end quickly with a clear error instead of hanging, crashing or exhausting memory.
#include "text/jinja_interpreter.h"

#include <gtest/gtest.h>

#include <chrono>

#include "text/jinja_json.h"

namespace cohort::text::jinja {
namespace {

Result<std::string> render(std::string_view src, std::string_view context_json = "{}",
                           const RenderLimits& limits = {}) {
  auto t = Template::parse(src);
  if (!t.is_ok()) return t.status();
  auto ctx = value_from_json(nlohmann::ordered_json::parse(context_json));
  if (!ctx.is_ok()) return ctx.status();
  RenderEnv env;
  env.limits = limits;
  return t->render(*ctx, env);
}

std::string ok(std::string_view src, std::string_view context_json = "{}") {
  auto r = render(src, context_json);
  EXPECT_TRUE(r.is_ok()) << src << ": " << r.status().message();
  return r.is_ok() ? *r : "<error>";
}

std::string err(std::string_view src, const RenderLimits& limits = {}) {
  auto r = render(src, "{}", limits);
  EXPECT_FALSE(r.is_ok()) << src << " rendered: " << (r.is_ok() ? *r : "");
  return r.is_ok() ? "" : r.status().message();
}

TEST(JinjaInterpreter, OutputAndExpressions) {
  EXPECT_EQ(ok("{{ 1 + 2 * 3 }} {{ 7 // -2 }} {{ 2 ** 10 }} {{ 'a' ~ 1 }}"), "7 -4 1024 a1");
  EXPECT_EQ(ok("{{ x }}|{{ x.y is defined }}|{{ none }}", R"({"x": {}})"), "{}|False|None");
  EXPECT_EQ(ok("{{ 'yes' if 1 < 2 < 3 else 'no' }}"), "yes");
  EXPECT_EQ(ok("{{ [1, 2, 3][::-1] }}{{ 'abc'[1:] }}"), "[3, 2, 1]bc");
}

TEST(JinjaInterpreter, ForLoopVariables) {
  EXPECT_EQ(ok("{% for x in 'abc' %}{{ loop.index }}{{ x }}{% if loop.last %}!{% endif %}"
               "{% endfor %}"),
            "1a2b3c!");
  EXPECT_EQ(
      ok("{% for k, v in d.items() %}{{ k }}={{ v }} {% endfor %}", R"({"d": {"z": 1, "a": 2}})"),
      "z=1 a=2 ");
  EXPECT_EQ(ok("{% for x in [1, 2, 3, 4] if x is even %}{{ loop.length }}{{ x }}{% else %}-"
               "{% endfor %}"),
            "2224");
  EXPECT_EQ(ok("{% for x in range(9) %}{% if x > 3 %}{% break %}{% endif %}"
               "{% if x is odd %}{% continue %}{% endif %}{{ x }}{% endfor %}"),
            "02");
}

TEST(JinjaInterpreter, ScopingFollowsJinja2) {
  EXPECT_EQ(ok("{% set x = 1 %}{% for i in [5] %}{% set x = i %}{% endfor %}{{ x }}"), "1");
  EXPECT_EQ(ok("{% set ns = namespace(x=1) %}{% for i in [5] %}{% set ns.x = i %}{% endfor %}"
               "{{ ns.x }}"),
            "5");
  EXPECT_EQ(ok("{% if true %}{% set y = 2 %}{% endif %}{{ y }}"), "2");
}

TEST(JinjaInterpreter, MacrosCallerAndBlocks) {
  EXPECT_EQ(ok("{% macro m(a, b='B') %}{{ a }}{{ b }}{% endmacro %}{{ m(1) }}{{ m(1, b=2) }}"),
            "1B12");
  EXPECT_EQ(ok("{% macro w() %}[{{ caller() }}]{% endmacro %}{% call w() %}in{% endcall %}"),
            "[in]");
  EXPECT_EQ(ok("{% set s %}a{{ 1 }}{% endset %}{{ s }}{% filter upper %}x{% endfilter %}"), "a1X");
}

TEST(JinjaInterpreter, WhitespaceControl) {
  EXPECT_EQ(ok("a\n  {% if true %}\n  b\n  {% endif %}\nc"), "a\n  b\nc");
  EXPECT_EQ(ok("a {{- ' x ' -}} b"), "a x b");
  EXPECT_EQ(ok("a\n{# c #}\nb\n"), "a\nb");
}

TEST(JinjaInterpreter, FiltersAndTests) {
  EXPECT_EQ(ok("{{ [3, 1, 2]|sort|join(',') }} {{ ' x '|trim }} {{ none|default('d') }}"),
            "1,2,3 x None");
  EXPECT_EQ(ok("{{ m|selectattr('role', 'equalto', 'user')|map(attribute='c')|list }}",
               R"({"m": [{"role": "user", "c": 1}, {"role": "bot", "c": 2}]})"),
            "[1]");
  EXPECT_EQ(ok("{{ {'a': 'é'}|tojson }} {{ [1]|tojson(indent=2) }}"), "{\"a\": \"é\"} [\n  1\n]");
  EXPECT_EQ(ok("{{ x is string }}{{ x is mapping }}{{ y is defined }}", R"({"x": "s"})"),
            "TrueFalseFalse");
}

// jinja2's ImmutableSandboxedEnvironment refuses list.append; we allow the mutating list
// methods (llama.cpp's later templates rely on them), documented in jinja_interpreter.h.
TEST(JinjaInterpreter, ListAppendMutates) {
  EXPECT_EQ(ok("{% set xs = [1] %}{{ xs.append(2) }}{% set _ = xs.extend([3]) %}{{ xs }}"),
            "None[1, 2, 3]");
}

// Shared ownership cannot free cycles, so mutations that would make one are refused.
TEST(JinjaInterpreter, ReferenceCyclesAreRefused) {
  EXPECT_NE(err("{% set l = [] %}{{ l.append(l) }}").find("inside itself"), std::string::npos);
  EXPECT_NE(err("{% set ns = namespace(l=[]) %}{{ ns.l.append(ns) }}").find("inside itself"),
            std::string::npos);
  EXPECT_NE(err("{% set ns = namespace() %}{% set ns.me = [ns] %}").find("inside itself"),
            std::string::npos);
  EXPECT_NE(err("{% set l = [] %}{% set f = l.append %}{{ l.append(f) }}").find("bound method"),
            std::string::npos);
}

TEST(JinjaInterpreter, ErrorsAreStatusesNotCrashes) {
  EXPECT_EQ(err("{{ raise_exception('nope') }}"), "nope");
  EXPECT_NE(err("{{ x.y }}").find("'x' is undefined"), std::string::npos);
  EXPECT_NE(err("{{ 1 + none }}").find("line 1"), std::string::npos);
  EXPECT_NE(err("{% for %}").find("line 1"), std::string::npos);
  EXPECT_NE(err("{{ range(1000000)|length }}").find("Range too big"), std::string::npos);
}

// Hostile templates end with a clear error well within a second.
class JinjaHostile : public ::testing::Test {
 protected:
  void expect_fast_error(std::string_view src, std::string_view needle,
                         const RenderLimits& limits = {}) {
    const auto start = std::chrono::steady_clock::now();
    const std::string msg = err(src, limits);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - start)
                        .count();
    EXPECT_NE(msg.find(needle), std::string::npos) << msg;
    EXPECT_LT(ms, 20000) << src;  // generous for sanitizer builds; a hang never ends
  }
};

TEST_F(JinjaHostile, InfiniteMacroRecursion) {
  expect_fast_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", "nested deeper");
}

TEST_F(JinjaHostile, MutualRecursionThroughCaller) {
  expect_fast_error("{% macro a() %}{% call a() %}x{% endcall %}{% endmacro %}{{ a() }}",
                    "nested deeper");
}

TEST_F(JinjaHostile, HugeNestedLoops) {
  expect_fast_error(
      "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
      "loop iterations");
}

TEST_F(JinjaHostile, ExponentialString) {
  RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  expect_fast_error(
      "{% set ns = namespace(s='ab') %}{% for i in range(100) %}{% set ns.s = ns.s ~ ns.s %}"
      "{% endfor %}",
      "exceeds the limit", limits);
  expect_fast_error("{{ 'x' * 10000000000 }}", "exceeds the limit");
}

TEST_F(JinjaHostile, HugeOutput) {
  RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  expect_fast_error("{% for i in range(100000) %}{{ 'x' * 100 }}{% endfor %}", "exceeds", limits);
}

TEST_F(JinjaHostile, StepLimit) {
  RenderLimits limits;
  limits.max_steps = 100000;
  expect_fast_error("{% for i in range(100000) %}{{ i }}{% endfor %}", "evaluation steps", limits);
}

TEST_F(JinjaHostile, DeepNesting) {
  expect_fast_error("{{ " + std::string(100000, '(') + "1" + std::string(100000, ')') + " }}",
                    "nested too deeply");
  expect_fast_error("{{ " + std::string(100000, '[') + std::string(100000, ']') + " }}",
                    "nested too deeply");
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if true %}";
  expect_fast_error(ifs, "nested too deeply");
  std::string nots;
  for (int i = 0; i < 100000; ++i) nots += "not ";
  expect_fast_error("{{ " + nots + "1 }}", "nested too deeply");
  std::string filters = "{{ 1";
  for (int i = 0; i < 100000; ++i) filters += "|abs";
  filters += " }}";
  expect_fast_error(filters, "nested too deeply");
  std::string sum = "{{ 1";
  for (int i = 0; i < 100000; ++i) sum += " + 1";
  expect_fast_error(sum + " }}", "nested too deeply");
  // Chains as long as real templates write them are fine.
  std::string ok_sum = "{{ 0";
  for (int i = 0; i < 100; ++i) ok_sum += " + 1";
  EXPECT_EQ(ok(ok_sum + " }}"), "100");
}

TEST_F(JinjaHostile, DeepJsonContext) {
  std::string deep;
  for (int i = 0; i < 2000; ++i) deep += "[";
  for (int i = 0; i < 2000; ++i) deep += "]";
  auto r = value_from_json(nlohmann::ordered_json::parse(deep));
  EXPECT_FALSE(r.is_ok());
}

}  // namespace
}  // namespace cohort::text::jinja
