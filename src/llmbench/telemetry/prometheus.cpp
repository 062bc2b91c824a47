#include "llmbench/telemetry/prometheus.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace llmbench::telemetry {

namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t';
}
bool is_name_start(char c, bool colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (colon && c == ':');
}
bool is_name_char(char c, bool colon) {
  return is_name_start(c, colon) || (c >= '0' && c <= '9');
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? char(c - 'A' + 'a') : c; };
           return lower(x) == lower(y);
         });
}

/// One line being read; `fail` builds the error that names it.
class LineReader {
 public:
  LineReader(std::string_view line, std::int64_t number, std::int64_t offset,
             std::string_view source)
      : line_(line), number_(number), offset_(offset), source_(source) {}

  void skip_blanks() {
    while (pos_ < line_.size() && is_blank(line_[pos_])) ++pos_;
  }
  [[nodiscard]] bool at_end() const { return pos_ >= line_.size(); }
  [[nodiscard]] char peek() const { return at_end() ? '\0' : line_[pos_]; }
  void advance() { ++pos_; }
  [[nodiscard]] std::string_view rest() const { return line_.substr(pos_); }

  /// A metric (`colon`) or label name; "" when none starts here.
  std::string_view name(bool colon) {
    const std::size_t start = pos_;
    if (pos_ < line_.size() && is_name_start(line_[pos_], colon)) {
      ++pos_;
      while (pos_ < line_.size() && is_name_char(line_[pos_], colon)) ++pos_;
    }
    return line_.substr(start, pos_ - start);
  }
  /// The next run of non-blank characters.
  std::string_view token() {
    const std::size_t start = pos_;
    while (pos_ < line_.size() && !is_blank(line_[pos_])) ++pos_;
    return line_.substr(start, pos_ - start);
  }

  [[nodiscard]] Error fail(std::string_view what) const {
    return Error{fmt::format("line {}: {} (column {})", number_, what, pos_ + 1),
                 std::string(source_), offset_};
  }

 private:
  std::string_view line_;
  std::size_t pos_ = 0;
  std::int64_t number_;
  std::int64_t offset_;
  std::string_view source_;
};

/// A quoted label value after its opening quote, unescaped (`\\`, `\"`, `\n`).
Result<std::string> read_label_value(LineReader& r) {
  std::string value;
  while (!r.at_end()) {
    const char c = r.peek();
    r.advance();
    if (c == '"')  // Error is constructible from a string too, hence in_place_value
      return Result<std::string>(boost::system::in_place_value, std::move(value));
    if (c != '\\') {
      value += c;
      continue;
    }
    const char e = r.peek();
    if (e == '\\' || e == '"') {
      value += e;
    } else if (e == 'n') {
      value += '\n';
    } else {
      return r.fail(fmt::format("label value has an unknown escape '\\{}'", e));
    }
    r.advance();
  }
  return r.fail("label value has no closing quote");
}

Result<std::vector<Label>> read_labels(LineReader& r) {
  std::vector<Label> labels;
  r.advance();  // '{'
  for (;;) {
    r.skip_blanks();
    if (r.peek() == '}') {
      r.advance();
      return labels;
    }
    const std::string_view name = r.name(false);
    if (name.empty())
      return r.fail("expected a label name or '}'");
    r.skip_blanks();
    if (r.peek() != '=')
      return r.fail(fmt::format("expected '=' after label '{}'", name));
    r.advance();
    r.skip_blanks();
    if (r.peek() != '"')
      return r.fail(fmt::format("expected '\"' to open the value of label '{}'", name));
    r.advance();
    auto value = read_label_value(r);
    if (!value)
      return value.error();
    if (std::any_of(labels.begin(), labels.end(), [&](const Label& l) { return l.name == name; }))
      return r.fail(fmt::format("label '{}' given twice", name));
    labels.push_back(Label{.name = std::string(name), .value = std::move(*value)});
    r.skip_blanks();
    if (r.peek() == ',') {
      r.advance();
    } else if (r.peek() != '}') {
      return r.fail("expected ',' or '}' after a label value");
    }
  }
}

std::string unescape_help(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '\\' || text[i + 1] == 'n')) {
      out += text[i + 1] == 'n' ? '\n' : '\\';
      ++i;
    } else {
      out += text[i];
    }
  }
  return out;
}

/// Parse state across lines: families by name, and the names that already had samples.
struct State {
  Exposition out;
  std::unordered_map<std::string, std::size_t> family_index;
  std::unordered_map<std::string, bool> typed;  ///< name → a TYPE line was seen

  Family& family(std::string_view name) {
    const auto [it, inserted] = family_index.try_emplace(std::string(name), out.families.size());
    if (inserted)
      out.families.push_back(Family{.name = std::string(name)});
    return out.families[it->second];
  }
};

Result<bool> read_comment(LineReader& r, State& s) {
  r.advance();  // '#'
  r.skip_blanks();
  const std::string_view keyword = r.token();
  if (keyword != "HELP" && keyword != "TYPE")
    return true;  // a plain comment
  r.skip_blanks();
  const std::string_view name = r.name(true);
  if (name.empty())
    return r.fail(fmt::format("# {} needs a metric name", keyword));
  if (!r.at_end() && !is_blank(r.peek()))
    return r.fail(fmt::format("bad character '{}' in metric name", r.peek()));
  r.skip_blanks();
  if (keyword == "HELP") {
    s.family(name).help = unescape_help(r.rest());
    return true;
  }
  const std::string_view type_word = r.token();
  const auto* it = std::find_if(kMetricTypeNames.begin(), kMetricTypeNames.end(),
                                [&](const MetricTypeName& t) { return t.name == type_word; });
  if (it == kMetricTypeNames.end()) {
    return r.fail(
        fmt::format("unknown metric type '{}' (valid: counter, gauge, histogram, summary, untyped)",
                    type_word));
  }
  if (s.typed.count(std::string(name)) != 0)
    return r.fail(fmt::format("second # TYPE line for '{}'", name));
  const bool has_samples =
      std::any_of(s.out.samples.begin(), s.out.samples.end(), [&](const Sample& smp) {
        const std::string_view n = smp.name;
        if (n.size() < name.size() || n.substr(0, name.size()) != name)
          return false;
        const std::string_view suffix = n.substr(name.size());
        return suffix.empty() || suffix == "_bucket" || suffix == "_sum" || suffix == "_count";
      });
  if (has_samples)
    return r.fail(fmt::format("# TYPE line for '{}' after its samples", name));
  s.typed[std::string(name)] = true;
  s.family(name).type = it->type;
  return true;
}

Result<bool> read_sample(LineReader& r, State& s) {
  Sample sample;
  sample.name = std::string(r.name(true));
  if (sample.name.empty())
    return r.fail(fmt::format("a sample must start with a metric name, not '{}'", r.peek()));
  if (!r.at_end() && !is_blank(r.peek()) && r.peek() != '{')
    return r.fail(fmt::format("bad character '{}' in metric name", r.peek()));
  r.skip_blanks();
  if (r.peek() == '{') {
    auto labels = read_labels(r);
    if (!labels)
      return labels.error();
    sample.labels = std::move(*labels);
  }
  r.skip_blanks();
  const std::string_view value_text = r.token();
  if (value_text.empty())
    return r.fail(fmt::format("sample '{}' has no value", sample.name));
  const auto value = parse_prometheus_float(value_text);
  if (!value)
    return r.fail(fmt::format("'{}' is not a float value", value_text));
  sample.value = *value;
  r.skip_blanks();
  if (!r.at_end()) {
    const std::string_view ts = r.token();
    std::int64_t ms = 0;
    const auto [end, ec] = std::from_chars(ts.data(), ts.data() + ts.size(), ms);
    if (ec != std::errc{} || end != ts.data() + ts.size())
      return r.fail(fmt::format("'{}' is not an integer timestamp (ms)", ts));
    sample.timestamp_ms = ms;
    r.skip_blanks();
    if (!r.at_end())
      return r.fail(fmt::format("unexpected '{}' after the timestamp", r.rest()));
  }
  s.out.samples.push_back(std::move(sample));
  return true;
}

}  // namespace

std::string_view metric_type_name(MetricType type) noexcept {
  for (const auto& t : kMetricTypeNames) {
    if (t.type == type)
      return t.name;
  }
  return "untyped";
}

std::optional<std::string_view> Sample::label(std::string_view label_name) const {
  for (const auto& l : labels) {
    if (l.name == label_name)
      return std::string_view(l.value);
  }
  return std::nullopt;
}

std::string Sample::series_key() const {
  if (labels.empty())
    return name;
  std::vector<const Label*> sorted;
  sorted.reserve(labels.size());
  for (const auto& l : labels) sorted.push_back(&l);
  std::sort(sorted.begin(), sorted.end(),
            [](const Label* a, const Label* b) { return a->name < b->name; });
  std::string key = name + "{";
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i > 0)
      key += ',';
    key += sorted[i]->name + "=\"";
    for (const char c : sorted[i]->value) {
      if (c == '\\' || c == '"')
        key += '\\';
      key += c == '\n' ? std::string("\\n") : std::string(1, c);
    }
    key += '"';
  }
  return key + "}";
}

const Family* Exposition::family_of(std::string_view sample_name) const {
  auto find = [&](std::string_view n) -> const Family* {
    for (const auto& f : families) {
      if (f.name == n)
        return &f;
    }
    return nullptr;
  };
  if (const Family* f = find(sample_name))
    return f;
  for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (sample_name.size() > suffix.size() &&
        sample_name.substr(sample_name.size() - suffix.size()) == suffix) {
      const Family* f = find(sample_name.substr(0, sample_name.size() - suffix.size()));
      if (f != nullptr && (f->type == MetricType::Histogram ||
                           (f->type == MetricType::Summary && suffix != "_bucket")))
        return f;
    }
  }
  return nullptr;
}

MetricType Exposition::type_of(std::string_view sample_name) const {
  const Family* f = family_of(sample_name);
  return f == nullptr ? MetricType::Untyped : f->type;
}

std::optional<double> parse_prometheus_float(std::string_view text) noexcept {
  std::string_view body = text;
  bool negative = false;
  if (!body.empty() && (body.front() == '+' || body.front() == '-')) {
    negative = body.front() == '-';
    body.remove_prefix(1);
  }
  if (iequals(body, "inf") || iequals(body, "infinity"))
    return negative ? -HUGE_VAL : HUGE_VAL;
  if (iequals(body, "nan"))
    return std::nan("");
  if (body.empty() ||
      !(std::isdigit(static_cast<unsigned char>(body.front())) != 0 || body.front() == '.'))
    return std::nullopt;
  double v = 0;
  const auto [end, ec] = std::from_chars(body.data(), body.data() + body.size(), v);
  if (ec == std::errc::result_out_of_range)
    return negative ? -HUGE_VAL : HUGE_VAL;  // Go's ParseFloat returns ±Inf on overflow too
  if (ec != std::errc{} || end != body.data() + body.size())
    return std::nullopt;
  return negative ? -v : v;
}

Result<Exposition> parse_exposition(std::string_view text, std::string_view source_name) {
  State s;
  std::int64_t number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos)
      end = text.size();
    ++number;
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);  // tolerated: some proxies rewrite line ends
    LineReader r(line, number, static_cast<std::int64_t>(start), source_name);
    r.skip_blanks();
    if (!r.at_end()) {
      auto ok = r.peek() == '#' ? read_comment(r, s) : read_sample(r, s);
      if (!ok)
        return ok.error();
    }
    start = end + 1;
  }
  return std::move(s.out);
}

}  // namespace llmbench::telemetry
