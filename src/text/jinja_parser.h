// Parser for Jinja2 templates: tokens (jinja_lexer.h) to the syntax tree (jinja_ast.h),
// following jinja2.parser's grammar and precedence:
//   conditional (a if c else b) < or < and < not < comparisons (chained; in, not in)
//   < + - < ~ < * / // % < ** (left-associative, as in jinja2) < unary - +
//   < filters (|f), tests (is [not] t) and calls < postfix (.attr, [item], [a:b:c], (args))
// Statements: if/elif/else, for (tuple targets, `if` filter, else), set (names, tuples,
// ns.attr, block form with filters), macro, call, filter, with, break/continue,
// generation (transformers' AssistantTracker), raw (resolved by the lexer).
//
// Unknown filters and tests are errors here, before rendering, as in jinja2. Nesting is
// limited (kMaxParseDepth) so hostile input cannot exhaust the stack.
#pragma once

#include <string_view>

#include "core/status.h"
#include "text/jinja_ast.h"
#include "text/jinja_lexer.h"

namespace cohort::text::jinja {

inline constexpr int kMaxParseDepth = 200;

// Errors read "jinja: line N: ...".
Result<Body> parse_template(std::string_view source, const LexOptions& options);

}  // namespace cohort::text::jinja
