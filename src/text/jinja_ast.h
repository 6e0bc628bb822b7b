// The syntax tree of a parsed Jinja2 template. Nodes own their children; a parsed Template
// owns the root and outlives every render (macros point into it).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "text/jinja_value.h"

namespace cohort::text::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

enum class ExprKind {
  kLiteral,   // literal
  kName,      // name
  kList,      // args: items
  kTuple,     // args: items
  kDict,      // args: key, value, key, value, ...
  kGetAttr,   // args[0].name (also a.0, which is an item lookup: literal holds the int)
  kGetItem,   // args[0][args[1]]
  kSlice,     // args[0][args[1]:args[2]:args[3]], null children for omitted parts
  kCall,      // args[0](args[1..], kwargs)
  kFilter,    // args[0] | name(args[1..], kwargs); args[0] is null inside {% filter %}
  kTest,      // args[0] is [not] name(args[1..], kwargs); negated
  kUnary,     // name ("-", "+", "not") args[0]
  kBinary,    // args[0] name args[1]: + - * / // % ** ~ and or
  kCompare,   // args[0] ops[0] args[1] ops[1] args[2] ... (chained)
  kCondExpr,  // args[1] if args[0] else args[2] (args[2] null: undefined)
};

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  int line = 0;
  std::string name;
  Value literal;
  bool negated = false;
  std::vector<ExprPtr> args;
  std::vector<std::pair<std::string, ExprPtr>> kwargs;
  std::vector<std::string> ops;
};

enum class StmtKind {
  kText,         // text
  kOutput,       // {{ expr }}
  kIf,           // branches (condition, body); a null condition is the else branch
  kFor,          // for targets in expr [if filter]: body [else: else_body]
  kSet,          // set targets = expr, or set targets[0].attr = expr (attr non-empty)
  kSetBlock,     // set targets[0] [| filter]: body
  kMacro,        // macro name(params): body
  kCallBlock,    // call(params) expr: body (body is the caller)
  kFilterBlock,  // filter filter: body (filter's args[0] is null)
  kWith,         // with targets = values: body
  kBreak,
  kContinue,
  kScope,  // body rendered as is ({% generation %}): no new scope
};

struct MacroParam {
  std::string name;
  ExprPtr default_value;  // null: required
};

struct Stmt {
  StmtKind kind = StmtKind::kText;
  int line = 0;
  std::string text;
  std::string name;
  std::string attr;
  ExprPtr expr;
  ExprPtr filter;
  std::vector<std::string> targets;
  std::vector<ExprPtr> values;
  std::vector<MacroParam> params;
  std::vector<std::pair<ExprPtr, Body>> branches;
  Body body;
  Body else_body;
};

}  // namespace cohort::text::jinja
