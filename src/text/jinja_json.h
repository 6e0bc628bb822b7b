// JSON in and out of the Jinja2 value model. Input: an nlohmann::ordered_json (object key
// order kept, as Python's json.load keeps it). Output: Python's json.dumps, byte for byte,
// which is what Hugging Face's `tojson` filter calls.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "text/jinja_value.h"

namespace cohort::text::jinja {

// Objects become dicts (in key order), arrays lists, integers int (unsigned values above
// INT64_MAX become floats), null none. Errors only for nesting deeper than 512.
Result<Value> value_from_json(const nlohmann::ordered_json& j);

// json.dumps(v, ensure_ascii=..., indent=..., separators=..., sort_keys=...).
struct JsonDumpOptions {
  std::optional<std::string> indent;    // nullopt: one line; else the per-level indent text
  std::optional<std::string> item_sep;  // default ", " (one line) or "," (indented)
  std::string key_sep = ": ";
  bool ensure_ascii = false;
  bool sort_keys = false;
};

// TypeError (as Python words it) for values JSON cannot hold: undefined, callables,
// namespaces, and dict keys other than str/int/float/bool/None.
Result<std::string> dump_json(const Value& v, const JsonDumpOptions& opts);

}  // namespace cohort::text::jinja
