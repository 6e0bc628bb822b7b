// jinja2's tests, the template globals, and argument binding for all builtins.
// Filters: jinja_filters.cpp; str/dict/list methods: jinja_methods.cpp.
#include "text/jinja_builtins.h"

#include <ctime>

#include "text/jinja_interpreter.h"
#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

// The sandbox refuses ranges longer than this (jinja2.sandbox.MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

Result<Value> first_arg(std::string_view test, CallArgs& args) {
  auto a = bind_args(test, args, {"other"}, 1);
  if (!a.is_ok()) return a.status();
  return (*a)[0];
}

Result<bool> no_args(std::string_view test, CallArgs& args) {
  auto a = bind_args(test, args, {});
  if (!a.is_ok()) return a.status();
  return true;
}

#define COHORT_SIMPLE_TEST(fn, expr)                              \
  Result<bool> fn(Interpreter&, const Value& v, CallArgs& args) { \
    auto ok = no_args(#fn, args);                                 \
    if (!ok.is_ok()) return ok;                                   \
    return (expr);                                                \
  }

COHORT_SIMPLE_TEST(t_defined, !v.is_undefined())
COHORT_SIMPLE_TEST(t_undefined, v.is_undefined())
COHORT_SIMPLE_TEST(t_none, v.is_none())
COHORT_SIMPLE_TEST(t_boolean, v.is_bool())
COHORT_SIMPLE_TEST(t_true, v.is_bool() && v.as_bool())
COHORT_SIMPLE_TEST(t_false, v.is_bool() && !v.as_bool())
COHORT_SIMPLE_TEST(t_integer, v.is_int())
COHORT_SIMPLE_TEST(t_float, v.is_float())
COHORT_SIMPLE_TEST(t_number, v.is_number())
COHORT_SIMPLE_TEST(t_string, v.is_string())
COHORT_SIMPLE_TEST(t_mapping, v.is_dict())
COHORT_SIMPLE_TEST(t_iterable,
                   v.is_undefined() || v.is_string() || v.is_list_or_tuple() || v.is_dict())
COHORT_SIMPLE_TEST(t_sequence,
                   v.is_undefined() || v.is_string() || v.is_list_or_tuple() || v.is_dict())
COHORT_SIMPLE_TEST(t_callable, v.is_callable())
COHORT_SIMPLE_TEST(t_escaped, v.is_string() && v.is_safe())
#undef COHORT_SIMPLE_TEST

Result<bool> case_test(const Value& v, CallArgs& args, bool upper) {
  auto ok = no_args(upper ? "upper" : "lower", args);
  if (!ok.is_ok()) return ok;
  bool cased = false;
  for (uint32_t c : pystr::decode(to_str(v)).cps) {
    if (upper ? pystr::is_cased_lower(c) : pystr::is_cased_upper(c)) return false;
    cased = cased || pystr::is_cased_lower(c) || pystr::is_cased_upper(c);
  }
  return cased;
}
Result<bool> t_lower(Interpreter&, const Value& v, CallArgs& a) { return case_test(v, a, false); }
Result<bool> t_upper(Interpreter&, const Value& v, CallArgs& a) { return case_test(v, a, true); }

Result<int64_t> int_operand(const Value& v) {
  if (v.is_undefined()) {
    return Status::invalid_argument(v.undefined_hint().empty() ? "value is undefined"
                                                               : v.undefined_hint());
  }
  if (!v.is_int() && !v.is_bool()) {
    return Status::invalid_argument("unsupported operand type(s) for %: '" + type_name(v) +
                                    "' and 'int'");
  }
  return v.as_int();
}

Result<bool> t_odd(Interpreter&, const Value& v, CallArgs& args) {
  auto ok = no_args("odd", args);
  if (!ok.is_ok()) return ok;
  auto i = int_operand(v);
  if (!i.is_ok()) return i.status();
  return *i % 2 != 0;
}

Result<bool> t_even(Interpreter&, const Value& v, CallArgs& args) {
  auto ok = no_args("even", args);
  if (!ok.is_ok()) return ok;
  auto i = int_operand(v);
  if (!i.is_ok()) return i.status();
  return *i % 2 == 0;
}

Result<bool> t_divisibleby(Interpreter&, const Value& v, CallArgs& args) {
  auto n = first_arg("divisibleby", args);
  if (!n.is_ok()) return n.status();
  auto i = int_operand(v);
  if (!i.is_ok()) return i.status();
  auto d = int_operand(*n);
  if (!d.is_ok()) return d.status();
  if (*d == 0) return Status::invalid_argument("integer modulo by zero");
  if (*d == -1) return true;
  return *i % *d == 0;
}

Result<bool> t_sameas(Interpreter&, const Value& v, CallArgs& args) {
  auto o = first_arg("sameas", args);
  if (!o.is_ok()) return o.status();
  if (v.kind() != o->kind()) return false;
  switch (v.kind()) {
    case ValueKind::kList:
    case ValueKind::kTuple:
      return v.list_ptr() == o->list_ptr();
    case ValueKind::kDict:
      return v.dict_ptr() == o->dict_ptr();
    default:
      return values_equal(v, *o);
  }
}

Result<bool> t_in(Interpreter&, const Value& v, CallArgs& args) {
  auto seq = first_arg("in", args);
  if (!seq.is_ok()) return seq.status();
  if (seq->is_string()) {
    if (!v.is_string()) {
      return Status::invalid_argument("'in <string>' requires string as left operand");
    }
    return seq->str().find(v.str()) != std::string::npos;
  }
  if (seq->is_dict()) return seq->dict().find(v) != nullptr;
  auto items = iterate(*seq);
  if (!items.is_ok()) return items.status();
  for (const Value& x : *items) {
    if (values_equal(x, v)) return true;
  }
  return false;
}

template <int kOp>  // 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=
Result<bool> t_compare(Interpreter&, const Value& v, CallArgs& args) {
  auto o = first_arg("comparison", args);
  if (!o.is_ok()) return o.status();
  if (kOp == 0) return values_equal(v, *o);
  if (kOp == 1) return !values_equal(v, *o);
  auto c = compare_values(v, *o);
  if (!c.is_ok()) return c.status();
  switch (kOp) {
    case 2:
      return *c < 0;
    case 3:
      return *c <= 0;
    case 4:
      return *c > 0;
    default:
      return *c >= 0;
  }
}

Result<bool> t_filter(Interpreter&, const Value& v, CallArgs& args) {
  auto ok = no_args("filter", args);
  if (!ok.is_ok()) return ok;
  return v.is_string() && find_filter(v.str()) != nullptr;
}

Result<bool> t_test(Interpreter&, const Value& v, CallArgs& args) {
  auto ok = no_args("test", args);
  if (!ok.is_ok()) return ok;
  return v.is_string() && find_test(v.str()) != nullptr;
}

struct TestEntry {
  std::string_view name;
  TestFn fn;
};

constexpr TestEntry kTests[] = {
    {"boolean", t_boolean},     {"callable", t_callable},
    {"defined", t_defined},     {"divisibleby", t_divisibleby},
    {"eq", t_compare<0>},       {"equalto", t_compare<0>},
    {"==", t_compare<0>},       {"escaped", t_escaped},
    {"even", t_even},           {"false", t_false},
    {"filter", t_filter},       {"float", t_float},
    {"ge", t_compare<5>},       {">=", t_compare<5>},
    {"gt", t_compare<4>},       {"greaterthan", t_compare<4>},
    {">", t_compare<4>},        {"in", t_in},
    {"integer", t_integer},     {"iterable", t_iterable},
    {"le", t_compare<3>},       {"<=", t_compare<3>},
    {"lower", t_lower},         {"lt", t_compare<2>},
    {"lessthan", t_compare<2>}, {"<", t_compare<2>},
    {"mapping", t_mapping},     {"ne", t_compare<1>},
    {"!=", t_compare<1>},       {"none", t_none},
    {"number", t_number},       {"odd", t_odd},
    {"sameas", t_sameas},       {"sequence", t_sequence},
    {"string", t_string},       {"test", t_test},
    {"true", t_true},           {"undefined", t_undefined},
    {"upper", t_upper},
};

// ---- globals ----

Result<int64_t> range_int(const Value& v) {
  if (!v.is_int() && !v.is_bool()) {
    return Status::invalid_argument("'" + type_name(v) +
                                    "' object cannot be interpreted as an integer");
  }
  return v.as_int();
}

Result<Value> g_range(Interpreter& in, CallArgs& args) {
  if (!args.kwargs.empty()) return Status::invalid_argument("range() takes no keyword arguments");
  if (args.args.empty() || args.args.size() > 3) {
    return Status::invalid_argument("range expected 1 to 3 arguments, got " +
                                    std::to_string(args.args.size()));
  }
  int64_t nums[3] = {0, 0, 1};
  for (size_t i = 0; i < args.args.size(); ++i) {
    auto n = range_int(args.args[i]);
    if (!n.is_ok()) return n.status();
    nums[args.args.size() == 1 ? 1 : i] = *n;
  }
  const int64_t start = nums[0], stop = nums[1], step = nums[2];
  if (step == 0) return Status::invalid_argument("range() arg 3 must not be zero");
  // Item count without overflow: ceil((stop - start) / step) when positive.
  const long double span = static_cast<long double>(stop) - static_cast<long double>(start);
  const long double count_ld = span / static_cast<long double>(step);
  if (count_ld > kMaxRange) {
    return Status::out_of_range(
        "Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  }
  List items;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    items.push_back(Value::integer(i));
    if (__builtin_add_overflow(i, step, &i)) break;
    i -= step;
  }
  COHORT_RETURN_IF_ERROR(in.check_size(items.size()));
  return Value::new_list(std::move(items));
}

// dict(mapping or pairs, **kwargs) into d.
Status fill_dict(const char* fn, CallArgs& args, Dict& d) {
  if (args.args.size() > 1) {
    return Status::invalid_argument(std::string(fn) + " expected at most 1 argument, got " +
                                    std::to_string(args.args.size()));
  }
  if (args.args.size() == 1) {
    const Value& src = args.args[0];
    if (src.is_dict()) {
      for (const auto& [k, v] : src.dict().entries()) COHORT_RETURN_IF_ERROR(d.set(k, v));
    } else {
      auto items = iterate(src);
      if (!items.is_ok()) return items.status();
      for (const Value& pair : *items) {
        if (!pair.is_list_or_tuple() || pair.items().size() != 2) {
          return Status::invalid_argument(std::string(fn) +
                                          ": sequence elements must be pairs (length 2)");
        }
        COHORT_RETURN_IF_ERROR(d.set(pair.items()[0], pair.items()[1]));
      }
    }
  }
  for (const auto& [k, v] : args.kwargs) d.set(k, v);
  return Status::ok();
}

Result<Value> g_dict(Interpreter&, CallArgs& args) {
  Value d = Value::new_dict();
  COHORT_RETURN_IF_ERROR(fill_dict("dict", args, d.dict()));
  return d;
}

Result<Value> g_namespace(Interpreter&, CallArgs& args) {
  auto ns = std::make_shared<Object>();
  ns->type_name = "Namespace";
  ns->assignable = true;
  COHORT_RETURN_IF_ERROR(fill_dict("namespace", args, ns->attrs));
  return Value::object(std::move(ns));
}

Result<Value> g_raise_exception(Interpreter& in, CallArgs& args) {
  auto a = bind_args("raise_exception", args, {"message"}, 1);
  if (!a.is_ok()) return a.status();
  return in.raise(to_str((*a)[0]));
}

// datetime.now().strftime(fmt): C strftime, except the fields Python's datetime fills
// itself for a naive time (%f microseconds, %z and %Z empty).
Result<Value> g_strftime_now(Interpreter& in, CallArgs& args) {
  auto a = bind_args("strftime_now", args, {"format"}, 1);
  if (!a.is_ok()) return a.status();
  if (!(*a)[0].is_string()) return Status::invalid_argument("strftime_now: format must be a str");
  const std::string& fmt = (*a)[0].str();
  std::string prepared;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] == '%' && i + 1 < fmt.size()) {
      const char c = fmt[i + 1];
      if (c == 'f') {
        prepared += "000000";
      } else if (c != 'z' && c != 'Z') {
        prepared += fmt.substr(i, 2);
      }
      ++i;
      continue;
    }
    prepared += fmt[i];
  }
  if (prepared.empty()) return Value::string("");
  std::tm t = in.now();
  std::string out(prepared.size() * 4 + 256, '\0');
  const size_t n = std::strftime(out.data(), out.size(), prepared.c_str(), &t);
  out.resize(n);
  return Value::string(std::move(out));
}

void add_global(Dict& globals, const char* name, Result<Value> (*fn)(Interpreter&, CallArgs&)) {
  auto c = std::make_shared<Callable>();
  c->name = name;
  c->fn = fn;
  globals.set(name, Value::callable(std::move(c)));
}

}  // namespace

TestFn find_test(std::string_view name) {
  for (const auto& t : kTests) {
    if (t.name == name) return t.fn;
  }
  return nullptr;
}

void add_globals(Dict& globals) {
  add_global(globals, "range", g_range);
  add_global(globals, "dict", g_dict);
  add_global(globals, "namespace", g_namespace);
  add_global(globals, "raise_exception", g_raise_exception);
  add_global(globals, "strftime_now", g_strftime_now);
}

Result<std::vector<Value>> bind_args(std::string_view fn_name, CallArgs& args,
                                     std::initializer_list<std::string_view> names,
                                     size_t n_required) {
  std::vector<Value> out(names.size());
  if (args.args.size() > names.size()) {
    return Status::invalid_argument(std::string(fn_name) + "() takes at most " +
                                    std::to_string(names.size()) + " argument(s) (" +
                                    std::to_string(args.args.size()) + " given)");
  }
  std::vector<bool> given(names.size(), false);
  for (size_t i = 0; i < args.args.size(); ++i) {
    out[i] = args.args[i];
    given[i] = true;
  }
  for (const auto& [k, v] : args.kwargs) {
    size_t i = 0;
    for (std::string_view n : names) {
      if (n == k) break;
      ++i;
    }
    if (i == names.size()) {
      return Status::invalid_argument(std::string(fn_name) +
                                      "() got an unexpected keyword argument '" + k + "'");
    }
    if (given[i]) {
      return Status::invalid_argument(std::string(fn_name) + "() got multiple values for '" + k +
                                      "'");
    }
    out[i] = v;
    given[i] = true;
  }
  for (size_t i = 0; i < n_required; ++i) {
    if (!given[i]) {
      return Status::invalid_argument(std::string(fn_name) + "() missing required argument '" +
                                      std::string(*(names.begin() + i)) + "'");
    }
  }
  return out;
}

}  // namespace cohort::text::jinja
