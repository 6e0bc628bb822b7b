#include "text/jinja_json.h"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

constexpr int kMaxDepth = 512;

Result<Value> from_json_at(const nlohmann::ordered_json& j, int depth) {
  if (depth > kMaxDepth) return Status::invalid_argument("jinja: JSON nested too deeply");
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value::none();
    case nlohmann::ordered_json::value_t::boolean:
      return Value::boolean(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value::integer(j.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const auto u = j.get<uint64_t>();
      if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return Value::integer(static_cast<int64_t>(u));
      }
      return Value::number(static_cast<double>(u));
    }
    case nlohmann::ordered_json::value_t::number_float:
      return Value::number(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value::string(j.get_ref<const std::string&>());
    case nlohmann::ordered_json::value_t::array: {
      List items;
      items.reserve(j.size());
      for (const auto& e : j) {
        auto v = from_json_at(e, depth + 1);
        if (!v.is_ok()) return v.status();
        items.push_back(std::move(*v));
      }
      return Value::new_list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Value d = Value::new_dict();
      for (const auto& [k, e] : j.items()) {
        auto v = from_json_at(e, depth + 1);
        if (!v.is_ok()) return v.status();
        d.dict().set(k, std::move(*v));
      }
      return d;
    }
    default:
      return Status::invalid_argument("jinja: unsupported JSON value (binary)");
  }
}

void append_json_string(std::string& out, std::string_view s, bool ensure_ascii) {
  out += '"';
  char buf[16];
  auto hex4 = [&](uint32_t u) {
    std::snprintf(buf, sizeof(buf), "\\u%04x", u);
    out += buf;
  };
  for (uint32_t cp : pystr::decode(s).cps) {
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (cp < 0x20) {
      hex4(cp);
    } else if (ensure_ascii && cp >= 0x7F) {
      if (cp >= 0x10000) {
        const uint32_t v = cp - 0x10000;
        hex4(0xD800 + (v >> 10));
        hex4(0xDC00 + (v & 0x3FF));
      } else {
        hex4(cp);
      }
    } else {
      pystr::append_utf8(out, cp);
    }
  }
  out += '"';
}

class Dumper {
 public:
  explicit Dumper(const JsonDumpOptions& o) : o_(o) {
    item_sep_ = o.item_sep ? *o.item_sep : (o.indent ? "," : ", ");
  }

  Status dump(const Value& v, int depth, std::string& out) {
    if (depth > kMaxDepth) {
      return Status::invalid_argument("Circular reference detected (or nesting too deep)");
    }
    switch (v.kind()) {
      case ValueKind::kNone:
        out += "null";
        return Status::ok();
      case ValueKind::kBool:
        out += v.as_bool() ? "true" : "false";
        return Status::ok();
      case ValueKind::kInt:
        out += std::to_string(v.as_int());
        return Status::ok();
      case ValueKind::kFloat:
        out += float_json(v.as_float());
        return Status::ok();
      case ValueKind::kString:
        append_json_string(out, v.str(), o_.ensure_ascii);
        return Status::ok();
      case ValueKind::kList:
      case ValueKind::kTuple:
        return dump_list(v.items(), depth, out);
      case ValueKind::kDict:
        return dump_dict(v.dict(), depth, out);
      default:
        return Status::invalid_argument("Object of type " + type_name(v) +
                                        " is not JSON serializable");
    }
  }

 private:
  static std::string float_json(double d) {
    if (d != d) return "NaN";
    if (d == std::numeric_limits<double>::infinity()) return "Infinity";
    if (d == -std::numeric_limits<double>::infinity()) return "-Infinity";
    return float_repr(d);
  }

  void newline(int depth, std::string& out) const {
    out += '\n';
    for (int i = 0; i < depth; ++i) out += *o_.indent;
  }

  Status dump_list(const List& items, int depth, std::string& out) {
    if (items.empty()) {
      out += "[]";
      return Status::ok();
    }
    out += '[';
    if (o_.indent) newline(depth + 1, out);
    for (size_t i = 0; i < items.size(); ++i) {
      if (i) {
        out += item_sep_;
        if (o_.indent) newline(depth + 1, out);
      }
      COHORT_RETURN_IF_ERROR(dump(items[i], depth + 1, out));
    }
    if (o_.indent) newline(depth, out);
    out += ']';
    return Status::ok();
  }

  static Result<std::string> key_text(const Value& k) {
    switch (k.kind()) {
      case ValueKind::kString:
        return k.str();
      case ValueKind::kNone:
        return std::string("null");
      case ValueKind::kBool:
        return std::string(k.as_bool() ? "true" : "false");
      case ValueKind::kInt:
        return std::to_string(k.as_int());
      case ValueKind::kFloat:
        return float_json(k.as_float());
      default:
        return Status::invalid_argument("keys must be str, int, float, bool or None, not " +
                                        type_name(k));
    }
  }

  Status dump_dict(const Dict& d, int depth, std::string& out) {
    if (d.empty()) {
      out += "{}";
      return Status::ok();
    }
    std::vector<std::pair<std::string, const Value*>> entries;
    entries.reserve(d.size());
    for (const auto& [k, v] : d.entries()) {
      auto text = key_text(k);
      if (!text.is_ok()) return text.status();
      entries.emplace_back(std::move(*text), &v);
    }
    if (o_.sort_keys) {
      std::stable_sort(entries.begin(), entries.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
    }
    out += '{';
    if (o_.indent) newline(depth + 1, out);
    bool first = true;
    for (const auto& [k, v] : entries) {
      if (!first) {
        out += item_sep_;
        if (o_.indent) newline(depth + 1, out);
      }
      first = false;
      append_json_string(out, k, o_.ensure_ascii);
      out += o_.key_sep;
      COHORT_RETURN_IF_ERROR(dump(*v, depth + 1, out));
    }
    if (o_.indent) newline(depth, out);
    out += '}';
    return Status::ok();
  }

  const JsonDumpOptions& o_;
  std::string item_sep_;
};

}  // namespace

Result<Value> value_from_json(const nlohmann::ordered_json& j) { return from_json_at(j, 0); }

Result<std::string> dump_json(const Value& v, const JsonDumpOptions& opts) {
  Dumper d(opts);
  std::string out;
  COHORT_RETURN_IF_ERROR(d.dump(v, 0, out));
  return out;
}

}  // namespace cohort::text::jinja
