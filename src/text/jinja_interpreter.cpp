// Statements, scopes, calls and the services builtins use. Expressions: jinja_eval.cpp.
#include "text/jinja_interpreter.h"

#include "text/jinja_builtins.h"
#include "text/jinja_parser.h"
#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

ScopePtr child_of(const ScopePtr& parent) {
  auto s = std::make_shared<Scope>();
  s->parent = parent;
  return s;
}

}  // namespace

Interpreter::Interpreter(const RenderEnv& env) : env_(env) {
  if (env_.now) {
    now_ = *env_.now;
  } else {
    const std::time_t t = std::time(nullptr);
    localtime_r(&t, &now_);
  }
  add_globals(globals_);
}

Result<std::string> Interpreter::render(const Body& body, const Value& context) {
  root_ = std::make_shared<Scope>();
  if (context.is_dict()) {
    for (const auto& [k, v] : context.dict().entries()) {
      if (k.is_string()) root_->vars[k.str()] = v;
    }
  } else if (!context.is_undefined() && !context.is_none()) {
    return Status::invalid_argument("jinja: the render context must be a dict");
  }
  // The template's own top-level scope sits below the context, as in jinja2.
  ScopePtr top = child_of(root_);
  std::string out;
  auto flow = exec_body(body, top, out);
  // Break reference cycles (a macro stored in the scope it captured) before returning.
  top->vars.clear();
  root_->vars.clear();
  if (!flow.is_ok()) return flow.status();
  return out;
}

Status Interpreter::locate(Status st, int line) {
  if (st.is_ok() || raised_ || located_) return st;
  located_ = true;
  std::string msg = st.message();
  if (msg.rfind("jinja: ", 0) == 0) msg = msg.substr(7);
  return Status(st.code(), "jinja: line " + std::to_string(line) + ": " + msg);
}

Status Interpreter::raise(std::string message) {
  raised_ = true;
  return Status::invalid_argument(std::move(message));
}

Status Interpreter::check_size(size_t n) const {
  if (n > env_.limits.max_output_bytes) {
    return Status::out_of_range("jinja: result exceeds the limit of " +
                                std::to_string(env_.limits.max_output_bytes) + " bytes");
  }
  return Status::ok();
}

Status Interpreter::count_step() {
  if (++steps_ > env_.limits.max_steps) {
    return Status::out_of_range("jinja: template exceeded " +
                                std::to_string(env_.limits.max_steps) +
                                " evaluation steps (runaway loop?)");
  }
  return Status::ok();
}

Status Interpreter::append(std::string& out, std::string_view text) const {
  if (out.size() + text.size() > env_.limits.max_output_bytes) {
    return Status::out_of_range("jinja: output exceeds the limit of " +
                                std::to_string(env_.limits.max_output_bytes) + " bytes");
  }
  out.append(text);
  return Status::ok();
}

Value Interpreter::lookup(const std::string& name, const ScopePtr& scope) const {
  for (const Scope* s = scope.get(); s; s = s->parent.get()) {
    auto it = s->vars.find(name);
    if (it != s->vars.end()) return it->second;
  }
  if (const Value* g = globals_.find(name)) return *g;
  return Value::undefined("'" + name + "' is undefined");
}

Result<Interpreter::Flow> Interpreter::exec_body(const Body& body, const ScopePtr& scope,
                                                 std::string& out) {
  for (const StmtPtr& s : body) {
    auto flow = exec(*s, scope, out);
    if (!flow.is_ok()) return locate(flow.status(), s->line);
    if (*flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Result<std::string> Interpreter::render_child(const Body& body, const ScopePtr& parent) {
  std::string out;
  auto flow = exec_body(body, child_of(parent), out);
  if (!flow.is_ok()) return flow.status();
  return out;
}

Result<Interpreter::Flow> Interpreter::exec(const Stmt& s, const ScopePtr& scope,
                                            std::string& out) {
  COHORT_RETURN_IF_ERROR(count_step());
  switch (s.kind) {
    case StmtKind::kText:
      COHORT_RETURN_IF_ERROR(append(out, s.text));
      return Flow::kNormal;
    case StmtKind::kOutput: {
      auto v = eval(*s.expr, scope);
      if (!v.is_ok()) return v.status();
      COHORT_RETURN_IF_ERROR(append(out, v->is_string() ? v->str() : to_str(*v)));
      return Flow::kNormal;
    }
    case StmtKind::kIf:
      for (const auto& [cond, body] : s.branches) {
        if (cond) {
          auto c = eval(*cond, scope);
          if (!c.is_ok()) return c.status();
          if (!truthy(*c)) continue;
        }
        return exec_body(body, scope, out);
      }
      return Flow::kNormal;
    case StmtKind::kFor:
      return exec_for(s, scope, out);
    case StmtKind::kSet:
    case StmtKind::kSetBlock:
      COHORT_RETURN_IF_ERROR(exec_set(s, scope, out));
      return Flow::kNormal;
    case StmtKind::kMacro:
      scope->vars[s.name] = make_macro(s, scope, s.name);
      return Flow::kNormal;
    case StmtKind::kCallBlock:
      COHORT_RETURN_IF_ERROR(exec_call_block(s, scope, out));
      return Flow::kNormal;
    case StmtKind::kFilterBlock: {
      auto body = render_child(s.body, scope);
      if (!body.is_ok()) return body.status();
      const Value text = Value::string(std::move(*body));
      auto filtered = eval_filter(*s.filter, scope, &text);
      if (!filtered.is_ok()) return filtered.status();
      COHORT_RETURN_IF_ERROR(append(out, to_str(*filtered)));
      return Flow::kNormal;
    }
    case StmtKind::kWith: {
      ScopePtr inner = child_of(scope);
      for (size_t i = 0; i < s.targets.size(); ++i) {
        auto v = eval(*s.values[i], scope);
        if (!v.is_ok()) return v.status();
        inner->vars[s.targets[i]] = std::move(*v);
      }
      return exec_body(s.body, inner, out);
    }
    case StmtKind::kBreak:
      return Flow::kBreak;
    case StmtKind::kContinue:
      return Flow::kContinue;
    case StmtKind::kScope:
      return exec_body(s.body, scope, out);
  }
  return Flow::kNormal;
}

Status Interpreter::assign_targets(const std::vector<std::string>& targets, const Value& v,
                                   Scope& scope) {
  if (targets.size() == 1) {
    scope.vars[targets[0]] = v;
    return Status::ok();
  }
  auto items = iterate(v);
  if (!items.is_ok() || v.is_undefined()) {
    return Status::invalid_argument("cannot unpack non-iterable " + type_name(v) + " object");
  }
  if (items->size() != targets.size()) {
    const std::string expected = std::to_string(targets.size());
    if (items->size() > targets.size()) {
      return Status::invalid_argument("too many values to unpack (expected " + expected + ")");
    }
    return Status::invalid_argument("not enough values to unpack (expected " + expected + ", got " +
                                    std::to_string(items->size()) + ")");
  }
  for (size_t i = 0; i < targets.size(); ++i) scope.vars[targets[i]] = (*items)[i];
  return Status::ok();
}

Result<Interpreter::Flow> Interpreter::exec_for(const Stmt& s, const ScopePtr& scope,
                                                std::string& out) {
  auto iterable = eval(*s.expr, scope);
  if (!iterable.is_ok()) return iterable.status();
  auto all = iterate(*iterable);
  if (!all.is_ok()) return all.status();
  List items;
  if (s.filter) {
    for (Value& item : *all) {
      COHORT_RETURN_IF_ERROR(count_step());
      ScopePtr probe = child_of(scope);
      COHORT_RETURN_IF_ERROR(assign_targets(s.targets, item, *probe));
      auto keep = eval(*s.filter, probe);
      if (!keep.is_ok()) return keep.status();
      if (truthy(*keep)) items.push_back(std::move(item));
    }
  } else {
    items = std::move(*all);
  }
  if (items.empty()) return exec_body(s.else_body, scope, out);
  const auto n = static_cast<int64_t>(items.size());
  // One LoopContext per loop, updated in place each iteration (as jinja2's is).
  auto loop = std::make_shared<Object>();
  loop->type_name = "LoopContext";
  auto index = std::make_shared<int64_t>(0);
  auto cycle = std::make_shared<Callable>();
  cycle->name = "cycle";
  cycle->fn = [index](Interpreter&, CallArgs& args) -> Result<Value> {
    if (args.args.empty()) return Status::invalid_argument("no items for cycling given");
    return args.args[static_cast<size_t>(*index) % args.args.size()];
  };
  Dict& a = loop->attrs;
  a.set("length", Value::integer(n));
  a.set("depth", Value::integer(1));
  a.set("depth0", Value::integer(0));
  a.set("cycle", Value::callable(std::move(cycle)));
  const Value loop_value = Value::object(loop);
  // previtem/nextitem could make the loop reachable from itself through a mutated list;
  // drop them when the loop ends (however it ends) so no reference cycle outlives it.
  struct DropItems {
    Dict& attrs;
    ~DropItems() {
      attrs.set("previtem", Value());
      attrs.set("nextitem", Value());
    }
  } drop_items{a};
  for (int64_t i = 0; i < n; ++i) {
    if (++loop_iterations_ > env_.limits.max_loop_iterations) {
      return Status::out_of_range("jinja: more than " +
                                  std::to_string(env_.limits.max_loop_iterations) +
                                  " loop iterations");
    }
    ScopePtr inner = child_of(scope);
    const Value& item = items[static_cast<size_t>(i)];
    COHORT_RETURN_IF_ERROR(assign_targets(s.targets, item, *inner));
    *index = i;
    a.set("index0", Value::integer(i));
    a.set("index", Value::integer(i + 1));
    a.set("revindex0", Value::integer(n - i - 1));
    a.set("revindex", Value::integer(n - i));
    a.set("first", Value::boolean(i == 0));
    a.set("last", Value::boolean(i == n - 1));
    a.set("previtem", i > 0 ? items[static_cast<size_t>(i - 1)]
                            : Value::undefined("there is no previous item"));
    a.set("nextitem", i + 1 < n ? items[static_cast<size_t>(i + 1)]
                                : Value::undefined("there is no next item"));
    inner->vars["loop"] = loop_value;
    auto flow = exec_body(s.body, inner, out);
    if (!flow.is_ok()) return flow.status();
    if (*flow == Flow::kBreak) break;
  }
  return Flow::kNormal;
}

Status Interpreter::exec_set(const Stmt& s, const ScopePtr& scope, std::string& out) {
  (void)out;
  Value value;
  if (s.kind == StmtKind::kSetBlock) {
    auto body = render_child(s.body, scope);
    if (!body.is_ok()) return body.status();
    value = Value::string(std::move(*body));
    if (s.filter) {
      auto filtered = eval_filter(*s.filter, scope, &value);
      if (!filtered.is_ok()) return filtered.status();
      value = std::move(*filtered);
    }
  } else {
    auto v = eval(*s.expr, scope);
    if (!v.is_ok()) return v.status();
    value = std::move(*v);
  }
  if (!s.attr.empty()) {
    const Value ns = lookup(s.targets[0], scope);
    if (!ns.is_object() || !ns.object().assignable) {
      return Status::invalid_argument("cannot assign attribute on non-namespace object");
    }
    if (may_create_cycle(value, &ns.object())) {
      return Status::unsupported(
          "storing a namespace inside itself (or a bound method) is not "
          "supported");
    }
    ns.object().attrs.set(s.attr, std::move(value));
    return Status::ok();
  }
  return assign_targets(s.targets, value, *scope);
}

Value Interpreter::make_macro(const Stmt& s, const ScopePtr& scope, std::string name) {
  auto c = std::make_shared<Callable>();
  c->name = std::move(name);
  const Stmt* def = &s;
  std::weak_ptr<Scope> closure = scope;
  c->fn = [def, closure](Interpreter& in, CallArgs& args) -> Result<Value> {
    ScopePtr parent = closure.lock();
    if (!parent) parent = in.root_;
    ScopePtr frame = child_of(parent);
    const auto& params = def->params;
    List varargs;
    for (size_t i = 0; i < args.args.size(); ++i) {
      if (i < params.size()) {
        frame->vars[params[i].name] = args.args[i];
      } else {
        varargs.push_back(args.args[i]);
      }
    }
    Value kwargs = Value::new_dict();
    for (auto& [k, v] : args.kwargs) {
      bool is_param = k == "caller";
      for (const auto& p : params) is_param = is_param || p.name == k;
      if (is_param) {
        frame->vars[k] = v;
      } else {
        kwargs.dict().set(k, v);
      }
    }
    for (const auto& p : params) {
      if (frame->vars.count(p.name)) continue;
      if (p.default_value) {
        auto d = in.eval(*p.default_value, frame);
        if (!d.is_ok()) return d.status();
        frame->vars[p.name] = std::move(*d);
      } else {
        frame->vars[p.name] = Value::undefined("parameter '" + p.name + "' was not provided");
      }
    }
    frame->vars["varargs"] = Value::tuple(std::move(varargs));
    frame->vars["kwargs"] = std::move(kwargs);
    std::string out;
    auto flow = in.exec_body(def->body, frame, out);
    if (!flow.is_ok()) return flow.status();
    return Value::string(std::move(out));
  };
  return Value::callable(std::move(c));
}

Status Interpreter::exec_call_block(const Stmt& s, const ScopePtr& scope, std::string& out) {
  // The call block's body becomes caller(), a macro over the block's parameters.
  const Value caller = make_macro(s, scope, "caller");
  auto v = eval_call(*s.expr, scope, &caller);
  if (!v.is_ok()) return v.status();
  return append(out, to_str(*v));
}

Result<Value> Interpreter::call(const Value& callee, CallArgs& args) {
  if (callee.is_undefined()) {
    return Status::invalid_argument(callee.undefined_hint().empty() ? "undefined is not callable"
                                                                    : callee.undefined_hint());
  }
  if (!callee.is_callable()) {
    return Status::invalid_argument("'" + type_name(callee) + "' object is not callable");
  }
  if (++call_depth_ > env_.limits.max_call_depth) {
    --call_depth_;
    return Status::out_of_range("jinja: calls nested deeper than " +
                                std::to_string(env_.limits.max_call_depth) +
                                " (runaway recursion?)");
  }
  auto r = callee.callable().fn(*this, args);
  --call_depth_;
  return r;
}

Result<Value> Interpreter::call_filter(std::string_view name, const Value& v, CallArgs& args) {
  FilterFn f = find_filter(name);
  if (!f) return Status::invalid_argument("No filter named '" + std::string(name) + "'.");
  COHORT_RETURN_IF_ERROR(count_step());
  return f(*this, v, args);
}

Result<bool> Interpreter::call_test(std::string_view name, const Value& v, CallArgs& args) {
  TestFn t = find_test(name);
  if (!t) return Status::invalid_argument("No test named '" + std::string(name) + "'.");
  COHORT_RETURN_IF_ERROR(count_step());
  return t(*this, v, args);
}

Result<Value> Interpreter::get_attr(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) {
    return Status::invalid_argument(obj.undefined_hint().empty() ? "value is undefined"
                                                                 : obj.undefined_hint());
  }
  if (auto m = bind_method(obj, name)) return std::move(*m);
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().find(name)) return *v;
  } else if (obj.is_object()) {
    if (const Value* v = obj.object().attrs.find(name)) return *v;
  }
  return Value::undefined("'" + type_name(obj) + " object' has no attribute '" + std::string(name) +
                          "'");
}

Result<Value> Interpreter::get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) {
    return Status::invalid_argument(obj.undefined_hint().empty() ? "value is undefined"
                                                                 : obj.undefined_hint());
  }
  if (obj.is_dict()) {
    if (const Value* v = obj.dict().find(key)) return *v;
  } else if ((obj.is_list_or_tuple() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    auto n = length_of(obj);
    if (!n.is_ok()) return n.status();
    int64_t i = key.as_int();
    if (i < 0) i += *n;
    if (i >= 0 && i < *n) {
      if (obj.is_string()) return Value::string(pystr::code_point_at(obj.str(), i));
      return obj.items()[static_cast<size_t>(i)];
    }
    return Value::undefined("'" + type_name(obj) + " object' has no element " + to_str(key));
  }
  if (key.is_string()) return get_attr(obj, key.str());
  return Value::undefined("'" + type_name(obj) + " object' has no element " + to_repr(key));
}

Result<Template> Template::parse(std::string_view source, const LexOptions& options) {
  auto body = parse_template(source, options);
  if (!body.is_ok()) return body.status();
  Template t;
  t.body_ = std::make_shared<const Body>(std::move(*body));
  return t;
}

Result<std::string> Template::render(const Value& context, const RenderEnv& env) const {
  Interpreter in(env);
  return in.render(*body_, context);
}

}  // namespace cohort::text::jinja
