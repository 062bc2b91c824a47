#include "llmbench/tokenizer/detail/jinja_value.hpp"

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace llmbench::tokenizer::detail::jinja {

double Value::as_number() const {
  if (is_int())
    return static_cast<double>(as_int());
  if (is_bool())
    return as_bool() ? 1.0 : 0.0;
  return as_float();
}

bool Value::truthy() const {
  switch (v_.index()) {
    case 0:
    case 1:
      return false;
    case 2:
      return as_bool();
    case 3:
      return as_int() != 0;
    case 4:
      return as_float() != 0.0;
    case 5:
      return !as_string().empty();
    case 6:
      return !as_list().empty();
    case 7:
      return !as_dict().items.empty();
    default:
      return true;
  }
}

std::string Value::type_name() const {
  static constexpr const char* kNames[] = {"Undefined", "NoneType", "bool", "int",
                                           "float",     "str",      "list", "dict",
                                           "Namespace", "function"};
  return kNames[v_.index()];
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items) {
    if (k == key)
      return &v;
  }
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  for (auto& [k, v] : items) {
    if (k == key) {
      v = std::move(value);
      return;
    }
  }
  items.emplace_back(key, std::move(value));
}

// ---- code points ----

std::u32string code_points(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t n = utf8_sequence_length(s, i);
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (n <= 1) {  // ASCII, or an invalid byte taken as itself
      out.push_back(b0);
      ++i;
      continue;
    }
    char32_t cp = b0 & (0x7FU >> n);
    for (std::size_t k = 1; k < n; ++k)
      cp = (cp << 6U) | (static_cast<unsigned char>(s[i + k]) & 0x3FU);
    out.push_back(cp);
    i += n;
  }
  return out;
}

std::string from_code_points(const std::u32string& cps) {
  std::string out;
  out.reserve(cps.size());
  for (const char32_t c : cps) {
    append_utf8(out, c);
  }
  return out;
}

bool is_py_space(char32_t c) {
  // Python's str.isspace: bidirectional class WS/B/S or category Zs (Unicode 15 tables).
  if ((c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0)
    return true;
  return c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// ---- printing ----

std::string float_repr(double d) {
  if (std::isnan(d))
    return "nan";
  if (std::isinf(d))
    return d < 0 ? "-inf" : "inf";
  // Shortest round-trip digits (what Python's repr uses), then Python's layout: positional for
  // decimal exponents -4 <= e < 16, else d.ddde[+-]XX.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const auto e_at = sci.find('e');
  std::string mant = sci.substr(0, e_at);
  const int exp10 = std::stoi(sci.substr(e_at + 1));
  bool neg = false;
  if (!mant.empty() && mant[0] == '-') {
    neg = true;
    mant.erase(0, 1);
  }
  std::string digits;
  for (const char c : mant) {
    if (c != '.')
      digits.push_back(c);
  }
  std::string out = neg ? "-" : "";
  if (exp10 < -4 || exp10 >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1)
      out += "." + digits.substr(1);
    char ebuf[16];
    std::snprintf(ebuf, sizeof ebuf, "e%c%02d", exp10 < 0 ? '-' : '+', std::abs(exp10));
    return out + ebuf;
  }
  if (exp10 < 0) {
    out += "0." + std::string(static_cast<std::size_t>(-exp10 - 1), '0') + digits;
    return out;
  }
  const auto int_len = static_cast<std::size_t>(exp10) + 1;
  if (digits.size() <= int_len) {
    out += digits + std::string(int_len - digits.size(), '0') + ".0";
  } else {
    out += digits.substr(0, int_len) + "." + digits.substr(int_len);
  }
  return out;
}

namespace {

/// Python's repr of a str: single quotes unless the text has ' and no ".
std::string string_repr(const std::string& s) {
  const bool has_single = s.find('\'') != std::string::npos;
  const bool has_double = s.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (const char32_t c : code_points(s)) {
    if (c == static_cast<char32_t>(quote) || c == '\\') {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7F || (c >= 0x80 && c < 0xA0) || c == 0xAD) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    } else {
      append_utf8(out, c);
    }
  }
  out.push_back(quote);
  return out;
}

}  // namespace

std::string to_repr(const Value& v) {
  if (v.is_string())
    return string_repr(v.as_string());
  if (v.is_list()) {
    std::string out = "[";
    bool first = true;
    for (const auto& x : v.as_list()) {
      out += first ? "" : ", ";
      first = false;
      out += to_repr(x);
    }
    return out + "]";
  }
  if (v.is_dict()) {
    std::string out = "{";
    bool first = true;
    for (const auto& [k, x] : v.as_dict().items) {
      out += first ? "" : ", ";
      first = false;
      out += string_repr(k) + ": " + to_repr(x);
    }
    return out + "}";
  }
  return to_str(v);
}

std::string to_str(const Value& v) {
  if (v.is_undefined())
    return "";
  if (v.is_none())
    return "None";
  if (v.is_bool())
    return v.as_bool() ? "True" : "False";
  if (v.is_int())
    return std::to_string(v.as_int());
  if (v.is_float())
    return float_repr(v.as_float());
  if (v.is_string())
    return v.as_string();
  if (v.is_namespace())
    return "<Namespace " + to_repr(Value(*v.as_namespace().attrs)) + ">";
  if (v.is_callable())
    return "<function " + v.as_callable().name + ">";
  return to_repr(v);
}

// ---- JSON ----

namespace {

/// Python's `json.dumps` string form, byte for byte (\b and \f by name; with `ensure_ascii`,
/// everything from DEL up as \uXXXX and surrogate pairs), which transformers' `tojson` writes;
/// not core's `append_json_string`, whose escapes differ (no \b or \f, non-ASCII kept).
void json_string(std::string& out, const std::string& s, bool ensure_ascii) {
  out.push_back('"');
  for (const char32_t c : code_points(s)) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default: {
        char buf[16];
        if (c < 0x20 || (ensure_ascii && c >= 0x7F && c < 0x10000)) {
          std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else if (ensure_ascii && c >= 0x10000) {
          const char32_t u = c - 0x10000;
          std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x",
                        static_cast<unsigned>(0xD800 + (u >> 10U)),
                        static_cast<unsigned>(0xDC00 + (u & 0x3FFU)));
          out += buf;
        } else {
          append_utf8(out, c);
        }
      }
    }
  }
  out.push_back('"');
}

struct JsonWriter {
  const JsonDumpOptions& options;
  SourcePos pos;
  std::string out;

  void newline(int depth) {
    if (!options.pretty)
      return;
    out.push_back('\n');
    for (int i = 0; i < depth; ++i) out += options.indent;
  }
  [[nodiscard]] std::string item_sep() const {
    if (!options.item_sep.empty())
      return options.item_sep;
    return options.pretty ? "," : ", ";
  }
  [[nodiscard]] std::string key_sep() const {
    return options.key_sep.empty() ? ": " : options.key_sep;
  }

  void write(const Value& v, int depth) {
    if (v.is_none()) {
      out += "null";
    } else if (v.is_bool()) {
      out += v.as_bool() ? "true" : "false";
    } else if (v.is_int()) {
      out += std::to_string(v.as_int());
    } else if (v.is_float()) {
      const double d = v.as_float();
      out += std::isnan(d)   ? "NaN"
             : std::isinf(d) ? (d < 0 ? "-Infinity" : "Infinity")
                             : float_repr(d);
    } else if (v.is_string()) {
      json_string(out, v.as_string(), options.ensure_ascii);
    } else if (v.is_list()) {
      write_list(v.as_list(), depth);
    } else if (v.is_dict()) {
      write_dict(v.as_dict(), depth);
    } else {
      throw JinjaError("Object of type " + v.type_name() + " is not JSON serializable", pos);
    }
  }
  void write_list(const List& list, int depth) {
    if (list.empty()) {
      out += "[]";
      return;
    }
    out.push_back('[');
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (i > 0)
        out += item_sep();
      newline(depth + 1);
      write(list[i], depth + 1);
    }
    newline(depth);
    out.push_back(']');
  }
  void write_dict(const Dict& dict, int depth) {
    if (dict.items.empty()) {
      out += "{}";
      return;
    }
    std::vector<const std::pair<std::string, Value>*> order;
    order.reserve(dict.items.size());
    for (const auto& item : dict.items) order.push_back(&item);
    if (options.sort_keys) {
      std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
        return code_points(a->first) < code_points(b->first);
      });
    }
    out.push_back('{');
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (i > 0)
        out += item_sep();
      newline(depth + 1);
      json_string(out, order[i]->first, options.ensure_ascii);
      out += key_sep();
      write(order[i]->second, depth + 1);
    }
    newline(depth);
    out.push_back('}');
  }
};

}  // namespace

std::string to_json(const Value& v, const JsonDumpOptions& options, SourcePos pos) {
  JsonWriter writer{.options = options, .pos = pos, .out = {}};
  writer.write(v, 0);
  return std::move(writer.out);
}

Value from_json(const nlohmann::ordered_json& j) {
  switch (j.type()) {
    case nlohmann::ordered_json::value_t::null:
      return Value(None{});
    case nlohmann::ordered_json::value_t::boolean:
      return Value(j.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer:
      return Value(j.get<std::int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned:
      return Value(static_cast<std::int64_t>(j.get<std::uint64_t>()));
    case nlohmann::ordered_json::value_t::number_float:
      return Value(j.get<double>());
    case nlohmann::ordered_json::value_t::string:
      return Value(j.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      List list;
      list.reserve(j.size());
      for (const auto& x : j) list.push_back(from_json(x));
      return Value(std::move(list));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict dict;
      dict.items.reserve(j.size());
      for (const auto& [k, x] : j.items()) dict.items.emplace_back(k, from_json(x));
      return Value(std::move(dict));
    }
    default:
      return Value(None{});
  }
}

// ---- comparison ----

bool equals(const Value& a, const Value& b) {
  const bool a_num = a.is_number() || a.is_bool();
  const bool b_num = b.is_number() || b.is_bool();
  if (a_num && b_num) {
    if (a.is_float() || b.is_float())
      return a.as_number() == b.as_number();
    const auto ai = a.is_bool() ? std::int64_t{a.as_bool()} : a.as_int();
    const auto bi = b.is_bool() ? std::int64_t{b.as_bool()} : b.as_int();
    return ai == bi;
  }
  if (a.is_undefined() || b.is_undefined())
    return a.is_undefined() && b.is_undefined();
  if (a.is_none() || b.is_none())
    return a.is_none() && b.is_none();
  if (a.is_string() && b.is_string())
    return a.as_string() == b.as_string();
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list();
    const auto& y = b.as_list();
    return x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin(), equals);
  }
  if (a.is_dict() && b.is_dict()) {
    const auto& x = a.as_dict().items;
    const auto& y = b.as_dict();
    if (x.size() != y.items.size())
      return false;
    return std::all_of(x.begin(), x.end(), [&](const auto& kv) {
      const Value* other = y.find(kv.first);
      return other != nullptr && equals(kv.second, *other);
    });
  }
  if (a.is_namespace() && b.is_namespace())
    return a.as_namespace().attrs == b.as_namespace().attrs;
  return false;
}

bool less_than(const Value& a, const Value& b, SourcePos pos) {
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    if (a.is_int() && b.is_int())
      return a.as_int() < b.as_int();
    return a.as_number() < b.as_number();
  }
  if (a.is_string() && b.is_string())
    return a.as_string() < b.as_string();  // UTF-8 byte order is code point order
  if (a.is_list() && b.is_list()) {
    const auto& x = a.as_list();
    const auto& y = b.as_list();
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i]))
        return less_than(x[i], y[i], pos);
    }
    return x.size() < y.size();
  }
  throw JinjaError(
      "'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'",
      pos);
}

}  // namespace llmbench::tokenizer::detail::jinja
