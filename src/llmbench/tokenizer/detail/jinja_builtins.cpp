// Built-in filters, tests and global functions, after Jinja2 3.1's "List of Builtin Filters",
// "List of Builtin Tests" and "List of Global Functions" (Template Designer Documentation), with
// transformers' replacements: `tojson` is json.dumps(x, ensure_ascii=False, indent=None,
// separators=None, sort_keys=False) with those keyword names and that positional order, and
// the globals `raise_exception(message)` and `strftime_now(format)` (local time)
// (transformers `utils/chat_template_utils.py`, `_compile_jinja_template`).
#include "llmbench/tokenizer/detail/jinja_eval.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <string_view>

namespace llmbench::tokenizer::detail::jinja {
namespace {

const Value* arg(const CallArgs& args, std::size_t index, std::string_view keyword) {
  if (index < args.positional.size())
    return &args.positional[index];
  for (const auto& [k, v] : args.keyword) {
    if (k == keyword)
      return &v;
  }
  return nullptr;
}

bool bool_arg(const CallArgs& args, std::size_t index, std::string_view keyword) {
  const Value* v = arg(args, index, keyword);
  return v != nullptr && v->truthy();
}

/// Jinja2's attribute getter for `attribute=`: dotted paths, item lookup first.
Value attribute_of(const Value& item, const std::string& path, SourcePos pos) {
  Value v = item;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot - start);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(),
                                                      [](char c) { return c >= '0' && c <= '9'; });
    v = get_item(v, numeric ? Value(static_cast<std::int64_t>(std::stoll(part))) : Value(part),
                 pos);
    if (dot == std::string::npos || v.is_undefined())
      return v;
    start = dot + 1;
  }
}

/// Key for sort/min/max/unique: the attribute if given, lower-cased strings unless case-sensitive.
Value sort_key(const Value& item, const Value* attribute, bool case_sensitive, SourcePos pos) {
  Value v = attribute != nullptr && attribute->is_string()
                ? attribute_of(item, attribute->as_string(), pos)
                : item;
  if (!case_sensitive && v.is_string())
    return apply_filter("lower", v, {}, pos);
  return v;
}

/// The test named by args[first] applied with the rest of the arguments (select/reject).
bool run_test(const Value& item, const CallArgs& args, std::size_t first, SourcePos pos) {
  if (args.positional.size() <= first)
    return item.truthy();
  const Value& name = args.positional[first];
  if (!name.is_string())
    throw JinjaError("the test name must be a string", pos);
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(first) + 1,
                         args.positional.end());
  rest.keyword = args.keyword;
  return apply_test(name.as_string(), item, rest, pos);
}

Value select_impl(const Value& value, const CallArgs& args, SourcePos pos, bool keep,
                  bool by_attr) {
  List out;
  const Value* attr = by_attr ? arg(args, 0, "attribute") : nullptr;
  if (by_attr && (attr == nullptr || !attr->is_string()))
    throw JinjaError("selectattr/rejectattr need an attribute name", pos);
  for (const auto& item : iterate(value, pos)) {
    const Value subject = by_attr ? attribute_of(item, attr->as_string(), pos) : item;
    if (run_test(subject, args, by_attr ? 1 : 0, pos) == keep)
      out.push_back(item);
  }
  return Value(std::move(out));
}

Value map_impl(const Value& value, const CallArgs& args, SourcePos pos) {
  const Value* attr = arg(args, 99, "attribute");
  List out;
  if (attr != nullptr) {
    const Value* fallback = arg(args, 99, "default");
    for (const auto& item : iterate(value, pos)) {
      Value v = attribute_of(item, to_str(*attr), pos);
      out.push_back(v.is_undefined() && fallback != nullptr ? *fallback : v);
    }
    return Value(std::move(out));
  }
  if (args.positional.empty() || !args.positional[0].is_string())
    throw JinjaError("map needs a filter name or attribute=", pos);
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.keyword = args.keyword;
  for (const auto& item : iterate(value, pos))
    out.push_back(apply_filter(args.positional[0].as_string(), item, rest, pos));
  return Value(std::move(out));
}

Value tojson_impl(const Value& value, const CallArgs& args, SourcePos pos) {
  JsonDumpOptions options;
  options.ensure_ascii = bool_arg(args, 0, "ensure_ascii");
  if (const Value* indent = arg(args, 1, "indent"); indent != nullptr && !indent->is_none()) {
    options.pretty = true;
    if (indent->is_string())
      options.indent = indent->as_string();
    else if (indent->is_int())
      options.indent =
          std::string(static_cast<std::size_t>(std::max<std::int64_t>(0, indent->as_int())), ' ');
    else
      throw JinjaError("tojson indent must be an int or a string", pos);
  }
  if (const Value* seps = arg(args, 2, "separators"); seps != nullptr && !seps->is_none()) {
    if (!seps->is_list() || seps->as_list().size() != 2 || !seps->as_list()[0].is_string() ||
        !seps->as_list()[1].is_string())
      throw JinjaError("tojson separators must be an (item, key) pair of strings", pos);
    options.item_sep = seps->as_list()[0].as_string();
    options.key_sep = seps->as_list()[1].as_string();
  }
  options.sort_keys = bool_arg(args, 3, "sort_keys");
  return Value(to_json(value, options, pos));
}

Value join_impl(const Value& value, const CallArgs& args, SourcePos pos) {
  const Value* sep = arg(args, 0, "d");
  const Value* attr = arg(args, 1, "attribute");
  std::string out;
  bool first = true;
  for (const auto& item : iterate(value, pos)) {
    if (!first && sep != nullptr)
      out += to_str(*sep);
    first = false;
    out += to_str(attr != nullptr ? attribute_of(item, to_str(*attr), pos) : item);
  }
  return Value(std::move(out));
}

Value sort_impl(const Value& value, const CallArgs& args, SourcePos pos) {
  List items = iterate(value, pos);
  const bool reverse = bool_arg(args, 0, "reverse");
  const bool case_sensitive = bool_arg(args, 1, "case_sensitive");
  const Value* attr = arg(args, 2, "attribute");
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const Value ka = sort_key(a, attr, case_sensitive, pos);
    const Value kb = sort_key(b, attr, case_sensitive, pos);
    return reverse ? less_than(kb, ka, pos) : less_than(ka, kb, pos);
  });
  return Value(std::move(items));
}

Value minmax_impl(const Value& value, const CallArgs& args, SourcePos pos, bool want_max) {
  const List items = iterate(value, pos);
  if (items.empty())
    return Value::undefined("no first item, sequence was empty");
  const bool case_sensitive = bool_arg(args, 0, "case_sensitive");
  const Value* attr = arg(args, 1, "attribute");
  std::size_t best = 0;
  for (std::size_t i = 1; i < items.size(); ++i) {
    const Value ki = sort_key(items[i], attr, case_sensitive, pos);
    const Value kb = sort_key(items[best], attr, case_sensitive, pos);
    if (want_max ? less_than(kb, ki, pos) : less_than(ki, kb, pos))
      best = i;
  }
  return items[best];
}

Value int_impl(const Value& value, const CallArgs& args, SourcePos /*pos*/) {
  const Value* fallback = arg(args, 0, "default");
  Value def = fallback != nullptr ? *fallback : Value(0);
  if (value.is_int())
    return value;
  if (value.is_bool())
    return Value(std::int64_t{value.as_bool()});
  if (value.is_float())
    return std::isfinite(value.as_float()) ? Value(static_cast<std::int64_t>(value.as_float()))
                                           : def;
  if (value.is_string()) {
    try {
      std::size_t used = 0;
      const std::string& s = value.as_string();
      const double d = std::stod(s, &used);
      return used == s.size() ? Value(static_cast<std::int64_t>(d)) : def;
    } catch (const std::exception&) {
      return def;
    }
  }
  return def;
}

Value float_impl(const Value& value, const CallArgs& args, SourcePos /*pos*/) {
  const Value* fallback = arg(args, 0, "default");
  Value def = fallback != nullptr ? *fallback : Value(0.0);
  if (value.is_number() || value.is_bool())
    return Value(value.as_number());
  if (value.is_string()) {
    try {
      std::size_t used = 0;
      const double d = std::stod(value.as_string(), &used);
      return used == value.as_string().size() ? Value(d) : def;
    } catch (const std::exception&) {
      return def;
    }
  }
  return def;
}

Value items_impl(const Value& value, SourcePos pos) {
  if (value.is_undefined())
    return Value(List{});
  if (!value.is_dict())
    throw JinjaError("can only get item pairs from a mapping", pos);
  List out;
  for (const auto& [k, v] : value.as_dict().items) out.emplace_back(List{Value(k), v});
  return Value(std::move(out));
}

Value first_last(const Value& value, SourcePos pos, bool last) {
  const List items = iterate(value, pos);
  if (items.empty())
    return Value::undefined(last ? "no last item, sequence was empty"
                                 : "no first item, sequence was empty");
  return last ? items.back() : items.front();
}

Value unique_impl(const Value& value, const CallArgs& args, SourcePos pos) {
  const bool case_sensitive = bool_arg(args, 0, "case_sensitive");
  const Value* attr = arg(args, 1, "attribute");
  List out;
  List seen;
  for (const auto& item : iterate(value, pos)) {
    const Value key = sort_key(item, attr, case_sensitive, pos);
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value(std::move(out));
}

Value string_method(const char* method, const Value& value, const CallArgs& args, SourcePos pos) {
  const Value s = Value(to_str(value));
  CallArgs copy = args;
  return get_attr(s, method, pos).as_callable().fn(copy, pos);
}

}  // namespace

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args,
                   SourcePos pos) {
  if (name == "tojson")
    return tojson_impl(value, args, pos);
  if (name == "trim")
    return string_method("strip", value, args, pos);
  if (name == "length" || name == "count")
    return Value(length_of(value, pos));
  if (name == "string")
    return Value(to_str(value));
  if (name == "safe")
    return value;
  if (name == "lower" || name == "upper" || name == "title" || name == "capitalize")
    return string_method(name.c_str(), value, {}, pos);
  if (name == "replace")
    return string_method("replace", value, args, pos);
  if (name == "join")
    return join_impl(value, args, pos);
  if (name == "items")
    return items_impl(value, pos);
  if (name == "list")
    return Value(iterate(value, pos));
  if (name == "first" || name == "last")
    return first_last(value, pos, name == "last");
  if (name == "reverse") {
    if (value.is_string()) {
      std::u32string cps = code_points(value.as_string());
      std::reverse(cps.begin(), cps.end());
      return Value(from_code_points(cps));
    }
    List items = iterate(value, pos);
    std::reverse(items.begin(), items.end());
    return Value(std::move(items));
  }
  if (name == "default" || name == "d") {
    const Value* fallback = arg(args, 0, "default_value");
    const bool boolean = bool_arg(args, 1, "boolean");
    const bool use_default = value.is_undefined() || (boolean && !value.truthy());
    return use_default ? (fallback != nullptr ? *fallback : Value("")) : value;
  }
  if (name == "map")
    return map_impl(value, args, pos);
  if (name == "select" || name == "reject")
    return select_impl(value, args, pos, name == "select", false);
  if (name == "selectattr" || name == "rejectattr")
    return select_impl(value, args, pos, name == "selectattr", true);
  if (name == "sort")
    return sort_impl(value, args, pos);
  if (name == "unique")
    return unique_impl(value, args, pos);
  if (name == "min" || name == "max")
    return minmax_impl(value, args, pos, name == "max");
  if (name == "int")
    return int_impl(value, args, pos);
  if (name == "float")
    return float_impl(value, args, pos);
  if (name == "abs") {
    if (value.is_float())
      return Value(std::fabs(value.as_float()));
    if (value.is_int())
      return Value(value.as_int() < 0 ? -value.as_int() : value.as_int());
    throw JinjaError("bad operand type for abs(): '" + value.type_name() + "'", pos);
  }
  if (name == "sum") {
    Value total = arg(args, 1, "start") != nullptr ? *arg(args, 1, "start") : Value(0);
    const Value* attr = arg(args, 0, "attribute");
    for (const auto& item : iterate(value, pos)) {
      const Value v = attr != nullptr ? attribute_of(item, to_str(*attr), pos) : item;
      total = (total.is_float() || v.is_float()) ? Value(total.as_number() + v.as_number())
                                                 : Value(total.as_int() + v.as_int());
    }
    return total;
  }
  if (name == "attr")
    return get_attr(value, to_str(args.positional.empty() ? Value("") : args.positional[0]), pos);
  throw JinjaError("no filter named '" + name + "'", pos);
}

bool apply_test(const std::string& name, const Value& value, const CallArgs& args, SourcePos pos) {
  const auto other = [&]() -> const Value& {
    if (args.positional.empty())
      throw JinjaError("test '" + name + "' needs an argument", pos);
    return args.positional[0];
  };
  if (name == "defined")
    return !value.is_undefined();
  if (name == "undefined")
    return value.is_undefined();
  if (name == "none")
    return value.is_none();
  if (name == "string")
    return value.is_string();
  if (name == "mapping")
    return value.is_dict();
  if (name == "iterable")
    return value.is_list() || value.is_dict() || value.is_string() || value.is_undefined();
  if (name == "sequence")
    return value.is_list() || value.is_dict() || value.is_string() || value.is_undefined();
  if (name == "boolean")
    return value.is_bool();
  if (name == "true")
    return value.is_bool() && value.as_bool();
  if (name == "false")
    return value.is_bool() && !value.as_bool();
  if (name == "integer")
    return value.is_int();
  if (name == "float")
    return value.is_float();
  if (name == "number")
    return value.is_number() || value.is_bool();
  if (name == "callable")
    return value.is_callable();
  if (name == "eq" || name == "equalto" || name == "==")
    return equals(value, other());
  if (name == "ne" || name == "!=")
    return !equals(value, other());
  if (name == "lt" || name == "lessthan" || name == "<")
    return less_than(value, other(), pos);
  if (name == "gt" || name == "greaterthan" || name == ">")
    return less_than(other(), value, pos);
  if (name == "le" || name == "<=")
    return !less_than(other(), value, pos);
  if (name == "ge" || name == ">=")
    return !less_than(value, other(), pos);
  if (name == "in") {
    const Value& seq = other();
    if (seq.is_string())
      return value.is_string() && seq.as_string().find(value.as_string()) != std::string::npos;
    const List items = iterate(seq, pos);
    return std::any_of(items.begin(), items.end(),
                       [&](const Value& x) { return equals(x, value); });
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (!value.is_int())
      throw JinjaError("test '" + name + "' needs an integer", pos);
    const std::int64_t by = name == "divisibleby" ? other().as_int() : 2;
    if (by == 0)
      throw JinjaError("integer division or modulo by zero", pos);
    const bool divisible = value.as_int() % by == 0;
    return name == "odd" ? !divisible : divisible;
  }
  if (name == "lower" || name == "upper") {
    const Value s(to_str(value));
    return equals(apply_filter(name, s, {}, pos), s);
  }
  if (name == "sameas")
    return equals(value, other()) && value.type_name() == other().type_name();
  throw JinjaError("no test named '" + name + "'", pos);
}

namespace {

Value make_namespace(CallArgs& args, SourcePos pos) {
  auto attrs = std::make_shared<Dict>();
  for (const auto& p : args.positional) {
    if (!p.is_dict())
      throw JinjaError("namespace() takes a mapping or keyword arguments", pos);
    for (const auto& [k, v] : p.as_dict().items) attrs->set(k, v);
  }
  for (const auto& [k, v] : args.keyword) attrs->set(k, v);
  return Value(Namespace{.attrs = std::move(attrs)});
}

Value make_range(CallArgs& args, SourcePos pos) {
  std::array<std::int64_t, 3> v = {0, 0, 1};
  const std::size_t n = args.positional.size();
  if (n < 1 || n > 3 ||
      std::any_of(args.positional.begin(), args.positional.end(),
                  [](const Value& x) { return !x.is_int(); }))
    throw JinjaError("range() takes 1 to 3 integers", pos);
  if (n == 1) {
    v[1] = args.positional[0].as_int();
  } else {
    v[0] = args.positional[0].as_int();
    v[1] = args.positional[1].as_int();
    if (n == 3)
      v[2] = args.positional[2].as_int();
  }
  if (v[2] == 0)
    throw JinjaError("range() arg 3 must not be zero", pos);
  List out;
  // Jinja2's sandbox refuses ranges over MAX_RANGE (100000) items.
  for (std::int64_t i = v[0]; v[2] > 0 ? i < v[1] : i > v[1]; i += v[2]) {
    if (out.size() >= 100000)
      throw JinjaError("range too big, maximum size for range is 100000", pos);
    out.emplace_back(i);
  }
  return Value(std::move(out));
}

Value strftime_now(CallArgs& args, SourcePos pos) {
  if (args.positional.empty() || !args.positional[0].is_string())
    throw JinjaError("strftime_now() takes a format string", pos);
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string buf(256, '\0');
  const std::size_t n =
      std::strftime(buf.data(), buf.size(), args.positional[0].as_string().c_str(), &local);
  buf.resize(n);
  return Value(std::move(buf));
}

}  // namespace

Value global_function(const std::string& name) {
  if (name == "namespace")
    return Value(Callable{.name = name, .fn = make_namespace});
  if (name == "range")
    return Value(Callable{.name = name, .fn = make_range});
  if (name == "dict") {
    return Value(Callable{.name = name, .fn = [](CallArgs& args, SourcePos /*pos*/) {
                            Dict d;
                            for (const auto& [k, v] : args.keyword) d.set(k, v);
                            return Value(std::move(d));
                          }});
  }
  if (name == "raise_exception") {
    return Value(Callable{.name = name, .fn = [](CallArgs& args, SourcePos pos) -> Value {
                            throw JinjaError(args.positional.empty()
                                                 ? std::string("raise_exception")
                                                 : to_str(args.positional[0]),
                                             pos);
                          }});
  }
  if (name == "strftime_now")
    return Value(Callable{.name = name, .fn = strftime_now});
  return Value::undefined("'" + name + "' is undefined");
}

}  // namespace llmbench::tokenizer::detail::jinja
