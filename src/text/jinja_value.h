// The value model of the Jinja2 interpreter: Python semantics as jinja2 (run the way Hugging
// Face transformers runs chat templates) sees them.
//
// A Value is one of: undefined (jinja2's default Undefined: prints as "", is falsy, iterates
// as empty, but errors when called, indexed or used in arithmetic), none, bool, int (int64),
// float (double), string (UTF-8; `safe` marks markupsafe.Markup), list, tuple, dict
// (insertion-ordered, Python-hashable keys), callable (builtin, bound method or macro) and
// object (namespace(), the `loop` variable: named attributes).
//
// Lists, dicts and objects are shared by reference like Python objects (copying a Value
// copies the reference; list.append mutates the one list). Values are not thread-safe;
// one render uses them on one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "core/status.h"

namespace cohort::text::jinja {

class Value;
class Dict;
class Interpreter;
struct Callable;
struct Object;

using List = std::vector<Value>;
using ListPtr = std::shared_ptr<List>;
using DictPtr = std::shared_ptr<Dict>;
using CallablePtr = std::shared_ptr<const Callable>;
using ObjectPtr = std::shared_ptr<Object>;

enum class ValueKind {
  kUndefined,
  kNone,
  kBool,
  kInt,
  kFloat,
  kString,
  kList,
  kTuple,
  kDict,
  kCallable,
  kObject,
};

class Value {
 public:
  // Undefined, with an optional hint for the error raised when it is misused
  // ("'x' is undefined").
  Value() = default;
  static Value undefined(std::string hint = {});
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value number(double d);
  static Value string(std::string s, bool safe = false);
  static Value list(ListPtr items);
  static Value new_list(List items = {});
  static Value tuple(List items);
  static Value dict(DictPtr d);
  static Value new_dict();
  static Value callable(CallablePtr c);
  static Value object(ObjectPtr o);

  ValueKind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == ValueKind::kUndefined; }
  bool is_none() const { return kind_ == ValueKind::kNone; }
  bool is_bool() const { return kind_ == ValueKind::kBool; }
  bool is_int() const { return kind_ == ValueKind::kInt; }
  bool is_float() const { return kind_ == ValueKind::kFloat; }
  // int, float or bool (Python's numbers.Number).
  bool is_number() const { return is_int() || is_float() || is_bool(); }
  bool is_string() const { return kind_ == ValueKind::kString; }
  bool is_list() const { return kind_ == ValueKind::kList; }
  bool is_tuple() const { return kind_ == ValueKind::kTuple; }
  bool is_list_or_tuple() const { return is_list() || is_tuple(); }
  bool is_dict() const { return kind_ == ValueKind::kDict; }
  bool is_callable() const { return kind_ == ValueKind::kCallable; }
  bool is_object() const { return kind_ == ValueKind::kObject; }
  // A Markup string (from |safe or |escape).
  bool is_safe() const { return safe_; }

  bool as_bool() const { return std::get<bool>(data_); }
  int64_t as_int() const;   // int or bool
  double as_float() const;  // int, float or bool
  const std::string& str() const { return std::get<std::string>(data_); }
  const std::string& undefined_hint() const { return std::get<std::string>(data_); }
  const List& items() const { return *std::get<ListPtr>(data_); }
  const ListPtr& list_ptr() const { return std::get<ListPtr>(data_); }
  Dict& dict() const { return *std::get<DictPtr>(data_); }
  const DictPtr& dict_ptr() const { return std::get<DictPtr>(data_); }
  const Callable& callable() const { return *std::get<CallablePtr>(data_); }
  Object& object() const { return *std::get<ObjectPtr>(data_); }

 private:
  ValueKind kind_ = ValueKind::kUndefined;
  bool safe_ = false;
  std::variant<std::string, bool, int64_t, double, ListPtr, DictPtr, CallablePtr, ObjectPtr> data_;
};

// An insertion-ordered dict with Python key equality (1 == 1.0 == True; str by bytes).
class Dict {
 public:
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  const std::vector<std::pair<Value, Value>>& entries() const { return entries_; }
  // nullptr when absent, or when the key is unhashable.
  const Value* find(const Value& key) const;
  const Value* find(std::string_view key) const;
  // Error for an unhashable key (list, dict).
  Status set(const Value& key, Value value);
  void set(std::string_view key, Value value);

 private:
  std::vector<std::pair<Value, Value>> entries_;
  std::unordered_map<std::string, size_t> index_;
};

// Arguments of one call: positional then keyword, in source order.
struct CallArgs {
  std::vector<Value> args;
  std::vector<std::pair<std::string, Value>> kwargs;
};

using NativeFn = std::function<Result<Value>(Interpreter&, CallArgs&)>;

struct Callable {
  std::string name;
  NativeFn fn;
  bool holds_receiver = false;  // a bound method: keeps its str/list/dict alive
};

// Named attributes: namespace() objects (assignable with `set ns.x = ...`) and loop
// contexts (read-only).
struct Object {
  std::string type_name;  // "Namespace", "LoopContext"
  bool assignable = false;
  Dict attrs;
};

// Python's bool(v). Undefined and none are falsy; objects and callables truthy.
bool truthy(const Value& v);
// Python's type(v).__name__ ("str", "NoneType", "Undefined", ...), for error messages.
std::string type_name(const Value& v);
// Python's str(v) and repr(v). Undefined prints as "" (str) and "Undefined" (repr).
std::string to_str(const Value& v);
std::string to_repr(const Value& v);
// Python's repr of a float ("1.0", "1e+16", "inf", "nan").
std::string float_repr(double d);
// Python's ==, on values of any kinds (never an error). Undefined equals undefined.
bool values_equal(const Value& a, const Value& b);
// Python's <, as -1/0/1 for a < b / neither / a > b; TypeError when the kinds do not order.
Result<int> compare_values(const Value& a, const Value& b);
// The key a dict uses for v: equal Python hashes for equal values. Error when unhashable.
Result<std::string> hash_key(const Value& v);
// True when storing v inside the list or object at `target` could make a reference cycle
// (which shared ownership would never free): v reaches target, holds a bound method, or
// nests deeper than can be checked. Mutations refuse such values.
bool may_create_cycle(const Value& v, const void* target);
// Python's len(): strings count code points. Error for kinds without a length.
Result<int64_t> length_of(const Value& v);
// The items `for x in v` visits: list/tuple items, dict keys, string characters, nothing
// for undefined. TypeError for none, numbers, callables and objects.
Result<List> iterate(const Value& v);

}  // namespace cohort::text::jinja
