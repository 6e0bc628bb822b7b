#include "text/jinja_parser.h"

#include <algorithm>

#include "text/jinja_builtins.h"

namespace cohort::text::jinja {
namespace {

class Parser {
 public:
  explicit Parser(std::vector<Token> tokens) : t_(std::move(tokens)) {}

  Result<Body> run() {
    Body body;
    auto end = parse_body(&body, {});
    if (!end.is_ok()) return end.status();
    return body;
  }

 private:
  // ---- token helpers ----
  const Token& cur() const { return t_[i_]; }
  const Token& peek(size_t k = 1) const { return t_[std::min(i_ + k, t_.size() - 1)]; }
  void advance() {
    if (i_ + 1 < t_.size()) ++i_;
  }
  bool is_op(std::string_view op) const { return cur().kind == TokenKind::kOp && cur().text == op; }
  bool is_name(std::string_view n) const {
    return cur().kind == TokenKind::kName && cur().text == n;
  }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    advance();
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!is_name(n)) return false;
    advance();
    return true;
  }

  Status error(const std::string& msg) const {
    return Status::invalid_argument("jinja: line " + std::to_string(cur().line) + ": " + msg);
  }

  std::string describe(const Token& t) const {
    switch (t.kind) {
      case TokenKind::kData:
        return "template data";
      case TokenKind::kVarBegin:
        return "'{{'";
      case TokenKind::kVarEnd:
        return "end of print statement";
      case TokenKind::kBlockBegin:
        return "'{%'";
      case TokenKind::kBlockEnd:
        return "end of statement block";
      case TokenKind::kEnd:
        return "end of template";
      case TokenKind::kString:
        return "string";
      case TokenKind::kInt:
      case TokenKind::kFloat:
        return "number";
      default:
        return "'" + t.text + "'";
    }
  }

  Status expect_op(std::string_view op) {
    if (skip_op(op)) return Status::ok();
    return error("expected '" + std::string(op) + "', got " + describe(cur()));
  }
  Status expect_block_end() {
    if (cur().kind == TokenKind::kBlockEnd) {
      advance();
      return Status::ok();
    }
    return error("expected end of statement block, got " + describe(cur()));
  }
  Result<std::string> expect_name() {
    if (cur().kind != TokenKind::kName) return error("expected a name, got " + describe(cur()));
    std::string n = cur().text;
    advance();
    return n;
  }

  ExprPtr make(ExprKind kind, int line) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    return e;
  }

  // RAII nesting counter: too deep is an error, not a stack overflow.
  struct DepthGuard {
    explicit DepthGuard(int* d) : d_(d) { ++*d_; }
    ~DepthGuard() { --*d_; }
    int* d_;
  };

  // Each link of a chain (a + b + c, x|f|g, a.b.c) deepens the tree by one: counted like
  // nesting for as long as the chain is being parsed.
  struct ChainGuard {
    explicit ChainGuard(int* d) : d_(d) {}
    ~ChainGuard() { *d_ -= links_; }
    bool add() {
      ++links_;
      return ++*d_ <= kMaxParseDepth;
    }
    int* d_;
    int links_ = 0;
  };

  // ---- template structure ----

  // Parses nodes into out until a {% tag %} whose name is in ends (returned, cursor after
  // the name) or the end of the template (returned as "", only valid when ends is empty).
  Result<std::string> parse_body(Body* out, const std::vector<std::string_view>& ends) {
    DepthGuard g(&depth_);
    if (depth_ > kMaxParseDepth) return error("template nested too deeply");
    while (true) {
      const Token& tok = cur();
      switch (tok.kind) {
        case TokenKind::kData: {
          auto s = std::make_unique<Stmt>();
          s->kind = StmtKind::kText;
          s->line = tok.line;
          s->text = tok.text;
          out->push_back(std::move(s));
          advance();
          break;
        }
        case TokenKind::kVarBegin: {
          const int line = tok.line;
          advance();
          auto e = parse_tuple(true, false, {});
          if (!e.is_ok()) return e.status();
          if (cur().kind != TokenKind::kVarEnd) {
            return error("expected end of print statement, got " + describe(cur()));
          }
          advance();
          auto s = std::make_unique<Stmt>();
          s->kind = StmtKind::kOutput;
          s->line = line;
          s->expr = std::move(*e);
          out->push_back(std::move(s));
          break;
        }
        case TokenKind::kBlockBegin: {
          advance();
          if (cur().kind != TokenKind::kName) return error("expected a statement name");
          const std::string name = cur().text;
          if (std::find(ends.begin(), ends.end(), name) != ends.end()) {
            advance();
            return name;
          }
          auto s = parse_statement();
          if (!s.is_ok()) return s.status();
          out->push_back(std::move(*s));
          break;
        }
        case TokenKind::kEnd:
          if (!ends.empty()) {
            return error("unexpected end of template, expected '" + std::string(ends.back()) + "'");
          }
          return std::string();
        default:
          return error("unexpected " + describe(tok));
      }
    }
  }

  Result<StmtPtr> parse_statement() {
    const std::string name = cur().text;
    auto s = std::make_unique<Stmt>();
    s->line = cur().line;
    advance();
    Status st;
    if (name == "if") {
      st = parse_if(*s);
    } else if (name == "for") {
      st = parse_for(*s);
    } else if (name == "set") {
      st = parse_set(*s);
    } else if (name == "macro") {
      st = parse_macro(*s);
    } else if (name == "call") {
      st = parse_call_block(*s);
    } else if (name == "filter") {
      st = parse_filter_block(*s);
    } else if (name == "with") {
      st = parse_with(*s);
    } else if (name == "generation") {
      s->kind = StmtKind::kScope;
      st = expect_block_end();
      if (st.is_ok()) st = parse_body_until(&s->body, "endgeneration");
    } else if (name == "break" || name == "continue") {
      if (loop_depth_ == 0) return error("'" + name + "' outside of a loop");
      s->kind = name == "break" ? StmtKind::kBreak : StmtKind::kContinue;
      st = expect_block_end();
    } else {
      return error("Encountered unknown tag '" + name + "'.");
    }
    if (!st.is_ok()) return st;
    return s;
  }

  Status parse_body_until(Body* body, std::string_view end) {
    auto r = parse_body(body, {end});
    if (!r.is_ok()) return r.status();
    return expect_block_end();
  }

  Status parse_if(Stmt& s) {
    s.kind = StmtKind::kIf;
    while (true) {
      auto cond = parse_tuple(false, false, {});
      if (!cond.is_ok()) return cond.status();
      COHORT_RETURN_IF_ERROR(expect_block_end());
      Body body;
      auto end = parse_body(&body, {"elif", "else", "endif"});
      if (!end.is_ok()) return end.status();
      s.branches.emplace_back(std::move(*cond), std::move(body));
      if (*end == "elif") continue;
      COHORT_RETURN_IF_ERROR(expect_block_end());
      if (*end == "else") {
        Body else_body;
        COHORT_RETURN_IF_ERROR(parse_body_until(&else_body, "endif"));
        s.branches.emplace_back(nullptr, std::move(else_body));
      }
      return Status::ok();
    }
  }

  // Names, optionally comma-separated and/or parenthesised: "a", "a, b", "(a, b)".
  Status parse_targets(std::vector<std::string>* names) {
    const bool paren = skip_op("(");
    while (true) {
      auto n = expect_name();
      if (!n.is_ok()) return n.status();
      names->push_back(std::move(*n));
      if (!skip_op(",")) break;
      if (cur().kind != TokenKind::kName) break;
    }
    if (paren) COHORT_RETURN_IF_ERROR(expect_op(")"));
    return Status::ok();
  }

  Status parse_for(Stmt& s) {
    s.kind = StmtKind::kFor;
    COHORT_RETURN_IF_ERROR(parse_targets(&s.targets));
    if (!skip_name("in")) return error("expected 'in', got " + describe(cur()));
    auto iter = parse_tuple(false, false, {"recursive"});
    if (!iter.is_ok()) return iter.status();
    s.expr = std::move(*iter);
    if (skip_name("if")) {
      auto f = parse_expression(true);
      if (!f.is_ok()) return f.status();
      s.filter = std::move(*f);
    }
    if (is_name("recursive")) return error("recursive for loops are not supported");
    COHORT_RETURN_IF_ERROR(expect_block_end());
    ++loop_depth_;
    auto end = parse_body(&s.body, {"endfor", "else"});
    --loop_depth_;
    if (!end.is_ok()) return end.status();
    COHORT_RETURN_IF_ERROR(expect_block_end());
    if (*end == "else") COHORT_RETURN_IF_ERROR(parse_body_until(&s.else_body, "endfor"));
    return Status::ok();
  }

  Status parse_set(Stmt& s) {
    if (cur().kind == TokenKind::kName && peek().kind == TokenKind::kOp && peek().text == ".") {
      s.targets.push_back(cur().text);
      advance();
      advance();
      auto attr = expect_name();
      if (!attr.is_ok()) return attr.status();
      s.attr = std::move(*attr);
    } else {
      COHORT_RETURN_IF_ERROR(parse_targets(&s.targets));
    }
    if (skip_op("=")) {
      s.kind = StmtKind::kSet;
      auto e = parse_tuple(true, false, {});
      if (!e.is_ok()) return e.status();
      s.expr = std::move(*e);
      return expect_block_end();
    }
    if (!s.attr.empty() || s.targets.size() != 1) return error("expected '='");
    s.kind = StmtKind::kSetBlock;
    if (is_op("|")) {
      auto f = parse_filters(nullptr, false);
      if (!f.is_ok()) return f.status();
      s.filter = std::move(*f);
    }
    COHORT_RETURN_IF_ERROR(expect_block_end());
    return parse_body_until(&s.body, "endset");
  }

  Status parse_params(std::vector<MacroParam>* params) {
    COHORT_RETURN_IF_ERROR(expect_op("("));
    while (!is_op(")")) {
      if (!params->empty()) COHORT_RETURN_IF_ERROR(expect_op(","));
      if (is_op(")")) break;
      auto n = expect_name();
      if (!n.is_ok()) return n.status();
      MacroParam p;
      p.name = std::move(*n);
      if (skip_op("=")) {
        auto d = parse_expression(true);
        if (!d.is_ok()) return d.status();
        p.default_value = std::move(*d);
      } else if (!params->empty() && params->back().default_value) {
        return error("non-default argument follows default argument");
      }
      params->push_back(std::move(p));
    }
    advance();
    return Status::ok();
  }

  Status parse_macro(Stmt& s) {
    s.kind = StmtKind::kMacro;
    auto n = expect_name();
    if (!n.is_ok()) return n.status();
    s.name = std::move(*n);
    COHORT_RETURN_IF_ERROR(parse_params(&s.params));
    COHORT_RETURN_IF_ERROR(expect_block_end());
    const int saved = loop_depth_;
    loop_depth_ = 0;
    Status st = parse_body_until(&s.body, "endmacro");
    loop_depth_ = saved;
    return st;
  }

  Status parse_call_block(Stmt& s) {
    s.kind = StmtKind::kCallBlock;
    if (is_op("(")) COHORT_RETURN_IF_ERROR(parse_params(&s.params));
    auto e = parse_expression(true);
    if (!e.is_ok()) return e.status();
    if ((*e)->kind != ExprKind::kCall) return error("expected call");
    s.expr = std::move(*e);
    COHORT_RETURN_IF_ERROR(expect_block_end());
    const int saved = loop_depth_;
    loop_depth_ = 0;
    Status st = parse_body_until(&s.body, "endcall");
    loop_depth_ = saved;
    return st;
  }

  Status parse_filter_block(Stmt& s) {
    s.kind = StmtKind::kFilterBlock;
    auto f = parse_filters(nullptr, true);
    if (!f.is_ok()) return f.status();
    s.filter = std::move(*f);
    COHORT_RETURN_IF_ERROR(expect_block_end());
    return parse_body_until(&s.body, "endfilter");
  }

  Status parse_with(Stmt& s) {
    s.kind = StmtKind::kWith;
    while (cur().kind != TokenKind::kBlockEnd) {
      if (!s.targets.empty()) COHORT_RETURN_IF_ERROR(expect_op(","));
      auto n = expect_name();
      if (!n.is_ok()) return n.status();
      COHORT_RETURN_IF_ERROR(expect_op("="));
      auto e = parse_expression(true);
      if (!e.is_ok()) return e.status();
      s.targets.push_back(std::move(*n));
      s.values.push_back(std::move(*e));
    }
    COHORT_RETURN_IF_ERROR(expect_block_end());
    return parse_body_until(&s.body, "endwith");
  }

  // ---- expressions ----

  bool is_tuple_end(const std::vector<std::string_view>& extra_ends) const {
    if (cur().kind == TokenKind::kVarEnd || cur().kind == TokenKind::kBlockEnd ||
        cur().kind == TokenKind::kEnd || is_op(")")) {
      return true;
    }
    return cur().kind == TokenKind::kName &&
           std::find(extra_ends.begin(), extra_ends.end(), cur().text) != extra_ends.end();
  }

  Result<ExprPtr> parse_tuple(bool with_condexpr, bool explicit_parens,
                              const std::vector<std::string_view>& extra_ends) {
    const int line = cur().line;
    std::vector<ExprPtr> items;
    bool is_tuple = false;
    while (true) {
      if (!items.empty()) COHORT_RETURN_IF_ERROR(expect_op(","));
      if (is_tuple_end(extra_ends)) break;
      auto e = parse_expression(with_condexpr);
      if (!e.is_ok()) return e.status();
      items.push_back(std::move(*e));
      if (is_op(",")) {
        is_tuple = true;
      } else {
        break;
      }
    }
    if (!is_tuple) {
      if (items.size() == 1) return std::move(items[0]);
      if (!explicit_parens) return error("expected an expression, got " + describe(cur()));
    }
    auto t = make(ExprKind::kTuple, line);
    t->args = std::move(items);
    return t;
  }

  Result<ExprPtr> parse_expression(bool with_condexpr) {
    DepthGuard g(&depth_);
    if (depth_ > kMaxParseDepth) return error("expression nested too deeply");
    return with_condexpr ? parse_condexpr() : parse_or();
  }

  Result<ExprPtr> parse_condexpr() {
    auto e1 = parse_or();
    if (!e1.is_ok()) return e1;
    ExprPtr expr = std::move(*e1);
    ChainGuard chain(&depth_);
    while (is_name("if")) {
      if (!chain.add()) return error("expression nested too deeply");
      const int line = cur().line;
      advance();
      auto cond = parse_or();
      if (!cond.is_ok()) return cond;
      auto node = make(ExprKind::kCondExpr, line);
      node->args.push_back(std::move(*cond));
      node->args.push_back(std::move(expr));
      if (skip_name("else")) {
        auto other = parse_condexpr();
        if (!other.is_ok()) return other;
        node->args.push_back(std::move(*other));
      } else {
        node->args.push_back(nullptr);
      }
      expr = std::move(node);
    }
    return expr;
  }

  using SubParser = Result<ExprPtr> (Parser::*)();

  // Left-associative binary levels: operand (op operand)*.
  Result<ExprPtr> parse_binary(SubParser operand, std::initializer_list<std::string_view> ops,
                               bool names) {
    auto left = (this->*operand)();
    if (!left.is_ok()) return left;
    ExprPtr expr = std::move(*left);
    ChainGuard chain(&depth_);
    while (true) {
      const Token& t = cur();
      const bool match = (names ? t.kind == TokenKind::kName : t.kind == TokenKind::kOp) &&
                         std::find(ops.begin(), ops.end(), t.text) != ops.end();
      if (!match) return expr;
      if (!chain.add()) return error("expression nested too deeply");
      auto node = make(ExprKind::kBinary, t.line);
      node->name = t.text;
      advance();
      auto right = (this->*operand)();
      if (!right.is_ok()) return right;
      node->args.push_back(std::move(expr));
      node->args.push_back(std::move(*right));
      expr = std::move(node);
    }
  }

  Result<ExprPtr> parse_or() { return parse_binary(&Parser::parse_and, {"or"}, true); }
  Result<ExprPtr> parse_and() { return parse_binary(&Parser::parse_not, {"and"}, true); }

  Result<ExprPtr> parse_not() {
    if (is_name("not")) {
      const int line = cur().line;
      advance();
      DepthGuard g(&depth_);
      if (depth_ > kMaxParseDepth) return error("expression nested too deeply");
      auto operand = parse_not();
      if (!operand.is_ok()) return operand;
      auto node = make(ExprKind::kUnary, line);
      node->name = "not";
      node->args.push_back(std::move(*operand));
      return node;
    }
    return parse_compare();
  }

  Result<ExprPtr> parse_compare() {
    const int line = cur().line;
    auto first = parse_math1();
    if (!first.is_ok()) return first;
    auto node = make(ExprKind::kCompare, line);
    node->args.push_back(std::move(*first));
    while (true) {
      std::string op;
      if (cur().kind == TokenKind::kOp &&
          (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == "<=" ||
           cur().text == ">" || cur().text == ">=")) {
        op = cur().text;
        advance();
      } else if (is_name("in")) {
        op = "in";
        advance();
      } else if (is_name("not") && peek().kind == TokenKind::kName && peek().text == "in") {
        op = "notin";
        advance();
        advance();
      } else {
        break;
      }
      if (node->ops.size() > static_cast<size_t>(kMaxParseDepth)) {
        return error("expression nested too deeply");
      }
      auto operand = parse_math1();
      if (!operand.is_ok()) return operand;
      node->ops.push_back(std::move(op));
      node->args.push_back(std::move(*operand));
    }
    if (node->ops.empty()) return std::move(node->args[0]);
    return node;
  }

  Result<ExprPtr> parse_math1() { return parse_binary(&Parser::parse_concat, {"+", "-"}, false); }
  Result<ExprPtr> parse_concat() { return parse_binary(&Parser::parse_math2, {"~"}, false); }
  Result<ExprPtr> parse_math2() {
    return parse_binary(&Parser::parse_pow, {"*", "/", "//", "%"}, false);
  }
  Result<ExprPtr> parse_pow() { return parse_binary(&Parser::parse_unary_filtered, {"**"}, false); }
  Result<ExprPtr> parse_unary_filtered() { return parse_unary(true); }

  Result<ExprPtr> parse_unary(bool with_filter) {
    DepthGuard g(&depth_);
    if (depth_ > kMaxParseDepth) return error("expression nested too deeply");
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      auto u = make(ExprKind::kUnary, cur().line);
      u->name = cur().text;
      advance();
      auto operand = parse_unary(false);
      if (!operand.is_ok()) return operand;
      u->args.push_back(std::move(*operand));
      node = std::move(u);
    } else {
      auto p = parse_primary();
      if (!p.is_ok()) return p;
      node = std::move(*p);
    }
    auto post = parse_postfix(std::move(node));
    if (!post.is_ok() || !with_filter) return post;
    return parse_filter_expr(std::move(*post));
  }

  Result<ExprPtr> parse_primary() {
    const Token& t = cur();
    const int line = t.line;
    switch (t.kind) {
      case TokenKind::kName: {
        auto e = make(ExprKind::kLiteral, line);
        if (t.text == "true" || t.text == "True") {
          e->literal = Value::boolean(true);
        } else if (t.text == "false" || t.text == "False") {
          e->literal = Value::boolean(false);
        } else if (t.text == "none" || t.text == "None") {
          e->literal = Value::none();
        } else {
          e->kind = ExprKind::kName;
          e->name = t.text;
        }
        advance();
        return e;
      }
      case TokenKind::kString: {
        std::string s;
        while (cur().kind == TokenKind::kString) {
          s += cur().text;
          advance();
        }
        auto e = make(ExprKind::kLiteral, line);
        e->literal = Value::string(std::move(s));
        return e;
      }
      case TokenKind::kInt:
      case TokenKind::kFloat: {
        auto e = make(ExprKind::kLiteral, line);
        e->literal =
            t.kind == TokenKind::kInt ? Value::integer(t.int_value) : Value::number(t.float_value);
        advance();
        return e;
      }
      case TokenKind::kOp:
        if (t.text == "(") {
          advance();
          auto e = parse_tuple(true, true, {});
          if (!e.is_ok()) return e;
          COHORT_RETURN_IF_ERROR(expect_op(")"));
          return e;
        }
        if (t.text == "[") return parse_list();
        if (t.text == "{") return parse_dict();
        break;
      default:
        break;
    }
    return error("unexpected " + describe(t));
  }

  Result<ExprPtr> parse_list() {
    auto e = make(ExprKind::kList, cur().line);
    advance();
    while (!is_op("]")) {
      if (!e->args.empty()) COHORT_RETURN_IF_ERROR(expect_op(","));
      if (is_op("]")) break;
      auto item = parse_expression(true);
      if (!item.is_ok()) return item;
      e->args.push_back(std::move(*item));
    }
    advance();
    return e;
  }

  Result<ExprPtr> parse_dict() {
    auto e = make(ExprKind::kDict, cur().line);
    advance();
    while (!is_op("}")) {
      if (!e->args.empty()) COHORT_RETURN_IF_ERROR(expect_op(","));
      if (is_op("}")) break;
      auto key = parse_expression(true);
      if (!key.is_ok()) return key;
      COHORT_RETURN_IF_ERROR(expect_op(":"));
      auto value = parse_expression(true);
      if (!value.is_ok()) return value;
      e->args.push_back(std::move(*key));
      e->args.push_back(std::move(*value));
    }
    advance();
    return e;
  }

  Result<ExprPtr> parse_postfix(ExprPtr node) {
    ChainGuard chain(&depth_);
    while (true) {
      if ((is_op(".") || is_op("[") || is_op("(")) && !chain.add()) {
        return error("expression nested too deeply");
      }
      if (is_op(".") || is_op("[")) {
        auto s = parse_subscript(std::move(node));
        if (!s.is_ok()) return s;
        node = std::move(*s);
      } else if (is_op("(")) {
        auto c = parse_call(std::move(node));
        if (!c.is_ok()) return c;
        node = std::move(*c);
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_filter_expr(ExprPtr node) {
    ChainGuard chain(&depth_);
    while (true) {
      if ((is_op("|") || is_name("is") || is_op("(")) && !chain.add()) {
        return error("expression nested too deeply");
      }
      if (is_op("|")) {
        auto f = parse_filters(std::move(node), false);
        if (!f.is_ok()) return f;
        node = std::move(*f);
      } else if (is_name("is")) {
        auto t = parse_test(std::move(node));
        if (!t.is_ok()) return t;
        node = std::move(*t);
      } else if (is_op("(")) {
        auto c = parse_call(std::move(node));
        if (!c.is_ok()) return c;
        node = std::move(*c);
      } else {
        return node;
      }
    }
  }

  Result<ExprPtr> parse_subscript(ExprPtr node) {
    const int line = cur().line;
    if (skip_op(".")) {
      if (cur().kind == TokenKind::kName) {
        auto e = make(ExprKind::kGetAttr, line);
        e->name = cur().text;
        e->args.push_back(std::move(node));
        advance();
        return e;
      }
      if (cur().kind == TokenKind::kInt) {
        auto e = make(ExprKind::kGetItem, line);
        auto key = make(ExprKind::kLiteral, line);
        key->literal = Value::integer(cur().int_value);
        e->args.push_back(std::move(node));
        e->args.push_back(std::move(key));
        advance();
        return e;
      }
      return error("expected name or number after '.'");
    }
    advance();  // [
    std::vector<ExprPtr> keys;
    ExprPtr slice;
    while (!is_op("]")) {
      if (!keys.empty() || slice) COHORT_RETURN_IF_ERROR(expect_op(","));
      if (is_op("]")) break;
      ExprPtr start;
      if (!is_op(":")) {
        auto e = parse_expression(true);
        if (!e.is_ok()) return e;
        start = std::move(*e);
      }
      if (!is_op(":")) {
        keys.push_back(std::move(start));
        continue;
      }
      advance();
      auto sl = make(ExprKind::kSlice, line);
      sl->args.push_back(nullptr);  // the object, filled below
      sl->args.push_back(std::move(start));
      for (int part = 0; part < 2; ++part) {
        ExprPtr x;
        if (!is_op("]") && !is_op(",") && !is_op(":")) {
          auto e = parse_expression(true);
          if (!e.is_ok()) return e;
          x = std::move(*e);
        }
        sl->args.push_back(std::move(x));
        if (part == 0 && !skip_op(":")) {
          sl->args.push_back(nullptr);
          break;
        }
      }
      slice = std::move(sl);
    }
    advance();  // ]
    if (slice) {
      if (!keys.empty()) return error("multi-dimensional slices are not supported");
      slice->args[0] = std::move(node);
      return slice;
    }
    if (keys.empty()) return error("expected a subscript");
    auto e = make(ExprKind::kGetItem, line);
    e->args.push_back(std::move(node));
    if (keys.size() == 1) {
      e->args.push_back(std::move(keys[0]));
    } else {
      auto t = make(ExprKind::kTuple, line);
      t->args = std::move(keys);
      e->args.push_back(std::move(t));
    }
    return e;
  }

  // "(" args ")" into e->args (after any already there) and e->kwargs.
  Status parse_call_args(Expr* e) {
    COHORT_RETURN_IF_ERROR(expect_op("("));
    bool first = true;
    while (!is_op(")")) {
      if (!first) COHORT_RETURN_IF_ERROR(expect_op(","));
      first = false;
      if (is_op(")")) break;
      if (is_op("*") || is_op("**")) return error("*args and **kwargs calls are not supported");
      if (cur().kind == TokenKind::kName && peek().kind == TokenKind::kOp && peek().text == "=") {
        std::string key = cur().text;
        advance();
        advance();
        auto v = parse_expression(true);
        if (!v.is_ok()) return v.status();
        e->kwargs.emplace_back(std::move(key), std::move(*v));
        continue;
      }
      if (!e->kwargs.empty()) return error("positional argument follows keyword argument");
      auto v = parse_expression(true);
      if (!v.is_ok()) return v.status();
      e->args.push_back(std::move(*v));
    }
    advance();
    return Status::ok();
  }

  Result<ExprPtr> parse_call(ExprPtr callee) {
    auto e = make(ExprKind::kCall, cur().line);
    e->args.push_back(std::move(callee));
    COHORT_RETURN_IF_ERROR(parse_call_args(e.get()));
    return e;
  }

  Result<std::string> parse_dotted_name() {
    auto n = expect_name();
    if (!n.is_ok()) return n;
    std::string name = std::move(*n);
    while (is_op(".") && peek().kind == TokenKind::kName) {
      advance();
      name += "." + cur().text;
      advance();
    }
    return name;
  }

  // One or more "| name(args)"; with start_inline the first filter has no "|".
  Result<ExprPtr> parse_filters(ExprPtr node, bool start_inline) {
    ChainGuard chain(&depth_);
    while (is_op("|") || start_inline) {
      if (!chain.add()) return error("expression nested too deeply");
      if (!start_inline) advance();
      start_inline = false;
      const int line = cur().line;
      auto name = parse_dotted_name();
      if (!name.is_ok()) return name.status();
      if (!find_filter(*name)) return error("No filter named '" + *name + "'.");
      auto f = make(ExprKind::kFilter, line);
      f->name = std::move(*name);
      f->args.push_back(std::move(node));
      if (is_op("(")) COHORT_RETURN_IF_ERROR(parse_call_args(f.get()));
      node = std::move(f);
    }
    return node;
  }

  Result<ExprPtr> parse_test(ExprPtr node) {
    const int line = cur().line;
    advance();  // is
    const bool negated = skip_name("not");
    auto name = parse_dotted_name();
    if (!name.is_ok()) return name.status();
    if (!find_test(*name)) return error("No test named '" + *name + "'.");
    auto t = make(ExprKind::kTest, line);
    t->name = std::move(*name);
    t->negated = negated;
    t->args.push_back(std::move(node));
    if (is_op("(")) {
      COHORT_RETURN_IF_ERROR(parse_call_args(t.get()));
    } else {
      const TokenKind k = cur().kind;
      const bool starts_arg = k == TokenKind::kName || k == TokenKind::kString ||
                              k == TokenKind::kInt || k == TokenKind::kFloat || is_op("(") ||
                              is_op("[") || is_op("{");
      if (starts_arg && !is_name("else") && !is_name("or") && !is_name("and")) {
        if (is_name("is")) return error("You cannot chain multiple tests with is");
        auto arg = parse_primary();
        if (!arg.is_ok()) return arg;
        auto post = parse_postfix(std::move(*arg));
        if (!post.is_ok()) return post;
        t->args.push_back(std::move(*post));
      }
    }
    return t;
  }

  std::vector<Token> t_;
  size_t i_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;
};

}  // namespace

Result<Body> parse_template(std::string_view source, const LexOptions& options) {
  auto tokens = tokenize(source, options);
  if (!tokens.is_ok()) return tokens.status();
  Parser p(std::move(*tokens));
  return p.run();
}

}  // namespace cohort::text::jinja
