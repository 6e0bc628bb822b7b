#include "text/jinja_value.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

// Containers nested deeper than this print as "..." (Python would hit its recursion limit).
constexpr int kMaxPrintDepth = 200;

std::string repr_at(const Value& v, int depth);

std::string join_repr(const List& items, int depth) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out += ", ";
    out += repr_at(items[i], depth + 1);
  }
  return out;
}

std::string dict_repr(const Dict& d, int depth) {
  std::string out = "{";
  bool first = true;
  for (const auto& [k, v] : d.entries()) {
    if (!first) out += ", ";
    first = false;
    out += repr_at(k, depth + 1) + ": " + repr_at(v, depth + 1);
  }
  return out + "}";
}

std::string object_repr(const Object& o, int depth) {
  if (o.type_name == "LoopContext") {
    const Value* index = o.attrs.find("index");
    const Value* length = o.attrs.find("length");
    return "<LoopContext " + (index ? to_str(*index) : "?") + "/" +
           (length ? to_str(*length) : "?") + ">";
  }
  return "<" + o.type_name + " " + dict_repr(o.attrs, depth) + ">";
}

std::string repr_at(const Value& v, int depth) {
  if (depth > kMaxPrintDepth) return "...";
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return "Undefined";
    case ValueKind::kString:
      return pystr::repr(v.str());
    case ValueKind::kList:
      return "[" + join_repr(v.items(), depth) + "]";
    case ValueKind::kTuple:
      return "(" + join_repr(v.items(), depth) + (v.items().size() == 1 ? ",)" : ")");
    case ValueKind::kDict:
      return dict_repr(v.dict(), depth);
    case ValueKind::kObject:
      return object_repr(v.object(), depth);
    default:
      return to_str(v);
  }
}

bool equal_at(const Value& a, const Value& b, int depth) {
  if (depth > kMaxPrintDepth) return false;
  if (a.is_number() && b.is_number()) {
    if (a.is_float() || b.is_float()) return a.as_float() == b.as_float();
    return a.as_int() == b.as_int();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return true;
    case ValueKind::kString:
      return a.str() == b.str();
    case ValueKind::kList:
    case ValueKind::kTuple: {
      const List& x = a.items();
      const List& y = b.items();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!equal_at(x[i], y[i], depth + 1)) return false;
      }
      return true;
    }
    case ValueKind::kDict: {
      if (a.dict_ptr() == b.dict_ptr()) return true;
      if (a.dict().size() != b.dict().size()) return false;
      for (const auto& [k, v] : a.dict().entries()) {
        const Value* other = b.dict().find(k);
        if (!other || !equal_at(v, *other, depth + 1)) return false;
      }
      return true;
    }
    case ValueKind::kCallable:
      return &a.callable() == &b.callable();
    case ValueKind::kObject:
      return &a.object() == &b.object();
    default:
      return false;
  }
}

}  // namespace

Value Value::undefined(std::string hint) {
  Value v;
  v.data_ = std::move(hint);
  return v;
}

Value Value::none() {
  Value v;
  v.kind_ = ValueKind::kNone;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.kind_ = ValueKind::kBool;
  v.data_ = b;
  return v;
}

Value Value::integer(int64_t i) {
  Value v;
  v.kind_ = ValueKind::kInt;
  v.data_ = i;
  return v;
}

Value Value::number(double d) {
  Value v;
  v.kind_ = ValueKind::kFloat;
  v.data_ = d;
  return v;
}

Value Value::string(std::string s, bool safe) {
  Value v;
  v.kind_ = ValueKind::kString;
  v.safe_ = safe;
  v.data_ = std::move(s);
  return v;
}

Value Value::list(ListPtr items) {
  Value v;
  v.kind_ = ValueKind::kList;
  v.data_ = std::move(items);
  return v;
}

Value Value::new_list(List items) { return list(std::make_shared<List>(std::move(items))); }

Value Value::tuple(List items) {
  Value v;
  v.kind_ = ValueKind::kTuple;
  v.data_ = std::make_shared<List>(std::move(items));
  return v;
}

Value Value::dict(DictPtr d) {
  Value v;
  v.kind_ = ValueKind::kDict;
  v.data_ = std::move(d);
  return v;
}

Value Value::new_dict() { return dict(std::make_shared<Dict>()); }

Value Value::callable(CallablePtr c) {
  Value v;
  v.kind_ = ValueKind::kCallable;
  v.data_ = std::move(c);
  return v;
}

Value Value::object(ObjectPtr o) {
  Value v;
  v.kind_ = ValueKind::kObject;
  v.data_ = std::move(o);
  return v;
}

int64_t Value::as_int() const {
  if (is_bool()) return as_bool() ? 1 : 0;
  return std::get<int64_t>(data_);
}

double Value::as_float() const {
  if (is_float()) return std::get<double>(data_);
  return static_cast<double>(as_int());
}

const Value* Dict::find(const Value& key) const {
  auto k = hash_key(key);
  if (!k.is_ok()) return nullptr;
  auto it = index_.find(*k);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

const Value* Dict::find(std::string_view key) const {
  auto it = index_.find("s:" + std::string(key));
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

Status Dict::set(const Value& key, Value value) {
  auto k = hash_key(key);
  if (!k.is_ok()) return k.status();
  auto it = index_.find(*k);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
  } else {
    index_.emplace(std::move(*k), entries_.size());
    entries_.emplace_back(key, std::move(value));
  }
  return Status::ok();
}

void Dict::set(std::string_view key, Value value) {
  (void)set(Value::string(std::string(key)), std::move(value));
}

bool truthy(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
    case ValueKind::kNone:
      return false;
    case ValueKind::kBool:
      return v.as_bool();
    case ValueKind::kInt:
      return v.as_int() != 0;
    case ValueKind::kFloat:
      return v.as_float() != 0.0;
    case ValueKind::kString:
      return !v.str().empty();
    case ValueKind::kList:
    case ValueKind::kTuple:
      return !v.items().empty();
    case ValueKind::kDict:
      return !v.dict().empty();
    default:
      return true;
  }
}

std::string type_name(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return "Undefined";
    case ValueKind::kNone:
      return "NoneType";
    case ValueKind::kBool:
      return "bool";
    case ValueKind::kInt:
      return "int";
    case ValueKind::kFloat:
      return "float";
    case ValueKind::kString:
      return v.is_safe() ? "Markup" : "str";
    case ValueKind::kList:
      return "list";
    case ValueKind::kTuple:
      return "tuple";
    case ValueKind::kDict:
      return "dict";
    case ValueKind::kCallable:
      return "function";
    case ValueKind::kObject:
      return v.object().type_name;
  }
  return "object";
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  if (d == 0) return std::signbit(d) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  std::string sign;
  if (sci[0] == '-') {
    sign = "-";
    sci.erase(0, 1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e; ++i) {
    if (sci[i] != '.') digits += sci[i];
  }
  const int exp10 = std::atoi(sci.c_str() + e + 1);
  const int decpt = exp10 + 1;  // value = 0.DIGITS * 10^decpt
  const int n = static_cast<int>(digits.size());
  std::string out;
  if (decpt > 16 || decpt <= -4) {
    out = digits.substr(0, 1);
    if (n > 1) out += "." + digits.substr(1);
    const int a = std::abs(exp10);
    out += exp10 < 0 ? "e-" : "e+";
    if (a < 10) out += "0";
    out += std::to_string(a);
  } else if (decpt <= 0) {
    out = "0." + std::string(static_cast<size_t>(-decpt), '0') + digits;
  } else if (decpt >= n) {
    out = digits + std::string(static_cast<size_t>(decpt - n), '0') + ".0";
  } else {
    out = digits.substr(0, static_cast<size_t>(decpt)) + "." +
          digits.substr(static_cast<size_t>(decpt));
  }
  return sign + out;
}

std::string to_str(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return "";
    case ValueKind::kNone:
      return "None";
    case ValueKind::kBool:
      return v.as_bool() ? "True" : "False";
    case ValueKind::kInt:
      return std::to_string(v.as_int());
    case ValueKind::kFloat:
      return float_repr(v.as_float());
    case ValueKind::kString:
      return v.str();
    case ValueKind::kCallable:
      return "<function " + v.callable().name + ">";
    default:
      return repr_at(v, 0);
  }
}

std::string to_repr(const Value& v) { return repr_at(v, 0); }

bool values_equal(const Value& a, const Value& b) { return equal_at(a, b, 0); }

Result<int> compare_values(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (!a.is_float() && !b.is_float()) {
      return a.as_int() < b.as_int() ? -1 : (a.as_int() > b.as_int() ? 1 : 0);
    }
    const double x = a.as_float();
    const double y = b.as_float();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.str().compare(b.str());
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  if (a.kind() == b.kind() && a.is_list_or_tuple()) {
    const List& x = a.items();
    const List& y = b.items();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (values_equal(x[i], y[i])) continue;
      return compare_values(x[i], y[i]);
    }
    return x.size() < y.size() ? -1 : (x.size() > y.size() ? 1 : 0);
  }
  return Status::invalid_argument("'<' not supported between instances of '" + type_name(a) +
                                  "' and '" + type_name(b) + "'");
}

Result<std::string> hash_key(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return std::string("u");
    case ValueKind::kNone:
      return std::string("n");
    case ValueKind::kBool:
    case ValueKind::kInt:
      return "i:" + std::to_string(v.as_int());
    case ValueKind::kFloat: {
      const double d = v.as_float();
      if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9.2e18) {
        return "i:" + std::to_string(static_cast<int64_t>(d));
      }
      return "f:" + float_repr(d);
    }
    case ValueKind::kString:
      return "s:" + v.str();
    case ValueKind::kTuple: {
      std::string k = "t:";
      for (const Value& x : v.items()) {
        auto part = hash_key(x);
        if (!part.is_ok()) return part.status();
        k += std::to_string(part->size()) + ":" + *part;
      }
      return k;
    }
    case ValueKind::kCallable:
      return "c:" + std::to_string(reinterpret_cast<uintptr_t>(&v.callable()));
    default:
      return Status::invalid_argument("unhashable type: '" + type_name(v) + "'");
  }
}

namespace {
bool reaches(const Value& v, const void* target, int depth) {
  if (depth > kMaxPrintDepth) return true;
  switch (v.kind()) {
    case ValueKind::kList:
    case ValueKind::kTuple:
      if (v.list_ptr().get() == target) return true;
      for (const Value& x : v.items()) {
        if (reaches(x, target, depth + 1)) return true;
      }
      return false;
    case ValueKind::kDict:
      for (const auto& [k, x] : v.dict().entries()) {
        if (reaches(x, target, depth + 1)) return true;
      }
      return false;
    case ValueKind::kObject:
      if (&v.object() == target) return true;
      for (const auto& [k, x] : v.object().attrs.entries()) {
        if (reaches(x, target, depth + 1)) return true;
      }
      return false;
    case ValueKind::kCallable:
      return v.callable().holds_receiver;
    default:
      return false;
  }
}
}  // namespace

bool may_create_cycle(const Value& v, const void* target) { return reaches(v, target, 0); }

Result<int64_t> length_of(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return int64_t{0};
    case ValueKind::kString:
      return static_cast<int64_t>(pystr::count_code_points(v.str()));
    case ValueKind::kList:
    case ValueKind::kTuple:
      return static_cast<int64_t>(v.items().size());
    case ValueKind::kDict:
      return static_cast<int64_t>(v.dict().size());
    default:
      return Status::invalid_argument("object of type '" + type_name(v) + "' has no len()");
  }
}

Result<List> iterate(const Value& v) {
  switch (v.kind()) {
    case ValueKind::kUndefined:
      return List{};
    case ValueKind::kList:
    case ValueKind::kTuple:
      return v.items();
    case ValueKind::kDict: {
      List keys;
      keys.reserve(v.dict().size());
      for (const auto& e : v.dict().entries()) keys.push_back(e.first);
      return keys;
    }
    case ValueKind::kString: {
      List chars;
      const std::string& s = v.str();
      const pystr::CodePoints d = pystr::decode(s);
      chars.reserve(d.cps.size());
      for (size_t i = 0; i < d.cps.size(); ++i) {
        chars.push_back(
            Value::string(s.substr(d.offsets[i], d.offsets[i + 1] - d.offsets[i]), v.is_safe()));
      }
      return chars;
    }
    default:
      return Status::invalid_argument("'" + type_name(v) + "' object is not iterable");
  }
}

}  // namespace cohort::text::jinja
