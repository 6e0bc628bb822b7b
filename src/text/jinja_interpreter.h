// A Jinja2 interpreter for chat templates: parse once (Template), render many times.
//
// Semantics follow Python jinja2 as Hugging Face transformers configures it for chat
// templates: ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
// loopcontrols extension, autoescape off, the default (lenient) Undefined, and the sandbox's
// range() limit of 100000 items. Known differences: list.append/pop/extend/insert mutate the
// list (jinja2's immutable sandbox refuses them), and the `recursive` loop modifier,
// include/import/extends/block and *args calls are not supported.
//
// Scoping is jinja2's: a for loop body and a macro body get their own scope (a `set` there
// does not leak out; namespace() attributes do), if-blocks do not. Macros see the scope they
// were defined in, at call time.
//
// Safety: a render is bounded by RenderLimits (output and string size, macro call depth,
// loop iterations, evaluation steps); exceeding one is a clear error, never a hang or a
// crash. Nothing here throws.
//
// Thread-safety: a Template is immutable after parse and may render on several threads at
// once; each render uses its own Interpreter.
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include "core/status.h"
#include "text/jinja_ast.h"
#include "text/jinja_lexer.h"
#include "text/jinja_value.h"

namespace cohort::text::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;  // the output, and any one string built
  int max_call_depth = 100;                    // nested macro / caller() calls
  int64_t max_loop_iterations = 500'000;       // all for-loop iterations of one render
  int64_t max_steps = 20'000'000;              // expression and statement evaluations
};

struct RenderEnv {
  // What strftime_now() formats. nullopt: the real local time at render.
  std::optional<std::tm> now;
  RenderLimits limits;
};

struct Scope;
using ScopePtr = std::shared_ptr<Scope>;

// Variables of one scope; lookups walk up to the parent.
struct Scope {
  ScopePtr parent;
  std::unordered_map<std::string, Value> vars;
};

class Interpreter {
 public:
  explicit Interpreter(const RenderEnv& env);

  // Renders body with the context's keys (a dict value) as variables over the globals.
  // raise_exception(msg) comes back as Status(kInvalidArgument, msg) with msg unchanged;
  // other errors read "jinja: line N: ...".
  Result<std::string> render(const Body& body, const Value& context);

  // ---- services for builtins (filters, tests, methods, globals) ----
  // jinja2's environment getattr (obj.name) and getitem (obj[key]): methods first for .name,
  // items first for [key]; a miss gives Undefined. Error only on an undefined obj.
  Result<Value> get_attr(const Value& obj, std::string_view name);
  Result<Value> get_item(const Value& obj, const Value& key);
  // Calls a callable value (builtin, method or macro).
  Result<Value> call(const Value& callee, CallArgs& args);
  Result<Value> call_filter(std::string_view name, const Value& v, CallArgs& args);
  Result<bool> call_test(std::string_view name, const Value& v, CallArgs& args);
  // raise_exception(): the error the render ends with.
  Status raise(std::string message);
  // Error when a string or list of this many bytes/items would exceed the limits.
  Status check_size(size_t n) const;
  Status count_step();
  const std::tm& now() const { return now_; }

 private:
  enum class Flow { kNormal, kBreak, kContinue };

  Result<Flow> exec_body(const Body& body, const ScopePtr& scope, std::string& out);
  Result<Flow> exec(const Stmt& s, const ScopePtr& scope, std::string& out);
  Result<Flow> exec_for(const Stmt& s, const ScopePtr& scope, std::string& out);
  Status exec_set(const Stmt& s, const ScopePtr& scope, std::string& out);
  Status exec_call_block(const Stmt& s, const ScopePtr& scope, std::string& out);
  Result<std::string> render_child(const Body& body, const ScopePtr& parent);
  Status append(std::string& out, std::string_view text) const;
  Status assign_targets(const std::vector<std::string>& targets, const Value& v, Scope& scope);
  Value make_macro(const Stmt& s, const ScopePtr& scope, std::string name);

  Result<Value> eval(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_inner(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_collection(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_call(const Expr& e, const ScopePtr& scope, const Value* extra_caller);
  Result<Value> eval_filter(const Expr& e, const ScopePtr& scope, const Value* inline_value);
  Result<Value> eval_test(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_binary(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_compare(const Expr& e, const ScopePtr& scope);
  Result<Value> eval_slice(const Expr& e, const ScopePtr& scope);
  Status eval_args(const Expr& e, size_t first, const ScopePtr& scope, CallArgs* args);
  Value lookup(const std::string& name, const ScopePtr& scope) const;
  Status locate(Status st, int line);

  RenderEnv env_;
  std::tm now_{};
  Dict globals_;
  ScopePtr root_;
  int call_depth_ = 0;
  int64_t steps_ = 0;
  int64_t loop_iterations_ = 0;
  bool raised_ = false;
  bool located_ = false;
};

// A parsed template. Cheap to copy (the tree is shared and immutable).
class Template {
 public:
  static Result<Template> parse(std::string_view source, const LexOptions& options = {});
  // context must be a dict (or undefined for none); its keys become variables.
  Result<std::string> render(const Value& context, const RenderEnv& env = {}) const;

 private:
  std::shared_ptr<const Body> body_;
};

}  // namespace cohort::text::jinja
