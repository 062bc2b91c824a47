#pragma once
/// @file
/// Values of the chat-template interpreter (docs/chat-templates.md). They follow the Python
/// objects Jinja2 works on when transformers renders a template: `None`, `bool`, `int`, `float`,
/// `str` (indexed and measured in code points), `list`, `dict` (insertion-ordered, string keys),
/// Jinja2's `Undefined`, `namespace()` objects and callables (macros, globals, bound methods).
/// Lists and dicts are immutable, as in transformers' `ImmutableSandboxedEnvironment`; only a
/// namespace changes (`{% set ns.x = ... %}`).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace llmbench::tokenizer::detail::jinja {

/// A 1-based line and column (in bytes) of the template source.
struct SourcePos {
  int line = 1;
  int column = 1;
};

/// An error raised while lexing, parsing or rendering; `pos` is where in the template.
/// Converted to `llmbench::Exception` naming the template by `ChatTemplate`.
class JinjaError : public std::runtime_error {
 public:
  JinjaError(const std::string& message, SourcePos pos) : std::runtime_error(message), pos_(pos) {}
  /// Where the error happened.
  [[nodiscard]] SourcePos pos() const noexcept { return pos_; }

 private:
  SourcePos pos_;
};

class Value;
/// A Python list (also stands for tuples).
using List = std::vector<Value>;
/// A Python dict with string keys, in insertion order.
struct Dict;
/// Positional and keyword arguments of a call.
struct CallArgs;
/// A callable: macro, global function or bound method. `pos` is the call site.
using Function = std::function<Value(CallArgs& args, SourcePos pos)>;

/// Jinja2's `Undefined`: what a missing variable, key or attribute evaluates to. `hint` says
/// what was missing, for the error when it is used as a value ("'x' is undefined").
struct Undefined {
  std::string hint;
};
/// Python's `None`.
struct None {};
/// A named callable.
struct Callable {
  std::string name;
  Function fn;
};
/// A `namespace(...)` object: the one mutable value.
struct Namespace {
  std::shared_ptr<Dict> attrs;
};

/// One value. Cheap to copy: lists, dicts and namespaces are shared.
class Value {
 public:
  using Storage = std::variant<Undefined, None, bool, std::int64_t, double, std::string,
                               std::shared_ptr<const List>, std::shared_ptr<const Dict>, Namespace,
                               std::shared_ptr<const Callable>>;
  Value() = default;
  Value(None /*unused*/) : v_(None{}) {}
  Value(bool b) : v_(b) {}
  Value(std::int64_t i) : v_(i) {}
  Value(int i) : v_(std::int64_t{i}) {}
  Value(double d) : v_(d) {}
  Value(std::string s) : v_(std::move(s)) {}
  Value(const char* s) : v_(std::string(s)) {}
  Value(List l) : v_(std::make_shared<const List>(std::move(l))) {}
  Value(Dict d);
  Value(Namespace n) : v_(std::move(n)) {}
  Value(Callable c) : v_(std::make_shared<const Callable>(std::move(c))) {}
  /// An undefined value that remembers what was missing.
  static Value undefined(std::string hint) { return Value(Storage(Undefined{std::move(hint)})); }

  [[nodiscard]] bool is_undefined() const { return v_.index() == 0; }
  [[nodiscard]] bool is_none() const { return v_.index() == 1; }
  [[nodiscard]] bool is_bool() const { return v_.index() == 2; }
  [[nodiscard]] bool is_int() const { return v_.index() == 3; }
  [[nodiscard]] bool is_float() const { return v_.index() == 4; }
  /// int or float (Python's bool counts as a number only in arithmetic, see `as_number`).
  [[nodiscard]] bool is_number() const { return is_int() || is_float(); }
  [[nodiscard]] bool is_string() const { return v_.index() == 5; }
  [[nodiscard]] bool is_list() const { return v_.index() == 6; }
  [[nodiscard]] bool is_dict() const { return v_.index() == 7; }
  [[nodiscard]] bool is_namespace() const { return v_.index() == 8; }
  [[nodiscard]] bool is_callable() const { return v_.index() == 9; }

  [[nodiscard]] bool as_bool() const { return std::get<bool>(v_); }
  [[nodiscard]] std::int64_t as_int() const { return std::get<std::int64_t>(v_); }
  [[nodiscard]] double as_float() const { return std::get<double>(v_); }
  /// int, float or bool as a double.
  [[nodiscard]] double as_number() const;
  [[nodiscard]] const std::string& as_string() const { return std::get<std::string>(v_); }
  [[nodiscard]] const List& as_list() const { return *std::get<6>(v_); }
  [[nodiscard]] const Dict& as_dict() const { return *std::get<7>(v_); }
  [[nodiscard]] const Namespace& as_namespace() const { return std::get<Namespace>(v_); }
  [[nodiscard]] const Callable& as_callable() const { return *std::get<9>(v_); }
  [[nodiscard]] const std::string& undefined_hint() const { return std::get<Undefined>(v_).hint; }

  /// Python truthiness (`bool(x)`; an undefined value is false).
  [[nodiscard]] bool truthy() const;
  /// Python's type name ("str", "dict", "NoneType", "Undefined", ...), for error messages.
  [[nodiscard]] std::string type_name() const;

 private:
  explicit Value(Storage s) : v_(std::move(s)) {}
  Storage v_;
};

/// Insertion-ordered string-keyed map (Python 3.7+ dict order).
struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  /// The value under `key`, or nullptr.
  [[nodiscard]] const Value* find(std::string_view key) const;
  /// Sets `key` (replacing in place, or appending).
  void set(const std::string& key, Value value);
};

inline Value::Value(Dict d) : v_(std::make_shared<const Dict>(std::move(d))) {}

/// Arguments of one call, positional then keyword (in the order written).
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
};

/// `str(v)` as Jinja2 prints it: "None", "True", Python float repr, Python list/dict repr;
/// undefined prints as "". Throws `JinjaError` at `pos` for nothing (every value prints).
std::string to_str(const Value& v);
/// Python `repr(v)` (strings quoted the way Python quotes them).
std::string to_repr(const Value& v);
/// Python's `repr(float)`: shortest round-trip digits, exponent form below 1e-4 or from 1e16.
std::string float_repr(double d);

/// Options of transformers' `tojson` filter (`json.dumps(x, ensure_ascii=False, indent=...,
/// separators=..., sort_keys=...)`, transformers `utils/chat_template_utils.py`).
struct JsonDumpOptions {
  bool pretty = false;        ///< `indent` given: a newline and `indent` per level
  std::string indent;         ///< the indent string (json.dumps takes an int n as n spaces)
  std::string item_sep;       ///< empty: Python's default (", " or "," with indent)
  std::string key_sep;        ///< empty: ": "
  bool sort_keys = false;     ///< sort dict keys (by code point)
  bool ensure_ascii = false;  ///< escape non-ASCII as \uXXXX (surrogate pairs above U+FFFF)
};
/// Python `json.dumps`; throws `JinjaError` at `pos` for values JSON cannot hold (undefined,
/// callables, namespaces), as Python raises TypeError.
std::string to_json(const Value& v, const JsonDumpOptions& options, SourcePos pos);

/// Converts parsed JSON (the render context) to values; integers stay ints, others floats.
Value from_json(const nlohmann::ordered_json& j);

/// Python `==` (1 == 1.0 == True; lists and dicts compared deeply).
bool equals(const Value& a, const Value& b);
/// Python `<` for numbers, strings (code point order) and lists; throws `JinjaError` at `pos`
/// for other pairs (TypeError in Python).
bool less_than(const Value& a, const Value& b, SourcePos pos);

// ---- strings as code points ----

/// Code points of UTF-8 `s` (invalid bytes count one each).
std::u32string code_points(std::string_view s);
/// UTF-8 of code points.
std::string from_code_points(const std::u32string& cps);
/// Python's `str.isspace` for one code point.
bool is_py_space(char32_t c);

}  // namespace llmbench::tokenizer::detail::jinja
