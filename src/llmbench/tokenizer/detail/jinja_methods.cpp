// Attribute and item access, slicing, iteration and the Python str/dict methods templates call
// (`content.split('</think>')`, `message.items()`, ...). Jinja2's `Environment.getattr` /
// `getitem` rules: a missing attribute, key or index is Undefined, not an error; methods that
// would change a list or dict raise, as `ImmutableSandboxedEnvironment` does.
#include "llmbench/tokenizer/detail/jinja_eval.hpp"

#include <algorithm>
#include <array>

namespace llmbench::tokenizer::detail::jinja {
namespace {

Value missing_attr(const Value& obj, const std::string& name) {
  return Value::undefined("'" + obj.type_name() + " object' has no attribute '" + name + "'");
}

/// A method bound to `self`.
Value bound(const Value& self, const std::string& name,
            Value (*fn)(const Value& self, const CallArgs& args, SourcePos pos)) {
  return Value(Callable{.name = name, .fn = [self, fn](CallArgs& args, SourcePos pos) {
                          return fn(self, args, pos);
                        }});
}

Value unsafe(const Value& self, const std::string& name) {
  const std::string type = self.type_name();
  return Value(
      Callable{.name = name, .fn = [type, name](CallArgs& /*args*/, SourcePos pos) -> Value {
                 throw JinjaError(
                     "access to attribute '" + name + "' of '" + type + "' object is unsafe", pos);
               }});
}

const Value* arg(const CallArgs& args, std::size_t index, std::string_view keyword) {
  if (index < args.positional.size())
    return &args.positional[index];
  for (const auto& [k, v] : args.keyword) {
    if (k == keyword)
      return &v;
  }
  return nullptr;
}

const std::string& string_arg(const CallArgs& args, std::size_t index, std::string_view keyword,
                              SourcePos pos) {
  const Value* v = arg(args, index, keyword);
  if (v == nullptr || !v->is_string())
    throw JinjaError("expected a string for argument '" + std::string(keyword) + "'", pos);
  return v->as_string();
}

// ---- str methods ----

/// Python's strip family: `chars` None strips whitespace, else any of its code points.
std::string strip_impl(const std::string& s, const Value* chars, bool left, bool right) {
  const std::u32string cps = code_points(s);
  const std::u32string set =
      chars != nullptr && chars->is_string() ? code_points(chars->as_string()) : std::u32string();
  const bool ws = chars == nullptr || chars->is_none();
  const auto strip_it = [&](char32_t c) {
    return ws ? is_py_space(c) : set.find(c) != std::u32string::npos;
  };
  std::size_t b = 0;
  std::size_t e = cps.size();
  while (left && b < e && strip_it(cps[b])) ++b;
  while (right && e > b && strip_it(cps[e - 1])) --e;
  return from_code_points(cps.substr(b, e - b));
}

Value str_strip(const Value& self, const CallArgs& args, SourcePos /*pos*/) {
  return Value(strip_impl(self.as_string(), arg(args, 0, "chars"), true, true));
}
Value str_lstrip(const Value& self, const CallArgs& args, SourcePos /*pos*/) {
  return Value(strip_impl(self.as_string(), arg(args, 0, "chars"), true, false));
}
Value str_rstrip(const Value& self, const CallArgs& args, SourcePos /*pos*/) {
  return Value(strip_impl(self.as_string(), arg(args, 0, "chars"), false, true));
}

bool affix_match(const Value& self, const CallArgs& args, SourcePos pos, bool prefix) {
  const Value* a = arg(args, 0, prefix ? "prefix" : "suffix");
  const std::string& s = self.as_string();
  const auto one = [&](const Value& v) {
    if (!v.is_string())
      throw JinjaError(std::string(prefix ? "startswith" : "endswith") +
                           " first arg must be str or a tuple of str",
                       pos);
    const std::string& x = v.as_string();
    return x.size() <= s.size() && (prefix ? s.compare(0, x.size(), x) == 0
                                           : s.compare(s.size() - x.size(), x.size(), x) == 0);
  };
  if (a != nullptr && a->is_list())
    return std::any_of(a->as_list().begin(), a->as_list().end(), one);
  if (a == nullptr)
    throw JinjaError("startswith/endswith takes one argument", pos);
  return one(*a);
}
Value str_startswith(const Value& self, const CallArgs& args, SourcePos pos) {
  return Value(affix_match(self, args, pos, true));
}
Value str_endswith(const Value& self, const CallArgs& args, SourcePos pos) {
  return Value(affix_match(self, args, pos, false));
}

/// Python str.split / rsplit: with a separator, every occurrence (at most `maxsplit`); without,
/// runs of whitespace, ignoring leading and trailing whitespace.
Value split_impl(const Value& self, const CallArgs& args, SourcePos pos, bool from_right) {
  const std::string& s = self.as_string();
  const Value* sep = arg(args, 0, "sep");
  const Value* max_v = arg(args, 1, "maxsplit");
  std::int64_t maxsplit = max_v != nullptr && max_v->is_int() ? max_v->as_int() : -1;
  List parts;
  if (sep == nullptr || sep->is_none()) {
    std::u32string cps = code_points(s);
    if (from_right)  // split the reversed text from the left, then undo the reversal
      std::reverse(cps.begin(), cps.end());
    std::vector<std::u32string> words;
    std::size_t i = 0;
    while (true) {
      while (i < cps.size() && is_py_space(cps[i])) ++i;
      if (i >= cps.size())
        break;
      std::size_t j = i;
      if (maxsplit == 0) {
        j = cps.size();
        while (j > i && is_py_space(cps[j - 1])) --j;
      } else {
        while (j < cps.size() && !is_py_space(cps[j])) ++j;
      }
      words.push_back(cps.substr(i, j - i));
      if (maxsplit == 0)
        break;
      --maxsplit;
      i = j;
    }
    if (from_right) {
      std::reverse(words.begin(), words.end());
      for (auto& w : words) std::reverse(w.begin(), w.end());
    }
    for (const auto& w : words) parts.emplace_back(from_code_points(w));
    return Value(std::move(parts));
  }
  if (!sep->is_string())
    throw JinjaError("must be str or None, not " + sep->type_name(), pos);
  const std::string& d = sep->as_string();
  if (d.empty())
    throw JinjaError("empty separator", pos);
  std::vector<std::string> pieces;
  if (!from_right) {
    std::size_t start = 0;
    for (std::size_t at = s.find(d); at != std::string::npos && maxsplit != 0;
         at = s.find(d, start), --maxsplit) {
      pieces.push_back(s.substr(start, at - start));
      start = at + d.size();
    }
    pieces.push_back(s.substr(start));
  } else {
    std::size_t end = s.size();
    while (maxsplit != 0 && end >= d.size()) {
      const std::size_t at = s.rfind(d, end - d.size());
      if (at == std::string::npos)
        break;
      pieces.push_back(s.substr(at + d.size(), end - at - d.size()));
      end = at;
      --maxsplit;
    }
    pieces.push_back(s.substr(0, end));
    std::reverse(pieces.begin(), pieces.end());
  }
  for (auto& p : pieces) parts.emplace_back(std::move(p));
  return Value(std::move(parts));
}
Value str_split(const Value& self, const CallArgs& args, SourcePos pos) {
  return split_impl(self, args, pos, false);
}
Value str_rsplit(const Value& self, const CallArgs& args, SourcePos pos) {
  return split_impl(self, args, pos, true);
}

Value str_replace(const Value& self, const CallArgs& args, SourcePos pos) {
  const std::string& old_s = string_arg(args, 0, "old", pos);
  const std::string& new_s = string_arg(args, 1, "new", pos);
  const Value* count_v = arg(args, 2, "count");
  std::int64_t count = count_v != nullptr && count_v->is_int() ? count_v->as_int() : -1;
  const std::string& s = self.as_string();
  std::string out;
  if (old_s.empty()) {  // Python inserts `new` between every code point
    const std::u32string cps = code_points(s);
    for (std::size_t i = 0; i <= cps.size(); ++i) {
      if (count != 0) {
        out += new_s;
        --count;
      }
      if (i < cps.size())
        out += from_code_points(cps.substr(i, 1));
    }
    return Value(std::move(out));
  }
  std::size_t start = 0;
  for (std::size_t at = s.find(old_s); at != std::string::npos && count != 0;
       at = s.find(old_s, start), --count) {
    out += s.substr(start, at - start) + new_s;
    start = at + old_s.size();
  }
  out += s.substr(start);
  return Value(std::move(out));
}

/// ASCII case mapping (Python maps all of Unicode; templates apply these to role names).
std::string ascii_case(std::string s, bool upper) {
  for (char& c : s) {
    if (upper && c >= 'a' && c <= 'z')
      c = static_cast<char>(c - 'a' + 'A');
    if (!upper && c >= 'A' && c <= 'Z')
      c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}
Value str_upper(const Value& self, const CallArgs& /*args*/, SourcePos /*pos*/) {
  return Value(ascii_case(self.as_string(), true));
}
Value str_lower(const Value& self, const CallArgs& /*args*/, SourcePos /*pos*/) {
  return Value(ascii_case(self.as_string(), false));
}
Value str_title(const Value& self, const CallArgs& /*args*/, SourcePos /*pos*/) {
  std::string s = self.as_string();
  bool start = true;
  for (char& c : s) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    if (alpha)
      c = start ? ascii_case(std::string(1, c), true)[0] : ascii_case(std::string(1, c), false)[0];
    start = !alpha;
  }
  return Value(std::move(s));
}
Value str_capitalize(const Value& self, const CallArgs& /*args*/, SourcePos /*pos*/) {
  std::string s = ascii_case(self.as_string(), false);
  if (!s.empty())
    s[0] = ascii_case(s.substr(0, 1), true)[0];
  return Value(std::move(s));
}
Value str_find(const Value& self, const CallArgs& args, SourcePos pos) {
  const std::string& sub = string_arg(args, 0, "sub", pos);
  const std::size_t at = self.as_string().find(sub);
  if (at == std::string::npos)
    return Value(-1);
  return Value(static_cast<std::int64_t>(code_points(self.as_string().substr(0, at)).size()));
}
Value str_count(const Value& self, const CallArgs& args, SourcePos pos) {
  const std::string& sub = string_arg(args, 0, "sub", pos);
  const std::string& s = self.as_string();
  if (sub.empty())
    return Value(static_cast<std::int64_t>(code_points(s).size() + 1));
  std::int64_t n = 0;
  for (std::size_t at = s.find(sub); at != std::string::npos; at = s.find(sub, at + sub.size()))
    ++n;
  return Value(n);
}
Value str_join(const Value& self, const CallArgs& args, SourcePos pos) {
  const Value* items = arg(args, 0, "iterable");
  if (items == nullptr)
    throw JinjaError("join() takes exactly one argument", pos);
  std::string out;
  bool first = true;
  for (const auto& x : iterate(*items, pos)) {
    if (!x.is_string())
      throw JinjaError("sequence item: expected str instance, " + x.type_name() + " found", pos);
    out += (first ? "" : self.as_string()) + x.as_string();
    first = false;
  }
  return Value(std::move(out));
}

// ---- dict methods ----

Value dict_items(const Value& self, const CallArgs& /*args*/, SourcePos /*pos*/) {
  List out;
  for (const auto& [k, v] : self.as_dict().items) out.emplace_back(List{Value(k), v});
  return Value(std::move(out));
}
Value dict_keys(const Value& self, const CallArgs& /*args*/, SourcePos /*pos*/) {
  List out;
  for (const auto& kv : self.as_dict().items) out.emplace_back(kv.first);
  return Value(std::move(out));
}
Value dict_values(const Value& self, const CallArgs& /*args*/, SourcePos /*pos*/) {
  List out;
  for (const auto& kv : self.as_dict().items) out.push_back(kv.second);
  return Value(std::move(out));
}
Value dict_get(const Value& self, const CallArgs& args, SourcePos pos) {
  const Value* key = arg(args, 0, "key");
  if (key == nullptr)
    throw JinjaError("get expected at least 1 argument", pos);
  const Value* fallback = arg(args, 1, "default");
  const Value* found = key->is_string() ? self.as_dict().find(key->as_string()) : nullptr;
  if (found != nullptr)
    return *found;
  return fallback != nullptr ? *fallback : Value(None{});
}

using Method = Value (*)(const Value&, const CallArgs&, SourcePos);
struct MethodEntry {
  std::string_view name;
  Method fn;
};
constexpr std::array<MethodEntry, 16> kStrMethods = {{
    {"strip", str_strip},
    {"lstrip", str_lstrip},
    {"rstrip", str_rstrip},
    {"startswith", str_startswith},
    {"endswith", str_endswith},
    {"split", str_split},
    {"rsplit", str_rsplit},
    {"replace", str_replace},
    {"upper", str_upper},
    {"lower", str_lower},
    {"title", str_title},
    {"capitalize", str_capitalize},
    {"find", str_find},
    {"count", str_count},
    {"join", str_join},
    {"format", nullptr},
}};
constexpr std::array<MethodEntry, 4> kDictMethods = {
    {{"items", dict_items}, {"keys", dict_keys}, {"values", dict_values}, {"get", dict_get}}};
constexpr std::array<std::string_view, 6> kDictUnsafe = {"pop",    "popitem", "setdefault",
                                                         "update", "clear",   "copy"};
constexpr std::array<std::string_view, 8> kListUnsafe = {"append", "extend",  "insert", "pop",
                                                         "remove", "reverse", "sort",   "clear"};

template <std::size_t N>
const MethodEntry* find_method(const std::array<MethodEntry, N>& table, std::string_view name) {
  const auto it = std::find_if(table.begin(), table.end(),
                               [&](const MethodEntry& m) { return m.name == name; });
  return it == table.end() ? nullptr : &*it;
}

std::int64_t normalize_index(std::int64_t i, std::int64_t n) {
  return i < 0 ? i + n : i;
}

}  // namespace

void fail_undefined(const Value& v, SourcePos pos) {
  throw JinjaError(v.is_undefined() ? v.undefined_hint() : "value is undefined", pos);
}

List iterate(const Value& v, SourcePos pos) {
  if (v.is_undefined())
    return {};
  if (v.is_list())
    return v.as_list();
  if (v.is_dict())
    return dict_keys(v, {}, pos).as_list();
  if (v.is_string()) {
    List out;
    for (const char32_t c : code_points(v.as_string()))
      out.emplace_back(from_code_points(std::u32string(1, c)));
    return out;
  }
  throw JinjaError("'" + v.type_name() + "' object is not iterable", pos);
}

std::int64_t length_of(const Value& v, SourcePos pos) {
  if (v.is_undefined())
    return 0;
  if (v.is_string())
    return static_cast<std::int64_t>(code_points(v.as_string()).size());
  if (v.is_list())
    return static_cast<std::int64_t>(v.as_list().size());
  if (v.is_dict())
    return static_cast<std::int64_t>(v.as_dict().items.size());
  throw JinjaError("object of type '" + v.type_name() + "' has no len()", pos);
}

Value get_attr(const Value& obj, const std::string& name, SourcePos pos) {
  if (obj.is_undefined())
    fail_undefined(obj, pos);
  if (obj.is_string()) {
    if (const MethodEntry* m = find_method(kStrMethods, name); m != nullptr && m->fn != nullptr)
      return bound(obj, name, m->fn);
    return missing_attr(obj, name);
  }
  if (obj.is_dict()) {
    if (const MethodEntry* m = find_method(kDictMethods, name))
      return bound(obj, name, m->fn);
    if (std::find(kDictUnsafe.begin(), kDictUnsafe.end(), name) != kDictUnsafe.end())
      return unsafe(obj, name);
    if (const Value* v = obj.as_dict().find(name))
      return *v;
    return missing_attr(obj, name);
  }
  if (obj.is_namespace()) {
    if (const Value* v = obj.as_namespace().attrs->find(name))
      return *v;
    return missing_attr(obj, name);
  }
  if (obj.is_list() && std::find(kListUnsafe.begin(), kListUnsafe.end(), name) != kListUnsafe.end())
    return unsafe(obj, name);
  return missing_attr(obj, name);
}

Value get_item(const Value& obj, const Value& key, SourcePos pos) {
  if (obj.is_undefined())
    fail_undefined(obj, pos);
  if (obj.is_dict() && key.is_string()) {
    if (const Value* v = obj.as_dict().find(key.as_string()))
      return *v;
    return get_attr(obj, key.as_string(), pos);
  }
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool())) {
    const std::int64_t raw = key.is_bool() ? std::int64_t{key.as_bool()} : key.as_int();
    if (obj.is_list()) {
      const auto n = static_cast<std::int64_t>(obj.as_list().size());
      const std::int64_t i = normalize_index(raw, n);
      if (i < 0 || i >= n)
        return Value::undefined("list object has no element " + std::to_string(raw));
      return obj.as_list()[static_cast<std::size_t>(i)];
    }
    const std::u32string cps = code_points(obj.as_string());
    const auto n = static_cast<std::int64_t>(cps.size());
    const std::int64_t i = normalize_index(raw, n);
    if (i < 0 || i >= n)
      return Value::undefined("str object has no element " + std::to_string(raw));
    return Value(from_code_points(cps.substr(static_cast<std::size_t>(i), 1)));
  }
  if (key.is_string())
    return get_attr(obj, key.as_string(), pos);
  return Value::undefined("'" + obj.type_name() + " object' has no element " + to_repr(key));
}

Value slice_value(const Value& obj, const Value& start, const Value& stop, const Value& step,
                  SourcePos pos) {
  if (obj.is_undefined())
    fail_undefined(obj, pos);
  const bool is_str = obj.is_string();
  if (!is_str && !obj.is_list())
    throw JinjaError("'" + obj.type_name() + "' object is not subscriptable", pos);
  const std::u32string cps = is_str ? code_points(obj.as_string()) : std::u32string();
  const auto n = static_cast<std::int64_t>(is_str ? cps.size() : obj.as_list().size());
  const auto int_or = [&](const Value& v, std::int64_t fallback) {
    if (v.is_none())
      return fallback;
    if (!v.is_int())
      throw JinjaError("slice indices must be integers or None", pos);
    return v.as_int();
  };
  const std::int64_t st = int_or(step, 1);
  if (st == 0)
    throw JinjaError("slice step cannot be zero", pos);
  // Python's slice.indices(): clamp the bounds into range for the step's direction.
  const auto clamp = [&](std::int64_t i, bool is_start) {
    if (i < 0)
      i += n;
    if (st > 0)
      return std::clamp<std::int64_t>(i, 0, n);
    (void)is_start;
    return std::clamp<std::int64_t>(i, -1, n - 1);
  };
  const std::int64_t b = start.is_none() ? (st > 0 ? 0 : n - 1) : clamp(int_or(start, 0), true);
  const std::int64_t e = stop.is_none() ? (st > 0 ? n : -1) : clamp(int_or(stop, 0), false);
  List out;
  std::u32string sub;
  for (std::int64_t i = b; st > 0 ? i < e : i > e; i += st) {
    if (is_str)
      sub.push_back(cps[static_cast<std::size_t>(i)]);
    else
      out.push_back(obj.as_list()[static_cast<std::size_t>(i)]);
  }
  return is_str ? Value(from_code_points(sub)) : Value(std::move(out));
}

}  // namespace llmbench::tokenizer::detail::jinja
