// The builtin library of the Jinja2 interpreter: jinja2's filters and tests, the globals
// templates call (range, dict, namespace, raise_exception, strftime_now, cycler, joiner),
// and the Python methods of str, dict and list values.
//
// Filters take the piped value and the call's arguments; errors come back as Status with a
// Python-style message (the interpreter adds the line). None of these throw.
#pragma once

#include <optional>
#include <string_view>

#include "core/status.h"
#include "text/jinja_value.h"

namespace cohort::text::jinja {

using FilterFn = Result<Value> (*)(Interpreter&, const Value&, CallArgs&);
using TestFn = Result<bool> (*)(Interpreter&, const Value&, CallArgs&);

// nullptr when jinja2 has no such filter/test (or we do not implement it).
FilterFn find_filter(std::string_view name);
TestFn find_test(std::string_view name);

// Adds the global functions to a template's globals.
void add_globals(Dict& globals);

// obj.name where obj is a str, dict or list and name one of its Python methods (a bound
// method value); nullopt otherwise. list.append & co. mutate the list in place.
std::optional<Value> bind_method(const Value& obj, std::string_view name);

// Argument binding for builtins: positional then keyword, Python's rules and messages.
// Names lists the parameters in order; missing ones stay Undefined in the result.
Result<std::vector<Value>> bind_args(std::string_view fn_name, CallArgs& args,
                                     std::initializer_list<std::string_view> names,
                                     size_t n_required = 0);

}  // namespace cohort::text::jinja
