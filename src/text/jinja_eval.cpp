// Expression evaluation with Python's operator semantics.
#include <cmath>

#include "text/jinja_interpreter.h"
#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

Status undefined_error(const Value& v) {
  return Status::invalid_argument(v.undefined_hint().empty() ? "value is undefined"
                                                             : v.undefined_hint());
}

Status operand_error(const std::string& op, const Value& a, const Value& b) {
  return Status::invalid_argument("unsupported operand type(s) for " + op + ": '" + type_name(a) +
                                  "' and '" + type_name(b) + "'");
}

Status overflow() { return Status::invalid_argument("integer overflow"); }

bool is_intlike(const Value& v) { return v.is_int() || v.is_bool(); }

Result<Value> add(Interpreter& in, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (is_intlike(a) && is_intlike(b)) {
      int64_t r = 0;
      if (__builtin_add_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return Value::integer(r);
    }
    return Value::number(a.as_float() + b.as_float());
  }
  if (a.is_string() && b.is_string()) {
    COHORT_RETURN_IF_ERROR(in.check_size(a.str().size() + b.str().size()));
    // markupsafe: Markup + str escapes the str (both ways round).
    if (a.is_safe() || b.is_safe()) {
      const std::string l = a.is_safe() ? a.str() : pystr::html_escape(a.str());
      const std::string r = b.is_safe() ? b.str() : pystr::html_escape(b.str());
      return Value::string(l + r, true);
    }
    return Value::string(a.str() + b.str());
  }
  if (a.kind() == b.kind() && a.is_list_or_tuple()) {
    COHORT_RETURN_IF_ERROR(in.check_size(a.items().size() + b.items().size()));
    List items = a.items();
    items.insert(items.end(), b.items().begin(), b.items().end());
    return a.is_list() ? Value::new_list(std::move(items)) : Value::tuple(std::move(items));
  }
  if (a.is_string() || a.is_list() || a.is_tuple()) {
    const std::string t = a.is_string() ? "str" : type_name(a);
    return Status::invalid_argument("can only concatenate " + t + " (not \"" + type_name(b) +
                                    "\") to " + t);
  }
  return operand_error("+", a, b);
}

Result<Value> repeat(Interpreter& in, const Value& seq, int64_t n) {
  if (n < 0) n = 0;
  if (seq.is_string()) {
    const size_t unit = seq.str().size();
    if (unit && static_cast<uint64_t>(n) > SIZE_MAX / unit) return in.check_size(SIZE_MAX);
    COHORT_RETURN_IF_ERROR(in.check_size(unit * static_cast<size_t>(n)));
    std::string out;
    out.reserve(unit * static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) out += seq.str();
    return Value::string(std::move(out), seq.is_safe());
  }
  const size_t unit = seq.items().size();
  if (unit && static_cast<uint64_t>(n) > SIZE_MAX / unit) return in.check_size(SIZE_MAX);
  COHORT_RETURN_IF_ERROR(in.check_size(unit * static_cast<size_t>(n)));
  List items;
  for (int64_t i = 0; i < n; ++i) items.insert(items.end(), seq.items().begin(), seq.items().end());
  return seq.is_list() ? Value::new_list(std::move(items)) : Value::tuple(std::move(items));
}

Result<Value> multiply(Interpreter& in, const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (is_intlike(a) && is_intlike(b)) {
      int64_t r = 0;
      if (__builtin_mul_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return Value::integer(r);
    }
    return Value::number(a.as_float() * b.as_float());
  }
  const bool a_seq = a.is_string() || a.is_list_or_tuple();
  const bool b_seq = b.is_string() || b.is_list_or_tuple();
  if (a_seq && is_intlike(b)) return repeat(in, a, b.as_int());
  if (b_seq && is_intlike(a)) return repeat(in, b, a.as_int());
  return operand_error("*", a, b);
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

Result<Value> divide(const std::string& op, const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) return operand_error(op, a, b);
  if (op == "/") {
    if (b.as_float() == 0) return Status::invalid_argument("division by zero");
    return Value::number(a.as_float() / b.as_float());
  }
  if (is_intlike(a) && is_intlike(b)) {
    const int64_t x = a.as_int();
    const int64_t y = b.as_int();
    if (y == 0) {
      return Status::invalid_argument(op == "//" ? "integer division or modulo by zero"
                                                 : "integer modulo by zero");
    }
    if (x == INT64_MIN && y == -1) {
      if (op == "//") return overflow();
      return Value::integer(0);
    }
    if (op == "//") return Value::integer(floor_div(x, y));
    return Value::integer(x - floor_div(x, y) * y);
  }
  const double x = a.as_float();
  const double y = b.as_float();
  if (y == 0) {
    return Status::invalid_argument(op == "//" ? "float floor division by zero" : "float modulo");
  }
  if (op == "//") return Value::number(std::floor(x / y));
  double m = std::fmod(x, y);
  if (m != 0 && ((m < 0) != (y < 0))) m += y;
  return Value::number(m);
}

Result<Value> power(const Value& a, const Value& b) {
  if (!a.is_number() || !b.is_number()) return operand_error("** or pow()", a, b);
  if (is_intlike(a) && is_intlike(b) && b.as_int() >= 0) {
    int64_t r = 1;
    const int64_t base = a.as_int();
    for (int64_t i = 0; i < b.as_int(); ++i) {
      if (__builtin_mul_overflow(r, base, &r)) return overflow();
      if (r == 0 || r == 1) break;
    }
    return Value::integer(r);
  }
  if (a.as_float() == 0 && b.as_float() < 0) {
    return Status::invalid_argument("0.0 cannot be raised to a negative power");
  }
  return Value::number(std::pow(a.as_float(), b.as_float()));
}

Result<bool> contains(const Value& container, const Value& item) {
  switch (container.kind()) {
    case ValueKind::kUndefined:
      return false;
    case ValueKind::kString:
      if (!item.is_string()) {
        return Status::invalid_argument("'in <string>' requires string as left operand, not " +
                                        type_name(item));
      }
      return container.str().find(item.str()) != std::string::npos;
    case ValueKind::kList:
    case ValueKind::kTuple:
      for (const Value& x : container.items()) {
        if (values_equal(x, item)) return true;
      }
      return false;
    case ValueKind::kDict: {
      auto k = hash_key(item);
      if (!k.is_ok()) return k.status();
      return container.dict().find(item) != nullptr;
    }
    default:
      return Status::invalid_argument("argument of type '" + type_name(container) +
                                      "' is not iterable");
  }
}

Result<bool> compare_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return values_equal(a, b);
  if (op == "!=") return !values_equal(a, b);
  if (op == "in") return contains(b, a);
  if (op == "notin") {
    auto r = contains(b, a);
    if (!r.is_ok()) return r;
    return !*r;
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  auto c = compare_values(a, b);
  if (!c.is_ok()) {
    return Status::invalid_argument("'" + op + "' not supported between instances of '" +
                                    type_name(a) + "' and '" + type_name(b) + "'");
  }
  if (op == "<") return *c < 0;
  if (op == "<=") return *c <= 0;
  if (op == ">") return *c > 0;
  return *c >= 0;
}

}  // namespace

Result<Value> Interpreter::eval(const Expr& e, const ScopePtr& scope) {
  COHORT_RETURN_IF_ERROR(count_step());
  auto r = eval_inner(e, scope);
  if (!r.is_ok()) return locate(r.status(), e.line);
  return r;
}

Result<Value> Interpreter::eval_inner(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::kLiteral:
      return e.literal;
    case ExprKind::kName:
      return lookup(e.name, scope);
    case ExprKind::kList:
    case ExprKind::kTuple:
    case ExprKind::kDict:
      return eval_collection(e, scope);
    case ExprKind::kGetAttr: {
      auto obj = eval(*e.args[0], scope);
      if (!obj.is_ok()) return obj;
      return get_attr(*obj, e.name);
    }
    case ExprKind::kGetItem: {
      auto obj = eval(*e.args[0], scope);
      if (!obj.is_ok()) return obj;
      auto key = eval(*e.args[1], scope);
      if (!key.is_ok()) return key;
      return get_item(*obj, *key);
    }
    case ExprKind::kSlice:
      return eval_slice(e, scope);
    case ExprKind::kCall:
      return eval_call(e, scope, nullptr);
    case ExprKind::kFilter:
      return eval_filter(e, scope, nullptr);
    case ExprKind::kTest:
      return eval_test(e, scope);
    case ExprKind::kUnary: {
      auto v = eval(*e.args[0], scope);
      if (!v.is_ok()) return v;
      if (e.name == "not") return Value::boolean(!truthy(*v));
      if (v->is_undefined()) return undefined_error(*v);
      if (!v->is_number()) {
        return Status::invalid_argument("bad operand type for unary " + e.name + ": '" +
                                        type_name(*v) + "'");
      }
      if (v->is_float()) return Value::number(e.name == "-" ? -v->as_float() : v->as_float());
      if (e.name == "+") return Value::integer(v->as_int());
      if (v->as_int() == INT64_MIN) return overflow();
      return Value::integer(-v->as_int());
    }
    case ExprKind::kBinary:
      return eval_binary(e, scope);
    case ExprKind::kCompare:
      return eval_compare(e, scope);
    case ExprKind::kCondExpr: {
      auto c = eval(*e.args[0], scope);
      if (!c.is_ok()) return c;
      if (truthy(*c)) return eval(*e.args[1], scope);
      if (e.args[2]) return eval(*e.args[2], scope);
      return Value::undefined("the inline if-expression evaluated to false and no else");
    }
  }
  return Status::internal("jinja: unknown expression kind");
}

Result<Value> Interpreter::eval_collection(const Expr& e, const ScopePtr& scope) {
  if (e.kind == ExprKind::kDict) {
    Value d = Value::new_dict();
    for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
      auto k = eval(*e.args[i], scope);
      if (!k.is_ok()) return k;
      auto v = eval(*e.args[i + 1], scope);
      if (!v.is_ok()) return v;
      COHORT_RETURN_IF_ERROR(d.dict().set(*k, std::move(*v)));
    }
    return d;
  }
  List items;
  items.reserve(e.args.size());
  for (const ExprPtr& a : e.args) {
    auto v = eval(*a, scope);
    if (!v.is_ok()) return v;
    items.push_back(std::move(*v));
  }
  return e.kind == ExprKind::kList ? Value::new_list(std::move(items))
                                   : Value::tuple(std::move(items));
}

Status Interpreter::eval_args(const Expr& e, size_t first, const ScopePtr& scope, CallArgs* args) {
  for (size_t i = first; i < e.args.size(); ++i) {
    auto v = eval(*e.args[i], scope);
    if (!v.is_ok()) return v.status();
    args->args.push_back(std::move(*v));
  }
  for (const auto& [k, x] : e.kwargs) {
    auto v = eval(*x, scope);
    if (!v.is_ok()) return v.status();
    args->kwargs.emplace_back(k, std::move(*v));
  }
  return Status::ok();
}

Result<Value> Interpreter::eval_call(const Expr& e, const ScopePtr& scope,
                                     const Value* extra_caller) {
  auto callee = eval(*e.args[0], scope);
  if (!callee.is_ok()) return callee;
  CallArgs args;
  COHORT_RETURN_IF_ERROR(eval_args(e, 1, scope, &args));
  if (extra_caller) args.kwargs.emplace_back("caller", *extra_caller);
  return call(*callee, args);
}

Result<Value> Interpreter::eval_filter(const Expr& e, const ScopePtr& scope,
                                       const Value* inline_value) {
  Value operand;
  if (!e.args[0]) {
    operand = inline_value ? *inline_value : Value();
  } else if (inline_value && e.args[0]->kind == ExprKind::kFilter) {
    auto v = eval_filter(*e.args[0], scope, inline_value);
    if (!v.is_ok()) return v;
    operand = std::move(*v);
  } else {
    auto v = eval(*e.args[0], scope);
    if (!v.is_ok()) return v;
    operand = std::move(*v);
  }
  CallArgs args;
  COHORT_RETURN_IF_ERROR(eval_args(e, 1, scope, &args));
  return call_filter(e.name, operand, args);
}

Result<Value> Interpreter::eval_test(const Expr& e, const ScopePtr& scope) {
  auto operand = eval(*e.args[0], scope);
  if (!operand.is_ok()) return operand;
  CallArgs args;
  COHORT_RETURN_IF_ERROR(eval_args(e, 1, scope, &args));
  auto r = call_test(e.name, *operand, args);
  if (!r.is_ok()) return r.status();
  return Value::boolean(*r != e.negated);
}

Result<Value> Interpreter::eval_binary(const Expr& e, const ScopePtr& scope) {
  auto left = eval(*e.args[0], scope);
  if (!left.is_ok()) return left;
  if (e.name == "and") return truthy(*left) ? eval(*e.args[1], scope) : left;
  if (e.name == "or") return truthy(*left) ? left : eval(*e.args[1], scope);
  auto right = eval(*e.args[1], scope);
  if (!right.is_ok()) return right;
  const Value& a = *left;
  const Value& b = *right;
  if (e.name == "~") {
    std::string s = to_str(a);
    const std::string t = to_str(b);
    COHORT_RETURN_IF_ERROR(check_size(s.size() + t.size()));
    return Value::string(s + t);
  }
  if (a.is_undefined()) return undefined_error(a);
  if (b.is_undefined()) return undefined_error(b);
  if (e.name == "+") return add(*this, a, b);
  if (e.name == "-") {
    if (!a.is_number() || !b.is_number()) return operand_error("-", a, b);
    if (is_intlike(a) && is_intlike(b)) {
      int64_t r = 0;
      if (__builtin_sub_overflow(a.as_int(), b.as_int(), &r)) return overflow();
      return Value::integer(r);
    }
    return Value::number(a.as_float() - b.as_float());
  }
  if (e.name == "*") return multiply(*this, a, b);
  if (e.name == "**") return power(a, b);
  if (e.name == "%" && a.is_string()) {
    return Status::unsupported("printf-style string formatting (%) is not supported");
  }
  return divide(e.name, a, b);
}

Result<Value> Interpreter::eval_compare(const Expr& e, const ScopePtr& scope) {
  auto left = eval(*e.args[0], scope);
  if (!left.is_ok()) return left;
  Value a = std::move(*left);
  for (size_t i = 0; i < e.ops.size(); ++i) {
    auto right = eval(*e.args[i + 1], scope);
    if (!right.is_ok()) return right;
    auto r = compare_op(e.ops[i], a, *right);
    if (!r.is_ok()) return r.status();
    if (!*r) return Value::boolean(false);
    a = std::move(*right);
  }
  return Value::boolean(true);
}

Result<Value> Interpreter::eval_slice(const Expr& e, const ScopePtr& scope) {
  auto obj = eval(*e.args[0], scope);
  if (!obj.is_ok()) return obj;
  std::optional<int64_t> parts[3];
  for (int i = 0; i < 3; ++i) {
    if (!e.args[static_cast<size_t>(i) + 1]) continue;
    auto v = eval(*e.args[static_cast<size_t>(i) + 1], scope);
    if (!v.is_ok()) return v;
    if (v->is_none()) continue;
    if (!is_intlike(*v)) {
      return Status::invalid_argument(
          "slice indices must be integers or None or have an __index__ method");
    }
    parts[i] = v->as_int();
  }
  const int64_t step = parts[2].value_or(1);
  if (step == 0) return Status::invalid_argument("slice step cannot be zero");
  if (obj->is_undefined()) return undefined_error(*obj);
  if (obj->is_string()) {
    return Value::string(pystr::slice(obj->str(), parts[0], parts[1], step), obj->is_safe());
  }
  if (obj->is_list_or_tuple()) {
    const List& src = obj->items();
    List items;
    for (int64_t i :
         pystr::slice_indices(static_cast<int64_t>(src.size()), parts[0], parts[1], step)) {
      items.push_back(src[static_cast<size_t>(i)]);
    }
    return obj->is_list() ? Value::new_list(std::move(items)) : Value::tuple(std::move(items));
  }
  return Status::invalid_argument("'" + type_name(*obj) + "' object is not subscriptable");
}

}  // namespace cohort::text::jinja
