// Python methods of str, dict and list values (message.content.strip(), d.items(), ...).
#include <algorithm>
#include <optional>

#include "text/jinja_builtins.h"
#include "text/jinja_interpreter.h"
#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

using Method = Result<Value> (*)(Interpreter&, const Value& self, CallArgs&);

Value str_list(const std::vector<std::string>& parts) {
  List items;
  items.reserve(parts.size());
  for (const auto& p : parts) items.push_back(Value::string(p));
  return Value::new_list(std::move(items));
}

// An optional str argument (None and a missing argument both mean "not given").
Result<std::optional<std::string>> opt_str(const Value& v, std::string_view what) {
  if (v.is_undefined() || v.is_none()) return std::optional<std::string>();
  if (!v.is_string()) {
    return Status::invalid_argument(std::string(what) + " arg must be None or str");
  }
  return std::optional<std::string>(v.str());
}

Result<int64_t> opt_int(const Value& v, int64_t fallback) {
  if (v.is_undefined() || v.is_none()) return fallback;
  if (!v.is_int() && !v.is_bool()) {
    return Status::invalid_argument("'" + type_name(v) +
                                    "' object cannot be interpreted as an integer");
  }
  return v.as_int();
}

Result<Value> str_strip_impl(Interpreter&, const Value& self, CallArgs& args, bool l, bool r,
                             const char* name) {
  auto a = bind_args(name, args, {"chars"});
  if (!a.is_ok()) return a.status();
  auto chars = opt_str((*a)[0], std::string("strip"));
  if (!chars.is_ok()) return chars.status();
  return Value::string(pystr::strip(self.str(), *chars, l, r));
}
Result<Value> str_strip(Interpreter& in, const Value& self, CallArgs& args) {
  return str_strip_impl(in, self, args, true, true, "strip");
}
Result<Value> str_lstrip(Interpreter& in, const Value& self, CallArgs& args) {
  return str_strip_impl(in, self, args, true, false, "lstrip");
}
Result<Value> str_rstrip(Interpreter& in, const Value& self, CallArgs& args) {
  return str_strip_impl(in, self, args, false, true, "rstrip");
}

Result<Value> str_split_impl(const Value& self, CallArgs& args, bool from_right) {
  auto a = bind_args(from_right ? "rsplit" : "split", args, {"sep", "maxsplit"});
  if (!a.is_ok()) return a.status();
  auto sep = opt_str((*a)[0], "sep");
  if (!sep.is_ok()) return sep.status();
  if (*sep && (*sep)->empty()) return Status::invalid_argument("empty separator");
  auto maxsplit = opt_int((*a)[1], -1);
  if (!maxsplit.is_ok()) return maxsplit.status();
  return str_list(from_right ? pystr::rsplit(self.str(), *sep, *maxsplit)
                             : pystr::split(self.str(), *sep, *maxsplit));
}
Result<Value> str_split(Interpreter&, const Value& self, CallArgs& args) {
  return str_split_impl(self, args, false);
}
Result<Value> str_rsplit(Interpreter&, const Value& self, CallArgs& args) {
  return str_split_impl(self, args, true);
}

Result<Value> str_splitlines(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("splitlines", args, {"keepends"});
  if (!a.is_ok()) return a.status();
  return str_list(pystr::splitlines(self.str(), truthy((*a)[0])));
}

Result<Value> str_affix_impl(const Value& self, CallArgs& args, bool prefix) {
  const char* name = prefix ? "startswith" : "endswith";
  auto a = bind_args(name, args, {"affix", "start", "end"}, 1);
  if (!a.is_ok()) return a.status();
  std::string_view s = self.str();
  if (!(*a)[1].is_undefined() || !(*a)[2].is_undefined()) {
    auto start = opt_int((*a)[1], 0);
    auto end = opt_int((*a)[2], INT64_MAX);
    if (!start.is_ok()) return start.status();
    if (!end.is_ok()) return end.status();
    const std::string sub =
        pystr::slice(s, *start, *end == INT64_MAX ? std::nullopt : std::optional(*end), 1);
    CallArgs inner;
    inner.args.push_back((*a)[0]);
    return str_affix_impl(Value::string(sub), inner, prefix);
  }
  List candidates;
  if ((*a)[0].is_tuple()) {
    candidates = (*a)[0].items();
  } else {
    candidates.push_back((*a)[0]);
  }
  for (const Value& c : candidates) {
    if (!c.is_string()) {
      return Status::invalid_argument(
          std::string(name) + " first arg must be str or a tuple of str, not " + type_name(c));
    }
    const std::string& x = c.str();
    const bool hit =
        x.size() <= s.size() && (prefix ? s.compare(0, x.size(), x) == 0
                                        : s.compare(s.size() - x.size(), x.size(), x) == 0);
    if (hit) return Value::boolean(true);
  }
  return Value::boolean(false);
}
Result<Value> str_startswith(Interpreter&, const Value& self, CallArgs& args) {
  return str_affix_impl(self, args, true);
}
Result<Value> str_endswith(Interpreter&, const Value& self, CallArgs& args) {
  return str_affix_impl(self, args, false);
}

template <std::string (*Fn)(std::string_view)>
Result<Value> str_map(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("str method", args, {});
  if (!a.is_ok()) return a.status();
  return Value::string(Fn(self.str()));
}

Result<Value> str_replace(Interpreter& in, const Value& self, CallArgs& args) {
  auto a = bind_args("replace", args, {"old", "new", "count"}, 2);
  if (!a.is_ok()) return a.status();
  if (!(*a)[0].is_string() || !(*a)[1].is_string()) {
    return Status::invalid_argument("replace() arguments must be str");
  }
  auto count = opt_int((*a)[2], -1);
  if (!count.is_ok()) return count.status();
  std::string r = pystr::replace(self.str(), (*a)[0].str(), (*a)[1].str(), *count);
  COHORT_RETURN_IF_ERROR(in.check_size(r.size()));
  return Value::string(std::move(r));
}

Result<Value> str_find_impl(const Value& self, CallArgs& args, const char* name, bool right,
                            bool must) {
  auto a = bind_args(name, args, {"sub"}, 1);
  if (!a.is_ok()) return a.status();
  if (!(*a)[0].is_string())
    return Status::invalid_argument("must be str, not " + type_name((*a)[0]));
  const int64_t at = pystr::find(self.str(), (*a)[0].str(), right);
  if (must && at < 0) return Status::invalid_argument("substring not found");
  return Value::integer(at);
}
Result<Value> str_find(Interpreter&, const Value& self, CallArgs& args) {
  return str_find_impl(self, args, "find", false, false);
}
Result<Value> str_rfind(Interpreter&, const Value& self, CallArgs& args) {
  return str_find_impl(self, args, "rfind", true, false);
}
Result<Value> str_index(Interpreter&, const Value& self, CallArgs& args) {
  return str_find_impl(self, args, "index", false, true);
}

Result<Value> str_count(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("count", args, {"sub"}, 1);
  if (!a.is_ok()) return a.status();
  if (!(*a)[0].is_string())
    return Status::invalid_argument("must be str, not " + type_name((*a)[0]));
  return Value::integer(pystr::count(self.str(), (*a)[0].str()));
}

Result<Value> str_join(Interpreter& in, const Value& self, CallArgs& args) {
  auto a = bind_args("join", args, {"iterable"}, 1);
  if (!a.is_ok()) return a.status();
  auto items = iterate((*a)[0]);
  if (!items.is_ok()) return items.status();
  std::string out;
  for (size_t i = 0; i < items->size(); ++i) {
    const Value& x = (*items)[i];
    if (!x.is_string()) {
      return Status::invalid_argument("sequence item " + std::to_string(i) +
                                      ": expected str instance, " + type_name(x) + " found");
    }
    if (i) out += self.str();
    out += x.str();
    COHORT_RETURN_IF_ERROR(in.check_size(out.size()));
  }
  return Value::string(std::move(out));
}

// str.format with {}, {0} and {name} fields (no format specs).
Result<Value> str_format(Interpreter&, const Value& self, CallArgs& args) {
  const std::string& f = self.str();
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    const char c = f[i];
    if ((c == '{' || c == '}') && i + 1 < f.size() && f[i + 1] == c) {
      out += c;
      ++i;
      continue;
    }
    if (c != '{') {
      out += c;
      continue;
    }
    const size_t close = f.find('}', i);
    if (close == std::string::npos) return Status::invalid_argument("Single '{' in format string");
    const std::string field = f.substr(i + 1, close - i - 1);
    if (field.find_first_of(":!") != std::string::npos) {
      return Status::unsupported("format specs in str.format are not supported");
    }
    const Value* v = nullptr;
    if (field.empty() || std::all_of(field.begin(), field.end(), ::isdigit)) {
      size_t k = auto_index;
      if (field.empty()) {
        ++auto_index;
      } else {
        k = 0;
        for (char d : field) k = std::min<size_t>(k * 10 + static_cast<size_t>(d - '0'), 1u << 20);
      }
      if (k >= args.args.size()) {
        return Status::invalid_argument("Replacement index " + std::to_string(k) +
                                        " out of range for positional args tuple");
      }
      v = &args.args[k];
    } else {
      for (const auto& [name, x] : args.kwargs) {
        if (name == field) v = &x;
      }
      if (!v) return Status::invalid_argument("KeyError: '" + field + "'");
    }
    out += to_str(*v);
    i = close;
  }
  return Value::string(std::move(out));
}

template <bool (*Pred)(uint32_t)>
Result<Value> str_is(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("str method", args, {});
  if (!a.is_ok()) return a.status();
  const auto cps = pystr::decode(self.str()).cps;
  if (cps.empty()) return Value::boolean(false);
  return Value::boolean(std::all_of(cps.begin(), cps.end(), Pred));
}
bool cp_digit(uint32_t c) { return c >= '0' && c <= '9'; }
bool cp_alpha(uint32_t c) {
  return pystr::is_cased_lower(c) || pystr::is_cased_upper(c) || (c > 0xFF && !pystr::is_space(c));
}
bool cp_alnum(uint32_t c) { return cp_digit(c) || cp_alpha(c); }

Result<Value> str_case_check(const Value& self, bool want_upper) {
  bool cased = false;
  for (uint32_t c : pystr::decode(self.str()).cps) {
    if (want_upper ? pystr::is_cased_lower(c) : pystr::is_cased_upper(c)) {
      return Value::boolean(false);
    }
    cased = cased || pystr::is_cased_lower(c) || pystr::is_cased_upper(c);
  }
  return Value::boolean(cased);
}
Result<Value> str_isupper(Interpreter&, const Value& self, CallArgs&) {
  return str_case_check(self, true);
}
Result<Value> str_islower(Interpreter&, const Value& self, CallArgs&) {
  return str_case_check(self, false);
}

// ---- dict ----

Result<Value> dict_items(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("items", args, {});
  if (!a.is_ok()) return a.status();
  List items;
  for (const auto& [k, v] : self.dict().entries()) items.push_back(Value::tuple({k, v}));
  return Value::new_list(std::move(items));
}
Result<Value> dict_keys(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("keys", args, {});
  if (!a.is_ok()) return a.status();
  List items;
  for (const auto& e : self.dict().entries()) items.push_back(e.first);
  return Value::new_list(std::move(items));
}
Result<Value> dict_values(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("values", args, {});
  if (!a.is_ok()) return a.status();
  List items;
  for (const auto& e : self.dict().entries()) items.push_back(e.second);
  return Value::new_list(std::move(items));
}
Result<Value> dict_get(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("get", args, {"key", "default"}, 1);
  if (!a.is_ok()) return a.status();
  auto k = hash_key((*a)[0]);
  if (!k.is_ok()) return k.status();
  if (const Value* v = self.dict().find((*a)[0])) return *v;
  return (*a)[1].is_undefined() ? Value::none() : (*a)[1];
}

// ---- list ----

Status check_no_cycle(const Value& self, const Value& v) {
  if (may_create_cycle(v, self.list_ptr().get())) {
    return Status::unsupported("storing a list inside itself (or a bound method) is not supported");
  }
  return Status::ok();
}

Result<Value> list_append(Interpreter& in, const Value& self, CallArgs& args) {
  auto a = bind_args("append", args, {"object"}, 1);
  if (!a.is_ok()) return a.status();
  COHORT_RETURN_IF_ERROR(in.check_size(self.items().size() + 1));
  COHORT_RETURN_IF_ERROR(check_no_cycle(self, (*a)[0]));
  self.list_ptr()->push_back((*a)[0]);
  return Value::none();
}
Result<Value> list_extend(Interpreter& in, const Value& self, CallArgs& args) {
  auto a = bind_args("extend", args, {"iterable"}, 1);
  if (!a.is_ok()) return a.status();
  auto items = iterate((*a)[0]);
  if (!items.is_ok()) return items.status();
  COHORT_RETURN_IF_ERROR(in.check_size(self.items().size() + items->size()));
  for (const Value& x : *items) COHORT_RETURN_IF_ERROR(check_no_cycle(self, x));
  self.list_ptr()->insert(self.list_ptr()->end(), items->begin(), items->end());
  return Value::none();
}
Result<Value> list_insert(Interpreter& in, const Value& self, CallArgs& args) {
  auto a = bind_args("insert", args, {"index", "object"}, 2);
  if (!a.is_ok()) return a.status();
  auto i = opt_int((*a)[0], 0);
  if (!i.is_ok()) return i.status();
  COHORT_RETURN_IF_ERROR(in.check_size(self.items().size() + 1));
  COHORT_RETURN_IF_ERROR(check_no_cycle(self, (*a)[1]));
  auto n = static_cast<int64_t>(self.items().size());
  int64_t at = *i < 0 ? std::max<int64_t>(0, *i + n) : std::min(*i, n);
  self.list_ptr()->insert(self.list_ptr()->begin() + at, (*a)[1]);
  return Value::none();
}
Result<Value> list_pop(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("pop", args, {"index"});
  if (!a.is_ok()) return a.status();
  auto i = opt_int((*a)[0], -1);
  if (!i.is_ok()) return i.status();
  List& items = *self.list_ptr();
  if (items.empty()) return Status::invalid_argument("pop from empty list");
  int64_t at = *i < 0 ? *i + static_cast<int64_t>(items.size()) : *i;
  if (at < 0 || at >= static_cast<int64_t>(items.size())) {
    return Status::invalid_argument("pop index out of range");
  }
  Value v = items[static_cast<size_t>(at)];
  items.erase(items.begin() + at);
  return v;
}
Result<Value> seq_index(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("index", args, {"value"}, 1);
  if (!a.is_ok()) return a.status();
  for (size_t i = 0; i < self.items().size(); ++i) {
    if (values_equal(self.items()[i], (*a)[0])) return Value::integer(static_cast<int64_t>(i));
  }
  return Status::invalid_argument(to_repr((*a)[0]) + " is not in list");
}
Result<Value> seq_count(Interpreter&, const Value& self, CallArgs& args) {
  auto a = bind_args("count", args, {"value"}, 1);
  if (!a.is_ok()) return a.status();
  int64_t n = 0;
  for (const Value& x : self.items()) n += values_equal(x, (*a)[0]);
  return Value::integer(n);
}

struct MethodEntry {
  std::string_view name;
  Method fn;
};

constexpr MethodEntry kStrMethods[] = {
    {"strip", str_strip},
    {"lstrip", str_lstrip},
    {"rstrip", str_rstrip},
    {"split", str_split},
    {"rsplit", str_rsplit},
    {"splitlines", str_splitlines},
    {"startswith", str_startswith},
    {"endswith", str_endswith},
    {"upper", str_map<pystr::upper>},
    {"lower", str_map<pystr::lower>},
    {"title", str_map<pystr::title>},
    {"capitalize", str_map<pystr::capitalize>},
    {"replace", str_replace},
    {"find", str_find},
    {"rfind", str_rfind},
    {"index", str_index},
    {"count", str_count},
    {"join", str_join},
    {"format", str_format},
    {"isdigit", str_is<cp_digit>},
    {"isalpha", str_is<cp_alpha>},
    {"isalnum", str_is<cp_alnum>},
    {"isspace", str_is<pystr::is_space>},
    {"isupper", str_isupper},
    {"islower", str_islower},
};

constexpr MethodEntry kDictMethods[] = {
    {"items", dict_items},
    {"keys", dict_keys},
    {"values", dict_values},
    {"get", dict_get},
};

constexpr MethodEntry kListMethods[] = {
    {"append", list_append}, {"extend", list_extend}, {"insert", list_insert},
    {"pop", list_pop},       {"index", seq_index},    {"count", seq_count},
};

constexpr MethodEntry kTupleMethods[] = {
    {"index", seq_index},
    {"count", seq_count},
};

template <size_t N>
Method find_method(const MethodEntry (&table)[N], std::string_view name) {
  for (const auto& e : table) {
    if (e.name == name) return e.fn;
  }
  return nullptr;
}

}  // namespace

std::optional<Value> bind_method(const Value& obj, std::string_view name) {
  Method m = nullptr;
  if (obj.is_string()) {
    m = find_method(kStrMethods, name);
  } else if (obj.is_dict()) {
    m = find_method(kDictMethods, name);
  } else if (obj.is_list()) {
    m = find_method(kListMethods, name);
  } else if (obj.is_tuple()) {
    m = find_method(kTupleMethods, name);
  }
  if (!m) return std::nullopt;
  auto c = std::make_shared<Callable>();
  c->name = std::string(name);
  c->fn = [m, obj](Interpreter& in, CallArgs& args) { return m(in, obj, args); };
  c->holds_receiver = true;
  return Value::callable(std::move(c));
}

}  // namespace cohort::text::jinja
