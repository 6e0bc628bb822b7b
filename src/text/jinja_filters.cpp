// jinja2's builtin filters (and Hugging Face's tojson), with Python's semantics.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "text/jinja_builtins.h"
#include "text/jinja_interpreter.h"
#include "text/jinja_json.h"
#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

using Args = std::vector<Value>;

Result<Args> bind(std::string_view name, CallArgs& args,
                  std::initializer_list<std::string_view> names, size_t n_required = 0) {
  return bind_args(name, args, names, n_required);
}

Value or_default(const Value& v, Value fallback) {
  return v.is_undefined() ? std::move(fallback) : v;
}

// make_attrgetter: "a.b.0" looked up with getitem, part by part.
Result<Value> get_path(Interpreter& in, Value item, const Value& attribute) {
  if (!attribute.is_string()) return in.get_item(item, attribute);
  for (const std::string& part : pystr::split(attribute.str(), std::string("."), -1)) {
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    const Value key =
        digits ? Value::integer(std::strtoll(part.c_str(), nullptr, 10)) : Value::string(part);
    auto next = in.get_item(item, key);
    if (!next.is_ok()) return next;
    item = std::move(*next);
  }
  return item;
}

// The value sort/unique/min/max compare: lower-cased strings unless case_sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
  if (!case_sensitive && v.is_string()) return Value::string(pystr::lower(v.str()));
  return v;
}

Result<List> items_of(const Value& v) { return iterate(v); }

// ---- string filters ----

template <std::string (*Fn)(std::string_view)>
Result<Value> f_case(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("case filter", args, {});
  if (!a.is_ok()) return a.status();
  return Value::string(Fn(to_str(v)), v.is_safe());
}

Result<Value> f_trim(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("trim", args, {"chars"});
  if (!a.is_ok()) return a.status();
  std::optional<std::string> chars;
  if ((*a)[0].is_string()) chars = (*a)[0].str();
  return Value::string(pystr::strip(to_str(v), chars, true, true), v.is_safe());
}

Result<Value> f_replace(Interpreter& in, const Value& v, CallArgs& args) {
  auto a = bind("replace", args, {"old", "new", "count"}, 2);
  if (!a.is_ok()) return a.status();
  int64_t count = -1;
  if ((*a)[2].is_int()) count = (*a)[2].as_int();
  std::string r = pystr::replace(to_str(v), to_str((*a)[0]), to_str((*a)[1]), count);
  COHORT_RETURN_IF_ERROR(in.check_size(r.size()));
  return Value::string(std::move(r));
}

Result<Value> f_string(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("string", args, {});
  if (!a.is_ok()) return a.status();
  if (v.is_string()) return v;
  return Value::string(to_str(v));
}

Result<Value> f_safe(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("safe", args, {});
  if (!a.is_ok()) return a.status();
  return Value::string(to_str(v), true);
}

Result<Value> f_escape(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("escape", args, {});
  if (!a.is_ok()) return a.status();
  if (v.is_string() && v.is_safe()) return v;
  return Value::string(pystr::html_escape(to_str(v)), true);
}

Result<Value> f_indent(Interpreter& in, const Value& v, CallArgs& args) {
  auto a = bind("indent", args, {"width", "first", "blank"});
  if (!a.is_ok()) return a.status();
  const Value& width = (*a)[0];
  std::string pad;
  if (width.is_string()) {
    pad = width.str();
  } else if (width.is_undefined()) {
    pad = "    ";
  } else if (width.is_int() || width.is_bool()) {
    pad = std::string(static_cast<size_t>(std::max<int64_t>(0, width.as_int())), ' ');
  } else {
    return Status::invalid_argument("indent width must be an int or str");
  }
  const bool first = truthy((*a)[1]);
  const bool blank = truthy((*a)[2]);
  const std::vector<std::string> lines = pystr::splitlines(to_str(v) + "\n", false);
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i) out += "\n";
    if (i && (blank || !lines[i].empty())) out += pad;
    out += lines[i];
  }
  if (first) out = pad + out;
  COHORT_RETURN_IF_ERROR(in.check_size(out.size()));
  return Value::string(std::move(out), v.is_safe());
}

Result<Value> f_wordcount(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("wordcount", args, {});
  if (!a.is_ok()) return a.status();
  int64_t n = 0;
  bool in_word = false;
  for (uint32_t cp : pystr::decode(to_str(v)).cps) {
    const bool w = (cp >= '0' && cp <= '9') || cp == '_' || pystr::is_cased_lower(cp) ||
                   pystr::is_cased_upper(cp) || (cp >= 0x100 && !pystr::is_space(cp));
    if (w && !in_word) ++n;
    in_word = w;
  }
  return Value::integer(n);
}

// ---- conversion ----

Result<Value> f_tojson(Interpreter& in, const Value& v, CallArgs& args) {
  // Hugging Face's tojson(x, ensure_ascii=False, indent=None, separators=None,
  // sort_keys=False) = json.dumps with those arguments.
  auto a = bind("tojson", args, {"ensure_ascii", "indent", "separators", "sort_keys"});
  if (!a.is_ok()) return a.status();
  JsonDumpOptions o;
  o.ensure_ascii = truthy((*a)[0]);
  const Value& indent = (*a)[1];
  if (indent.is_string()) {
    o.indent = indent.str();
  } else if (indent.is_int() || indent.is_bool()) {
    o.indent = std::string(static_cast<size_t>(std::max<int64_t>(0, indent.as_int())), ' ');
  } else if (!indent.is_undefined() && !indent.is_none()) {
    return Status::invalid_argument("tojson: indent must be an int or str");
  }
  const Value& seps = (*a)[2];
  if (seps.is_list_or_tuple()) {
    if (seps.items().size() != 2 || !seps.items()[0].is_string() || !seps.items()[1].is_string()) {
      return Status::invalid_argument("tojson: separators must be two strings");
    }
    o.item_sep = seps.items()[0].str();
    o.key_sep = seps.items()[1].str();
  }
  o.sort_keys = truthy((*a)[3]);
  auto s = dump_json(v, o);
  if (!s.is_ok()) return s.status();
  COHORT_RETURN_IF_ERROR(in.check_size(s->size()));
  return Value::string(std::move(*s));
}

// Python's int(str, base) on a whole string (whitespace and underscores allowed).
std::optional<int64_t> parse_int(std::string s, int base) {
  s = pystr::strip(s, std::nullopt, true, true);
  std::string digits;
  for (char c : s) {
    if (c != '_') digits += c;
  }
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(digits.c_str(), &end, base);
  if (errno || *end != '\0') return std::nullopt;
  return v;
}

std::optional<double> parse_float(const std::string& text) {
  const std::string s = pystr::strip(text, std::nullopt, true, true);
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (*end != '\0') return std::nullopt;
  return d;
}

Result<Value> f_int(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("int", args, {"default", "base"});
  if (!a.is_ok()) return a.status();
  const Value fallback = or_default((*a)[0], Value::integer(0));
  const int base = (*a)[1].is_int() ? static_cast<int>((*a)[1].as_int()) : 10;
  if (v.is_int() || v.is_bool()) return Value::integer(v.as_int());
  if (v.is_float()) {
    const double d = v.as_float();
    if (!std::isfinite(d) || std::fabs(d) >= 9.2e18) return fallback;
    return Value::integer(static_cast<int64_t>(d));
  }
  if (v.is_string()) {
    if (auto i = parse_int(v.str(), base)) return Value::integer(*i);
    if (auto d = parse_float(v.str()); d && std::isfinite(*d) && std::fabs(*d) < 9.2e18) {
      return Value::integer(static_cast<int64_t>(*d));
    }
  }
  return fallback;
}

Result<Value> f_float(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("float", args, {"default"});
  if (!a.is_ok()) return a.status();
  if (v.is_number()) return Value::number(v.as_float());
  if (v.is_string()) {
    if (auto d = parse_float(v.str())) return Value::number(*d);
  }
  return or_default((*a)[0], Value::number(0.0));
}

Result<Value> f_list(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("list", args, {});
  if (!a.is_ok()) return a.status();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  return Value::new_list(std::move(*items));
}

Result<Value> f_items(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("items", args, {});
  if (!a.is_ok()) return a.status();
  if (v.is_undefined()) return Value::new_list();
  if (!v.is_dict()) return Status::invalid_argument("Can only get item pairs from a mapping.");
  List items;
  for (const auto& [k, x] : v.dict().entries()) items.push_back(Value::tuple({k, x}));
  return Value::new_list(std::move(items));
}

// ---- sequences ----

Result<Value> f_length(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("length", args, {});
  if (!a.is_ok()) return a.status();
  auto n = length_of(v);
  if (!n.is_ok()) return n.status();
  return Value::integer(*n);
}

Result<Value> f_first(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("first", args, {});
  if (!a.is_ok()) return a.status();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  if (items->empty()) return Value::undefined("No first item, sequence was empty.");
  return items->front();
}

Result<Value> f_last(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("last", args, {});
  if (!a.is_ok()) return a.status();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  if (items->empty()) return Value::undefined("No last item, sequence was empty.");
  return items->back();
}

Result<Value> f_reverse(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("reverse", args, {});
  if (!a.is_ok()) return a.status();
  if (v.is_string()) return Value::string(pystr::slice(v.str(), std::nullopt, std::nullopt, -1));
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  std::reverse(items->begin(), items->end());
  return Value::new_list(std::move(*items));
}

Result<Value> f_join(Interpreter& in, const Value& v, CallArgs& args) {
  auto a = bind("join", args, {"d", "attribute"});
  if (!a.is_ok()) return a.status();
  const std::string sep = (*a)[0].is_undefined() ? "" : to_str((*a)[0]);
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  std::string out;
  for (size_t i = 0; i < items->size(); ++i) {
    Value x = (*items)[i];
    if (!(*a)[1].is_undefined() && !(*a)[1].is_none()) {
      auto got = get_path(in, x, (*a)[1]);
      if (!got.is_ok()) return got.status();
      x = std::move(*got);
    }
    if (i) out += sep;
    out += to_str(x);
    COHORT_RETURN_IF_ERROR(in.check_size(out.size()));
  }
  return Value::string(std::move(out));
}

Result<Value> f_batch(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("batch", args, {"linecount", "fill_with"}, 1);
  if (!a.is_ok()) return a.status();
  if (!(*a)[0].is_int() || (*a)[0].as_int() <= 0) {
    return Status::invalid_argument("batch: linecount must be a positive int");
  }
  const auto n = static_cast<size_t>((*a)[0].as_int());
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  List out;
  List cur;
  for (const Value& x : *items) {
    if (cur.size() == n) {
      out.push_back(Value::new_list(std::move(cur)));
      cur.clear();
    }
    cur.push_back(x);
  }
  if (!cur.empty()) {
    if (!(*a)[1].is_undefined() && !(*a)[1].is_none()) {
      while (cur.size() < n) cur.push_back((*a)[1]);
    }
    out.push_back(Value::new_list(std::move(cur)));
  }
  return Value::new_list(std::move(out));
}

Result<Value> f_default(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("default", args, {"default_value", "boolean"});
  if (!a.is_ok()) return a.status();
  const bool boolean = truthy((*a)[1]);
  if (v.is_undefined() || (boolean && !truthy(v))) {
    return (*a)[0].is_undefined() ? Value::string("") : (*a)[0];
  }
  return v;
}

Result<Value> f_attr(Interpreter&, const Value& v, CallArgs& args) {
  // Attributes only (methods, namespace fields): unlike obj.name, no fallback to items.
  auto a = bind("attr", args, {"name"}, 1);
  if (!a.is_ok()) return a.status();
  const std::string name = to_str((*a)[0]);
  if (auto m = bind_method(v, name)) return std::move(*m);
  if (v.is_object()) {
    if (const Value* x = v.object().attrs.find(name)) return *x;
  }
  return Value::undefined("'" + type_name(v) + " object' has no attribute '" + name + "'");
}

// select/reject/selectattr/rejectattr.
Result<Value> select_impl(Interpreter& in, const Value& v, CallArgs& args, bool by_attr,
                          bool keep_when) {
  if (!truthy(v)) return Value::new_list();
  size_t off = 0;
  Value attribute;
  if (by_attr) {
    if (args.args.empty()) {
      return Status::invalid_argument("Missing parameter for attribute name");
    }
    attribute = args.args[0];
    off = 1;
  }
  std::string test;
  CallArgs test_args;
  if (args.args.size() > off) {
    test = to_str(args.args[off]);
    test_args.args.assign(args.args.begin() + static_cast<long>(off) + 1, args.args.end());
  }
  test_args.kwargs = args.kwargs;
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  List out;
  for (const Value& item : *items) {
    Value subject = item;
    if (by_attr) {
      auto got = get_path(in, item, attribute);
      if (!got.is_ok()) return got.status();
      subject = std::move(*got);
    }
    bool pass = truthy(subject);
    if (!test.empty()) {
      CallArgs call_args = test_args;
      auto r = in.call_test(test, subject, call_args);
      if (!r.is_ok()) return r.status();
      pass = *r;
    }
    if (pass == keep_when) out.push_back(item);
  }
  return Value::new_list(std::move(out));
}

Result<Value> f_select(Interpreter& in, const Value& v, CallArgs& a) {
  return select_impl(in, v, a, false, true);
}
Result<Value> f_reject(Interpreter& in, const Value& v, CallArgs& a) {
  return select_impl(in, v, a, false, false);
}
Result<Value> f_selectattr(Interpreter& in, const Value& v, CallArgs& a) {
  return select_impl(in, v, a, true, true);
}
Result<Value> f_rejectattr(Interpreter& in, const Value& v, CallArgs& a) {
  return select_impl(in, v, a, true, false);
}

Result<Value> f_map(Interpreter& in, const Value& v, CallArgs& args) {
  if (!truthy(v)) return Value::new_list();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  List out;
  if (args.args.empty()) {
    Value attribute;
    Value fallback;
    for (const auto& [k, x] : args.kwargs) {
      if (k == "attribute") {
        attribute = x;
      } else if (k == "default") {
        fallback = x;
      } else {
        return Status::invalid_argument("Unexpected keyword argument '" + k + "'");
      }
    }
    if (attribute.is_undefined()) return Status::invalid_argument("map requires a filter argument");
    for (const Value& item : *items) {
      auto got = get_path(in, item, attribute);
      if (!got.is_ok()) return got.status();
      out.push_back(got->is_undefined() && !fallback.is_undefined() && !fallback.is_none()
                        ? fallback
                        : std::move(*got));
    }
    return Value::new_list(std::move(out));
  }
  const std::string filter = to_str(args.args[0]);
  for (const Value& item : *items) {
    CallArgs call_args;
    call_args.args.assign(args.args.begin() + 1, args.args.end());
    call_args.kwargs = args.kwargs;
    auto r = in.call_filter(filter, item, call_args);
    if (!r.is_ok()) return r.status();
    out.push_back(std::move(*r));
  }
  return Value::new_list(std::move(out));
}

// Sorts items by key(item) with Python's stable sorted(); comparison errors propagate.
Status sort_by(List& items, const std::vector<Value>& keys, bool reverse) {
  std::vector<size_t> order(items.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  Status err;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (!err.is_ok()) return false;
    auto c = reverse ? compare_values(keys[y], keys[x]) : compare_values(keys[x], keys[y]);
    if (!c.is_ok()) {
      err = c.status();
      return false;
    }
    return *c < 0;
  });
  COHORT_RETURN_IF_ERROR(err);
  List sorted;
  sorted.reserve(items.size());
  for (size_t i : order) sorted.push_back(std::move(items[i]));
  items = std::move(sorted);
  return Status::ok();
}

// The key of one item for sort/unique/min/max: attribute(s), then case folding.
Result<Value> item_key(Interpreter& in, const Value& item, const Value& attribute,
                       bool case_sensitive) {
  if (attribute.is_undefined() || attribute.is_none()) return sort_key(item, case_sensitive);
  if (attribute.is_string() && attribute.str().find(',') != std::string::npos) {
    List parts;
    for (const std::string& one : pystr::split(attribute.str(), std::string(","), -1)) {
      auto got = get_path(in, item, Value::string(one));
      if (!got.is_ok()) return got;
      parts.push_back(sort_key(*got, case_sensitive));
    }
    return Value::new_list(std::move(parts));
  }
  auto got = get_path(in, item, attribute);
  if (!got.is_ok()) return got;
  return sort_key(*got, case_sensitive);
}

Result<Value> f_sort(Interpreter& in, const Value& v, CallArgs& args) {
  auto a = bind("sort", args, {"reverse", "case_sensitive", "attribute"});
  if (!a.is_ok()) return a.status();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  std::vector<Value> keys;
  for (const Value& x : *items) {
    auto k = item_key(in, x, (*a)[2], truthy((*a)[1]));
    if (!k.is_ok()) return k.status();
    keys.push_back(std::move(*k));
  }
  COHORT_RETURN_IF_ERROR(sort_by(*items, keys, truthy((*a)[0])));
  return Value::new_list(std::move(*items));
}

Result<Value> f_dictsort(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("dictsort", args, {"case_sensitive", "by", "reverse"});
  if (!a.is_ok()) return a.status();
  if (!v.is_dict()) return Status::invalid_argument("dictsort: value must be a dict");
  const bool by_value = (*a)[1].is_string() && (*a)[1].str() == "value";
  List items;
  std::vector<Value> keys;
  for (const auto& [k, x] : v.dict().entries()) {
    items.push_back(Value::tuple({k, x}));
    keys.push_back(sort_key(by_value ? x : k, truthy((*a)[0])));
  }
  COHORT_RETURN_IF_ERROR(sort_by(items, keys, truthy((*a)[2])));
  return Value::new_list(std::move(items));
}

Result<Value> f_unique(Interpreter& in, const Value& v, CallArgs& args) {
  auto a = bind("unique", args, {"case_sensitive", "attribute"});
  if (!a.is_ok()) return a.status();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  Dict seen;
  List out;
  for (const Value& x : *items) {
    auto k = item_key(in, x, (*a)[1], truthy((*a)[0]));
    if (!k.is_ok()) return k.status();
    if (seen.find(*k)) continue;
    COHORT_RETURN_IF_ERROR(seen.set(*k, Value::none()));
    out.push_back(x);
  }
  return Value::new_list(std::move(out));
}

Result<Value> min_max(Interpreter& in, const Value& v, CallArgs& args, bool want_max) {
  auto a = bind(want_max ? "max" : "min", args, {"case_sensitive", "attribute"});
  if (!a.is_ok()) return a.status();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  if (items->empty()) return Value::undefined("No aggregated item, sequence was empty.");
  size_t best = 0;
  Value best_key;
  for (size_t i = 0; i < items->size(); ++i) {
    auto k = item_key(in, (*items)[i], (*a)[1], truthy((*a)[0]));
    if (!k.is_ok()) return k.status();
    if (i == 0) {
      best_key = std::move(*k);
      continue;
    }
    auto c = compare_values(*k, best_key);
    if (!c.is_ok()) return c.status();
    if (want_max ? *c > 0 : *c < 0) {
      best = i;
      best_key = std::move(*k);
    }
  }
  return (*items)[best];
}
Result<Value> f_max(Interpreter& in, const Value& v, CallArgs& a) {
  return min_max(in, v, a, true);
}
Result<Value> f_min(Interpreter& in, const Value& v, CallArgs& a) {
  return min_max(in, v, a, false);
}

Result<Value> f_sum(Interpreter& in, const Value& v, CallArgs& args) {
  auto a = bind("sum", args, {"attribute", "start"});
  if (!a.is_ok()) return a.status();
  auto items = items_of(v);
  if (!items.is_ok()) return items.status();
  Value total = or_default((*a)[1], Value::integer(0));
  for (const Value& x : *items) {
    Value term = x;
    if (!(*a)[0].is_undefined() && !(*a)[0].is_none()) {
      auto got = get_path(in, x, (*a)[0]);
      if (!got.is_ok()) return got.status();
      term = std::move(*got);
    }
    if (!total.is_number() || !term.is_number()) {
      return Status::invalid_argument("unsupported operand type(s) for +: '" + type_name(total) +
                                      "' and '" + type_name(term) + "'");
    }
    if (total.is_float() || term.is_float()) {
      total = Value::number(total.as_float() + term.as_float());
    } else {
      int64_t r = 0;
      if (__builtin_add_overflow(total.as_int(), term.as_int(), &r)) {
        return Status::invalid_argument("integer overflow");
      }
      total = Value::integer(r);
    }
  }
  return total;
}

// ---- numbers ----

Result<Value> f_abs(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("abs", args, {});
  if (!a.is_ok()) return a.status();
  if (v.is_float()) return Value::number(std::fabs(v.as_float()));
  if (v.is_int() || v.is_bool()) {
    if (v.as_int() == INT64_MIN) return Status::invalid_argument("integer overflow");
    return Value::integer(v.as_int() < 0 ? -v.as_int() : v.as_int());
  }
  return Status::invalid_argument("bad operand type for abs(): '" + type_name(v) + "'");
}

Result<Value> f_round(Interpreter&, const Value& v, CallArgs& args) {
  auto a = bind("round", args, {"precision", "method"});
  if (!a.is_ok()) return a.status();
  const int64_t precision = (*a)[0].is_int() ? (*a)[0].as_int() : 0;
  const std::string method = (*a)[1].is_string() ? (*a)[1].str() : "common";
  if (!v.is_number()) {
    return Status::invalid_argument("type " + type_name(v) + " doesn't define __round__ method");
  }
  if (method != "common" && method != "ceil" && method != "floor") {
    return Status::invalid_argument("method must be common, ceil or floor");
  }
  const double x = v.as_float();
  if (method != "common") {
    const double scale = std::pow(10.0, static_cast<double>(precision));
    const double r = method == "ceil" ? std::ceil(x * scale) : std::floor(x * scale);
    return Value::number(r / scale);
  }
  if (!v.is_float()) return Value::integer(v.as_int());
  if (!std::isfinite(x)) return v;
  if (precision >= 0 && precision < 300) {
    // printf rounds the exact binary value half-to-even, as Python's round() does.
    char buf[512];
    std::snprintf(buf, sizeof(buf), "%.*f", static_cast<int>(precision), x);
    return Value::number(std::strtod(buf, nullptr));
  }
  const double scale = std::pow(10.0, static_cast<double>(-precision));
  return Value::number(std::nearbyint(x / scale) * scale);
}

struct FilterEntry {
  std::string_view name;
  FilterFn fn;
};

constexpr FilterEntry kFilters[] = {
    {"abs", f_abs},
    {"attr", f_attr},
    {"batch", f_batch},
    {"capitalize", f_case<pystr::capitalize>},
    {"count", f_length},
    {"d", f_default},
    {"default", f_default},
    {"dictsort", f_dictsort},
    {"e", f_escape},
    {"escape", f_escape},
    {"first", f_first},
    {"float", f_float},
    {"indent", f_indent},
    {"int", f_int},
    {"items", f_items},
    {"join", f_join},
    {"last", f_last},
    {"length", f_length},
    {"list", f_list},
    {"lower", f_case<pystr::lower>},
    {"map", f_map},
    {"max", f_max},
    {"min", f_min},
    {"reject", f_reject},
    {"rejectattr", f_rejectattr},
    {"replace", f_replace},
    {"reverse", f_reverse},
    {"round", f_round},
    {"safe", f_safe},
    {"select", f_select},
    {"selectattr", f_selectattr},
    {"sort", f_sort},
    {"string", f_string},
    {"sum", f_sum},
    {"title", f_case<pystr::jinja_title>},
    {"tojson", f_tojson},
    {"trim", f_trim},
    {"unique", f_unique},
    {"upper", f_case<pystr::upper>},
    {"wordcount", f_wordcount},
};

}  // namespace

FilterFn find_filter(std::string_view name) {
  for (const auto& f : kFilters) {
    if (f.name == name) return f.fn;
  }
  return nullptr;
}

}  // namespace cohort::text::jinja
