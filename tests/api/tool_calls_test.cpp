// Tool calls read from each model family's own output format, and the streaming filter that
// keeps call text out of the content stream.
#include "api/tool_calls.h"

#include <gtest/gtest.h>

#include <string>

namespace cohort::api {
namespace {

using nlohmann::json;

TEST(ToolFormat, DetectedFromTheChatTemplate) {
  EXPECT_EQ(detect_tool_format("{{- '<tool_call>\\n' }}{{ tool_call | tojson }}"),
            ToolFormat::kHermes);
  EXPECT_EQ(detect_tool_format("<tool_call>\n<function={{ name }}>\n<parameter={{ k }}>"),
            ToolFormat::kQwen3Coder);
  EXPECT_EQ(detect_tool_format("{{ '[TOOL_CALLS]' }}"), ToolFormat::kMistral);
  EXPECT_EQ(detect_tool_format("{%- if message.role == 'ipython' %}<|python_tag|>"),
            ToolFormat::kLlama3Json);
  EXPECT_EQ(detect_tool_format(""), ToolFormat::kHermes);
}

TEST(ToolCalls, HermesCallsWithContentAround) {
  const ParsedOutput p = parse_tool_output(
      ToolFormat::kHermes,
      "Let me check.\n<tool_call>\n{\"name\": \"weather\", \"arguments\": {\"city\": \"Oslo\"}}\n"
      "</tool_call>\n<tool_call>{\"name\": \"time\", \"arguments\": \"{\\\"tz\\\": 1}\"}"
      "</tool_call>");
  EXPECT_EQ(p.content, "Let me check.");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].name, "weather");
  EXPECT_EQ(p.calls[0].arguments, json({{"city", "Oslo"}}));
  EXPECT_EQ(p.calls[1].name, "time");
  EXPECT_EQ(p.calls[1].arguments, json({{"tz", 1}}));  // arguments given as a JSON string
}

TEST(ToolCalls, MalformedCallsStayContent) {
  const std::string text = "<tool_call>{\"name\": \"weather\", \"arguments\": {</tool_call>";
  const ParsedOutput p = parse_tool_output(ToolFormat::kHermes, text);
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.content, text);
  EXPECT_TRUE(parse_tool_output(ToolFormat::kHermes, "<tool_call>{\"name\": 1}").calls.empty());
}

TEST(ToolCalls, Qwen3CoderXml) {
  const ParsedOutput p = parse_tool_output(ToolFormat::kQwen3Coder,
                                           "<tool_call>\n<function=search>\n<parameter=query>\n"
                                           "cats and dogs\n</parameter>\n<parameter=limit>\n5\n"
                                           "</parameter>\n</function>\n</tool_call>");
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].name, "search");
  EXPECT_EQ(p.calls[0].arguments, json({{"query", "cats and dogs"}, {"limit", 5}}));
  EXPECT_EQ(p.content, "");
}

TEST(ToolCalls, MistralBothSyntaxes) {
  ParsedOutput p = parse_tool_output(
      ToolFormat::kMistral,
      "[TOOL_CALLS][{\"name\": \"a\", \"arguments\": {\"x\": 1}}, {\"name\": \"b\", "
      "\"arguments\": {}}]");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[1].name, "b");
  p = parse_tool_output(ToolFormat::kMistral,
                        "[TOOL_CALLS]a[ARGS]{\"x\": 1}[TOOL_CALLS]b[ARGS]{\"y\": [2]}");
  ASSERT_EQ(p.calls.size(), 2u);
  EXPECT_EQ(p.calls[0].arguments, json({{"x", 1}}));
  EXPECT_EQ(p.calls[1].name, "b");
  EXPECT_EQ(p.calls[1].arguments, json({{"y", {2}}}));
  EXPECT_TRUE(parse_tool_output(ToolFormat::kMistral, "just text").calls.empty());
}

TEST(ToolCalls, Llama3JsonWithOrWithoutTag) {
  ParsedOutput p = parse_tool_output(
      ToolFormat::kLlama3Json, "<|python_tag|>{\"name\": \"f\", \"parameters\": {\"q\": \"x\"}}");
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(p.calls[0].arguments, json({{"q", "x"}}));
  p = parse_tool_output(ToolFormat::kLlama3Json,
                        " {\"name\": \"f\", \"parameters\": {}}; {\"name\": \"g\", "
                        "\"parameters\": {}}");
  ASSERT_EQ(p.calls.size(), 2u);
  p = parse_tool_output(ToolFormat::kLlama3Json, "The answer is {not json}.");
  EXPECT_TRUE(p.calls.empty());
  EXPECT_EQ(p.content, "The answer is {not json}.");
}

// Streams text in small pieces through the filter; returns what it let through.
std::string stream(ToolStreamFilter& f, const std::string& text, size_t piece) {
  std::string out;
  for (size_t i = 0; i < text.size(); i += piece) out += f.push(text.substr(i, piece));
  return out;
}

TEST(ToolStreamFilter, ContentBeforeTheMarkerStreamsTheCallDoesNot) {
  ToolStreamFilter f(ToolFormat::kHermes);
  const std::string streamed =
      stream(f, "Sure. <tool_call>{\"name\": \"f\", \"arguments\": {}}</tool_call>", 3);
  EXPECT_EQ(streamed, "Sure. ");
  std::string unsent;
  const ParsedOutput p = f.finish(&unsent);
  ASSERT_EQ(p.calls.size(), 1u);
  EXPECT_EQ(unsent, "");
}

TEST(ToolStreamFilter, AMarkerPrefixIsHeldUntilItCannotBeOne) {
  ToolStreamFilter f(ToolFormat::kHermes);
  EXPECT_EQ(f.push("a <tool"), "a ");
  EXPECT_EQ(f.push("box> b"), "<toolbox> b");
  std::string unsent;
  EXPECT_TRUE(f.finish(&unsent).calls.empty());
  EXPECT_EQ(unsent, "");
}

TEST(ToolStreamFilter, HeldTextThatIsNoCallIsSentAtTheEnd) {
  ToolStreamFilter f(ToolFormat::kHermes);
  EXPECT_EQ(stream(f, "x <tool_call>{broken", 4), "x ");
  std::string unsent;
  EXPECT_TRUE(f.finish(&unsent).calls.empty());
  EXPECT_EQ(unsent, "<tool_call>{broken");
}

TEST(ToolStreamFilter, Llama3HoldsOutputThatStartsLikeJson) {
  ToolStreamFilter f(ToolFormat::kLlama3Json);
  EXPECT_EQ(stream(f, "{\"name\": \"f\", \"parameters\": {}}", 2), "");
  std::string unsent;
  EXPECT_EQ(f.finish(&unsent).calls.size(), 1u);
  ToolStreamFilter g(ToolFormat::kLlama3Json);
  EXPECT_EQ(stream(g, "Hello {x}", 2), "Hello {x}");
}

}  // namespace
}  // namespace cohort::api
