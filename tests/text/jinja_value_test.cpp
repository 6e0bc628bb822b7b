// The Jinja2 value model: Python's str/repr, equality, ordering, truthiness, and
// json.dumps byte for byte (the expectations are Python 3's own outputs).
#include "text/jinja_value.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "text/jinja_json.h"
#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

TEST(JinjaValue, FloatReprMatchesPython) {
  EXPECT_EQ(float_repr(1.0), "1.0");
  EXPECT_EQ(float_repr(2.5), "2.5");
  EXPECT_EQ(float_repr(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(float_repr(1e16), "1e+16");
  EXPECT_EQ(float_repr(1e15), "1000000000000000.0");
  EXPECT_EQ(float_repr(0.0001), "0.0001");
  EXPECT_EQ(float_repr(0.00001), "1e-05");
  EXPECT_EQ(float_repr(-1.5e-7), "-1.5e-07");
  EXPECT_EQ(float_repr(1.2345e100), "1.2345e+100");
  EXPECT_EQ(float_repr(-0.0), "-0.0");
  EXPECT_EQ(float_repr(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(float_repr(std::nan("")), "nan");
  EXPECT_EQ(float_repr(123456789.123), "123456789.123");
}

TEST(JinjaValue, StrAndReprMatchPython) {
  EXPECT_EQ(to_str(Value::none()), "None");
  EXPECT_EQ(to_str(Value::boolean(true)), "True");
  EXPECT_EQ(to_str(Value()), "");
  Value d = Value::new_dict();
  d.dict().set("k", Value::string("it's"));
  d.dict().set("n", Value::none());
  Value l = Value::new_list({Value::integer(1), Value::string("a"), Value::number(1.5), d,
                             Value::tuple({Value::integer(1)})});
  EXPECT_EQ(to_str(l), "[1, 'a', 1.5, {'k': \"it's\", 'n': None}, (1,)]");
  EXPECT_EQ(to_repr(Value::string("a'b\"c\\\n")), "'a\\'b\"c\\\\\\n'");
  EXPECT_EQ(to_repr(Value::string("é\x01")), "'é\\x01'");
}

TEST(JinjaValue, EqualityAndOrdering) {
  EXPECT_TRUE(values_equal(Value::integer(1), Value::number(1.0)));
  EXPECT_TRUE(values_equal(Value::boolean(true), Value::integer(1)));
  EXPECT_FALSE(
      values_equal(Value::tuple({Value::integer(1)}), Value::new_list({Value::integer(1)})));
  EXPECT_TRUE(values_equal(Value(), Value()));
  EXPECT_EQ(*compare_values(Value::string("B"), Value::string("a")), -1);
  EXPECT_FALSE(compare_values(Value::integer(1), Value::string("a")).is_ok());
  Value d = Value::new_dict();
  ASSERT_TRUE(d.dict().set(Value::integer(1), Value::string("a")).is_ok());
  ASSERT_TRUE(d.dict().set(Value::number(1.0), Value::string("b")).is_ok());
  EXPECT_EQ(d.dict().size(), 1u);
  EXPECT_FALSE(d.dict().set(Value::new_list(), Value::none()).is_ok());
}

TEST(JinjaValue, Truthiness) {
  EXPECT_FALSE(truthy(Value()));
  EXPECT_FALSE(truthy(Value::string("")));
  EXPECT_FALSE(truthy(Value::new_list()));
  EXPECT_FALSE(truthy(Value::number(0.0)));
  EXPECT_TRUE(truthy(Value::string(" ")));
}

TEST(JinjaJson, DumpsLikePython) {
  auto v = value_from_json(nlohmann::ordered_json::parse(
      R"({"b": [1, 2.0, "é", null, true], "a": {}, "c": "\u0001\"\\\n"})"));
  ASSERT_TRUE(v.is_ok());
  EXPECT_EQ(*dump_json(*v, {}),
            R"({"b": [1, 2.0, "é", null, true], "a": {}, "c": "\u0001\"\\\n"})");
  JsonDumpOptions indent;
  indent.indent = "  ";
  EXPECT_EQ(*dump_json(*v, indent),
            "{\n  \"b\": [\n    1,\n    2.0,\n    \"é\",\n    null,\n    true\n  ],\n"
            "  \"a\": {},\n  \"c\": \"\\u0001\\\"\\\\\\n\"\n}");
  JsonDumpOptions ascii;
  ascii.ensure_ascii = true;
  EXPECT_EQ(*dump_json(Value::string("é😀\x7f"), ascii), R"("\u00e9\ud83d\ude00\u007f")");
  EXPECT_FALSE(dump_json(Value(), {}).is_ok());
}

TEST(JinjaStrings, PythonStrSemantics) {
  EXPECT_EQ(pystr::strip("\u3000 x\xc2\xa0", std::nullopt, true, true), "x");
  EXPECT_EQ(pystr::split(" a  b ", std::nullopt, -1), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(pystr::split(" a b  c ", std::nullopt, 1), (std::vector<std::string>{"a", "b  c "}));
  EXPECT_EQ(pystr::rsplit("a b c", std::string(" "), 1), (std::vector<std::string>{"a b", "c"}));
  EXPECT_EQ(pystr::splitlines("a\r\nb\rc\n", false), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(pystr::slice("héllo", std::nullopt, std::nullopt, -1), "olléh");
  EXPECT_EQ(pystr::count_code_points("héllo"), 5u);
  EXPECT_EQ(pystr::jinja_title("hello-world (x)"), "Hello-World (X)");
  // Invalid UTF-8 bytes survive untouched.
  EXPECT_EQ(pystr::upper("a\xff"), "A\xff");
}

}  // namespace
}  // namespace cohort::text::jinja
