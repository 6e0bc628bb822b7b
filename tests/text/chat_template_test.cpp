// Every real chat template in ../shared/data/templates, rendered for several conversations,
// byte-identical to Python's jinja2 used the way Hugging Face transformers uses it. The
// expected text is rendered at test time by tests/text/render_reference.py; nothing
// expected is written here. A conversation a template rejects (raise_exception, a type
// error) must fail in both, with the same message for raise_exception.
#include "text/chat_template.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "support/shared_data.h"
#include "support/temp_dir.h"
#include "text/jinja_reference.h"

namespace cohort {
namespace {

using json = nlohmann::ordered_json;

constexpr const char* kNow = "2025-01-15T10:30:00";

const json& tools() {
  static const json t = json::parse(R"J([
    {"type": "function", "function": {
      "name": "get_weather",
      "description": "Get the current weather in a city. Handles Ünïcödé names.",
      "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "City name, e.g. Paris"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"],
                 "description": "Temperature unit"}},
        "required": ["location"]}}},
    {"type": "function", "function": {
      "name": "search",
      "description": "Search the web.",
      "parameters": {"type": "object", "properties": {
        "query": {"type": "string", "description": "What to search for"},
        "max_results": {"type": "integer", "description": "How many results", "default": 5},
        "tags": {"type": "array", "items": {"type": "string"}, "description": "Filters"},
        "exact": {"type": "boolean", "description": "Exact match only"}},
        "required": ["query"]}}}
  ])J");
  return t;
}

struct Conversation {
  std::string name;
  json context;
  bool has_tool_calls = false;
};

// The conversations every template is tried with. Tool definitions are added per template
// (as `tools`, or inside the system message for Phi-4-mini).
std::vector<Conversation> conversations() {
  std::vector<Conversation> c;
  c.push_back({"system_user", json::parse(R"J({"messages": [
      {"role": "system", "content": "You are a helpful assistant."},
      {"role": "user", "content": "Hello! What's 2+2?"}],
    "add_generation_prompt": true})J")});
  c.push_back({"multi_turn", json::parse(R"J({"messages": [
      {"role": "system", "content": "  You are terse.\n"},
      {"role": "user", "content": "Hi"},
      {"role": "assistant", "content": "Hello! How can I help?"},
      {"role": "user", "content": "Tell me a joke about \"C++\" and 'templates'."}],
    "add_generation_prompt": true})J")});
  c.push_back({"no_system_final_assistant", json::parse(R"J({"messages": [
      {"role": "user", "content": "Bonjour, ça va ?"},
      {"role": "assistant", "content": "Très bien, merci ! 😊"},
      {"role": "user", "content": "  Spaces around  \n"},
      {"role": "assistant", "content": "<think>\nThe user wants a reply.\n</think>\n\nSure.\nLine two.\n",
       "reasoning_content": "The user wants a reply.", "thinking": "The user wants a reply."}],
    "add_generation_prompt": false})J")});
  c.push_back({"no_system_multi_turn", json::parse(R"J({"messages": [
      {"role": "user", "content": "What is the capital of France?"},
      {"role": "assistant", "content": "Paris."},
      {"role": "user", "content": "And of Japan?"}],
    "add_generation_prompt": true})J")});
  c.push_back({"thinking_off", json::parse(R"J({"messages": [
      {"role": "user", "content": "Hi there"}],
    "add_generation_prompt": true, "enable_thinking": false})J")});
  c.push_back({"content_parts", json::parse(R"J({"messages": [
      {"role": "system", "content": "Describe images."},
      {"role": "user", "content": [{"type": "text", "text": "What is this?"}, {"type": "image"}]}],
    "add_generation_prompt": true})J")});
  c.push_back({"tool_call_object_args", json::parse(R"J({"messages": [
      {"role": "system", "content": "You can call tools."},
      {"role": "user", "content": "What's the weather in Paris?"},
      {"role": "assistant", "tool_calls": [{"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": {"location": "Paris", "unit": "celsius"}}}]},
      {"role": "tool", "tool_call_id": "call12345", "name": "get_weather",
       "content": "{\"temperature\": 22, \"condition\": \"sunny\"}"}],
    "add_generation_prompt": true})J"),
               true});
  c.push_back({"tool_call_string_args", json::parse(R"J({"messages": [
      {"role": "user", "content": "What's the weather in Paris?"},
      {"role": "assistant", "content": null, "tool_calls": [{"id": "call12345", "type": "function",
        "function": {"name": "get_weather", "arguments": "{\"location\": \"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "call12345", "content": "22°C and sunny"},
      {"role": "assistant", "content": "It is 22°C and sunny in Paris."},
      {"role": "user", "content": "Thanks!"}],
    "add_generation_prompt": true})J"),
               true});
  c.push_back({"two_tool_calls", json::parse(R"J({"messages": [
      {"role": "user", "content": "Weather in Paris and Tokyo?"},
      {"role": "assistant", "content": "Let me check both.", "tool_calls": [
        {"id": "call12345", "type": "function",
         "function": {"name": "get_weather", "arguments": {"location": "Paris"}}},
        {"id": "call67890", "type": "function",
         "function": {"name": "get_weather", "arguments": {"location": "Tokyo", "unit": "celsius"}}}]},
      {"role": "tool", "tool_call_id": "call12345", "content": "22"},
      {"role": "tool", "tool_call_id": "call67890", "content": "18"},
      {"role": "assistant", "content": "Paris 22°C, Tokyo 18°C."}],
    "add_generation_prompt": false})J"),
               true});
  c.push_back({"tools_no_calls", json::parse(R"J({"messages": [
      {"role": "system", "content": "Use tools when useful."},
      {"role": "user", "content": "Search for jinja2 docs."}],
    "add_generation_prompt": true})J")});
  return c;
}

struct TemplateInfo {
  std::string file;
  json bos, eos, tools_mode;
};

std::vector<TemplateInfo> load_templates(const std::string& dir) {
  std::ifstream in(dir + "/templates.json");
  const json index = json::parse(in, nullptr, false);
  std::vector<TemplateInfo> out;
  if (!index.is_object() || !index.contains("templates")) return out;
  for (const auto& t : index["templates"]) {
    out.push_back({t["file"].get<std::string>(), t["bos_token"], t["eos_token"], t["tools"]});
  }
  return out;
}

// The context for one template: bos/eos as templates.json lists them, tools the way the
// template takes them.
json context_for(const TemplateInfo& t, const Conversation& c) {
  json ctx = c.context;
  if (!t.bos.is_null()) ctx["bos_token"] = t.bos;
  if (!t.eos.is_null()) ctx["eos_token"] = t.eos;
  const bool wants_tools = c.has_tool_calls || c.name == "tools_no_calls";
  if (wants_tools && t.tools_mode == "tools") {
    ctx["tools"] = tools();
  } else if (wants_tools && t.tools_mode == "system-message") {
    for (auto& m : ctx["messages"]) {
      if (m["role"] == "system") m["tools"] = tools().dump();
    }
  }
  return ctx;
}

TEST(ChatTemplate, EveryTemplateMatchesPythonJinja2) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  if (auto why = testing::reference_unavailable(); !why.empty()) {
    GTEST_SKIP() << why;
  }
  const std::string dir = testing::kSharedData + "/templates";
  const auto templates = load_templates(dir);
  ASSERT_GE(templates.size(), 18u);
  const auto convs = conversations();

  // One Python process renders every (template, conversation) pair.
  std::vector<std::string> sources;
  json cases = json::array();
  for (const TemplateInfo& t : templates) {
    std::ifstream in(dir + "/" + t.file, std::ios::binary);
    sources.emplace_back((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(sources.back().empty()) << t.file;
    for (const Conversation& c : convs) {
      cases.push_back({{"template", sources.back()}, {"context", context_for(t, c)}});
    }
  }
  testing::TempDir tmp;
  const std::string cases_path = tmp.file("cases.json");
  std::ofstream(cases_path, std::ios::binary) << cases.dump();
  auto batch = testing::render_reference_batch(cases_path, kNow);
  ASSERT_EQ(batch.exit_code, 0) << batch.out;
  const json expected = json::parse(batch.out, nullptr, false);
  ASSERT_TRUE(expected.is_array());
  ASSERT_EQ(expected.size(), cases.size());

  text::RenderOptions opts;
  opts.now = *text::parse_local_time(kNow);
  size_t k = 0;
  for (size_t ti = 0; ti < templates.size(); ++ti) {
    const TemplateInfo& t = templates[ti];
    SCOPED_TRACE(t.file);
    auto parsed = text::ChatTemplate::parse(sources[ti]);
    ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
    std::vector<std::string> passed;
    std::vector<std::string> rejected;
    bool tools_rendered = false;
    for (const Conversation& c : convs) {
      SCOPED_TRACE(c.name);
      const json& ctx = cases[k]["context"];
      const bool want_ok = expected[k]["ok"].get<bool>();
      const std::string want = expected[k]["out"].get<std::string>();
      ++k;
      auto got = parsed->render(ctx, opts);
      if (want_ok) {
        EXPECT_TRUE(got.is_ok()) << "python rendered it; we failed: " << got.status().message();
        if (!got.is_ok()) continue;
        EXPECT_EQ(*got, want);
        if (*got == want) {
          passed.push_back(c.name);
          // "tools" templates must render a tool-call conversation with the definitions;
          // Phi-4-mini's system-message tools at least the definitions.
          if (ctx.contains("tools")) tools_rendered = tools_rendered || c.has_tool_calls;
          if (ctx["messages"][0].contains("tools")) tools_rendered = true;
        }
      } else {
        EXPECT_FALSE(got.is_ok()) << "python failed (" << want << "); we rendered:\n" << *got;
        if (!got.is_ok() && want.rfind("raise: ", 0) == 0) {
          EXPECT_EQ(got.status().message(), want.substr(7));
        }
        rejected.push_back(c.name);
      }
    }
    std::string line = t.file + ": identical for";
    for (const auto& n : passed) line += " " + n;
    if (!rejected.empty()) {
      line += "; rejected by both:";
      for (const auto& n : rejected) line += " " + n;
    }
    std::printf("[ template ] %s\n", line.c_str());
    EXPECT_GE(passed.size(), 3u) << "too few conversations render for " << t.file;
    if (!t.tools_mode.is_null()) {
      EXPECT_TRUE(tools_rendered) << t.file << " takes tools but no tool conversation rendered";
    }
  }
}

TEST(ChatTemplate, FallbackFormat) {
  const json ctx = json::parse(R"J({"messages": [
      {"role": "system", "content": "sys"},
      {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
      {"role": "assistant", "content": null, "tool_calls": [
        {"function": {"name": "f", "arguments": "{\"x\": 1}"}}]}],
    "add_generation_prompt": true})J");
  auto out = text::render_chat_template("", ctx);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(*out,
            "<|system|>\nsys\n<|user|>\nab\n<|assistant|>\n\n"
            "<|tool_call|>{\"name\":\"f\",\"arguments\":\"{\\\"x\\\": 1}\"}\n<|assistant|>\n");
  auto t = text::ChatTemplate::parse("");
  ASSERT_TRUE(t.is_ok());
  EXPECT_TRUE(t->is_fallback());
}

TEST(ChatTemplate, RaiseExceptionKeepsTheTemplatesMessage) {
  auto out = text::render_chat_template(
      "{% if messages[0].role == 'system' %}{{ raise_exception('System role not supported') }}"
      "{% endif %}",
      json::parse(R"({"messages": [{"role": "system", "content": "x"}]})"));
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().message(), "System role not supported");
}

TEST(ChatTemplate, ErrorsNameTheLine) {
  auto out = text::render_chat_template("a\n{{ 1 + 'x' }}", json::object());
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().message(),
            "jinja: line 2: unsupported operand type(s) for +: 'int' and 'str'");
  auto syntax = text::ChatTemplate::parse("{% if x %}\n{% endfor %}");
  ASSERT_FALSE(syntax.is_ok());
  EXPECT_NE(syntax.status().message().find("line 2"), std::string::npos)
      << syntax.status().message();
}

TEST(ChatTemplate, ContextMustBeAnObject) {
  EXPECT_FALSE(text::render_chat_template("x", json::array()).is_ok());
}

TEST(ChatTemplate, StrftimeNowUsesThePinnedTime) {
  text::RenderOptions opts;
  opts.now = *text::parse_local_time("2024-02-29T23:05:09");
  auto out = text::render_chat_template("{{ strftime_now('%d %b %Y %H:%M:%S %A %j') }}",
                                        json::object(), opts);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(*out, "29 Feb 2024 23:05:09 Thursday 060");
  EXPECT_FALSE(text::parse_local_time("2024-02-30T10:00:00").is_ok());
  EXPECT_FALSE(text::parse_local_time("yesterday").is_ok());
  EXPECT_TRUE(text::parse_local_time("2025-01-15 10:30").is_ok());
  EXPECT_TRUE(text::parse_local_time("2025-01-15T10:30:00.123").is_ok());
}

}  // namespace
}  // namespace cohort
