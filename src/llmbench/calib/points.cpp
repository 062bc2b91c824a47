#include "llmbench/calib/points.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/record_file.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>

namespace llmbench::calib {

namespace {

using nlohmann::json;

/// Splits one CSV line; a field in double quotes may hold commas ("" is a quote).
std::vector<std::string> split_csv(std::string_view line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else if (c != '\r') {
      out.back() += c;
    }
  }
  return out;
}

std::string label_of(const Workload& w) {
  return fmt::format("{}/{} c{}", w.input_max, w.output_max, w.max_concurrency);
}

/// The CSV row being read, with errors that name file, line and column.
struct Row {
  const std::vector<std::string>& header;
  const std::vector<std::string>& cells;
  const std::string& origin;
  std::int64_t line;

  [[nodiscard]] const std::string* cell(std::string_view column) const {
    for (std::size_t i = 0; i < header.size(); ++i) {
      if (header[i] == column)
        return i < cells.size() ? &cells[i] : nullptr;
    }
    return nullptr;
  }
  [[noreturn]] void fail(std::string_view column, const std::string& what) const {
    throw Exception(
        Error{fmt::format("line {}, column '{}': {}", line, column, what), origin, line});
  }
  [[nodiscard]] double number(std::string_view column, bool required) const {
    const std::string* c = cell(column);
    if (c == nullptr || c->empty()) {
      if (required)
        fail(column, "missing");
      return kMissing;
    }
    double v = 0;
    const auto [end, ec] = std::from_chars(c->data(), c->data() + c->size(), v);
    if (ec != std::errc{} || end != c->data() + c->size() || !std::isfinite(v) || v < 0)
      fail(column, fmt::format("'{}' is not a number ≥ 0", *c));
    return v;
  }
  [[nodiscard]] std::int64_t integer(std::string_view column, bool required,
                                     std::int64_t fallback) const {
    const double v = number(column, required);
    if (std::isnan(v))
      return fallback;
    if (v != std::floor(v) || v < 1)
      fail(column, "must be a whole number ≥ 1");
    return static_cast<std::int64_t>(v);
  }
};

Point point_from_row(const Row& row) {
  Point p;
  Workload& w = p.workload;
  const std::int64_t isl = row.integer("isl", false, 0);
  const std::int64_t osl = row.integer("osl", false, 0);
  w.input_max = row.integer("input_max", isl == 0, isl);
  w.input_min = row.integer("input_min", false, w.input_max);
  w.output_max = row.integer("output_max", osl == 0, osl);
  w.output_min = row.integer("output_min", false, w.output_max);
  if (w.input_min > w.input_max)
    row.fail("input_min", "must be ≤ input_max");
  if (w.output_min > w.output_max)
    row.fail("output_min", "must be ≤ output_max");
  w.max_concurrency = row.integer("concurrency", true, 0);
  w.num_prompts = row.integer("num_prompts", false, 10 * w.max_concurrency);
  const double rate = row.number("request_rate", false);
  if (!std::isnan(rate) && rate > 0)
    w.request_rate = rate;
  Metrics& m = p.measured;
  m.ttft_mean_ms = row.number("ttft_mean_ms", false);
  m.ttft_median_ms = row.number("ttft_median_ms", false);
  m.ttft_p99_ms = row.number("ttft_p99_ms", false);
  m.tpot_mean_ms = row.number("tpot_mean_ms", false);
  m.tpot_median_ms = row.number("tpot_median_ms", false);
  m.tpot_p99_ms = row.number("tpot_p99_ms", false);
  m.e2e_mean_s = row.number("e2e_mean_s", false);
  m.output_tok_s_per_gpu = row.number("output_tok_s_per_gpu", false);
  m.total_tok_s_per_gpu = row.number("total_tok_s_per_gpu", false);
  p.num_gpus = static_cast<int>(row.integer("num_gpus", false, 0));
  for (std::size_t i = 0; i < row.header.size() && i < row.cells.size(); ++i)
    p.tags[row.header[i]] = row.cells[i];
  p.tags["isl"] = std::to_string(w.input_max);
  p.tags["osl"] = std::to_string(w.output_max);
  p.tags["concurrency"] = std::to_string(w.max_concurrency);
  const std::string* url = row.cell("source_url");
  p.source = url != nullptr && !url->empty() ? *url : fmt::format("{}:{}", row.origin, row.line);
  p.label = label_of(w);
  // One seed per point, so its drawn lengths do not depend on which other points are read.
  w.seed =
      static_cast<std::uint64_t>(w.input_max * 1000003 + w.output_max * 7919 + w.max_concurrency);
  return p;
}

double get_number(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    return kMissing;
  return it->get<double>();
}

std::vector<std::int64_t> get_lengths(const json& j, const char* key) {
  std::vector<std::int64_t> out;
  const auto it = j.find(key);
  if (it == j.end() || !it->is_array())
    return out;
  for (const auto& v : *it) {
    if (v.is_number_integer() && v.get<std::int64_t>() >= 1)
      out.push_back(v.get<std::int64_t>());
  }
  return out;
}

/// Uniform [len·ratio, len] (SGLang's `random_range_ratio`, InferenceX's benchmark) from `obj`'s
/// `random_input_len` / `random_output_len` / `random_range_ratio`; false when absent.
bool workload_from_random(const json& obj, Workload& w) {
  const double in = get_number(obj, "random_input_len");
  const double out = get_number(obj, "random_output_len");
  if (!(in >= 1) || !(out >= 1))
    return false;
  double ratio = get_number(obj, "random_range_ratio");
  if (!(ratio >= 0 && ratio <= 1))
    ratio = 1;
  w.input_max = static_cast<std::int64_t>(in);
  w.output_max = static_cast<std::int64_t>(out);
  w.input_min = std::max<std::int64_t>(1, static_cast<std::int64_t>(in * ratio));
  w.output_min = std::max<std::int64_t>(1, static_cast<std::int64_t>(out * ratio));
  return true;
}

Point point_from_summary(const json& j, const std::string& origin, int num_gpus) {
  Point p;
  Workload& w = p.workload;
  const double completed = get_number(j, "completed");
  if (!(completed >= 1))
    throw Exception(Error{"no 'completed' requests: not a benchmark summary", origin, -1});
  w.num_prompts = static_cast<std::int64_t>(completed);
  const double conc = get_number(j, "max_concurrency");
  w.max_concurrency = conc >= 1 ? static_cast<std::int64_t>(conc) : 0;
  const auto rate = j.find("request_rate");
  if (rate != j.end() && rate->is_number() && rate->get<double>() > 0)
    w.request_rate = rate->get<double>();
  w.input_lens = get_lengths(j, "input_lens");
  w.output_lens = get_lengths(j, "output_lens");
  const auto effective = j.find("config_effective");
  if (!workload_from_random(j, w) &&
      !(effective != j.end() && effective->is_object() && workload_from_random(*effective, w))) {
    const double in = get_number(j, "total_input_tokens") / completed;
    const double out = get_number(j, "total_output_tokens") / completed;
    if (!(in >= 1) || !(out >= 1))
      throw Exception(
          Error{"no input/output lengths (total_input_tokens, total_output_tokens)", origin, -1});
    w.input_min = w.input_max = static_cast<std::int64_t>(std::llround(in));
    w.output_min = w.output_max = static_cast<std::int64_t>(std::llround(out));
  }
  Metrics& m = p.measured;
  m.ttft_mean_ms = get_number(j, "mean_ttft_ms");
  m.ttft_median_ms = get_number(j, "median_ttft_ms");
  m.ttft_p99_ms = get_number(j, "p99_ttft_ms");
  m.tpot_mean_ms = get_number(j, "mean_tpot_ms");
  m.tpot_median_ms = get_number(j, "median_tpot_ms");
  m.tpot_p99_ms = get_number(j, "p99_tpot_ms");
  m.itl_median_ms = get_number(j, "median_itl_ms");
  const double e2e_ms = get_number(j, "mean_e2el_ms");
  m.e2e_mean_s = std::isnan(e2e_ms) ? kMissing : e2e_ms / 1e3;
  p.num_gpus = num_gpus;
  if (num_gpus > 0) {
    m.output_tok_s_per_gpu = get_number(j, "output_throughput") / num_gpus;
    m.total_tok_s_per_gpu = get_number(j, "total_token_throughput") / num_gpus;
  }
  p.tags["isl"] = std::to_string(w.input_max);
  p.tags["osl"] = std::to_string(w.output_max);
  p.tags["concurrency"] = std::to_string(w.max_concurrency);
  for (const char* key : {"backend", "base_url", "date"}) {
    if (const auto v = j.find(key);
        v != j.end() && v->is_string() && !v->get<std::string>().empty())
      p.tags[key] = v->get<std::string>();
  }
  p.source = origin;
  p.label = label_of(w);
  w.seed =
      static_cast<std::uint64_t>(w.input_max * 1000003 + w.output_max * 7919 + w.max_concurrency);
  return p;
}

/// The per-request lengths of an llmbench records file (warm-ups and failures left out).
void lengths_from_records(const std::filesystem::path& path, Workload& w) {
  const auto records = metrics::read_record_file(path.string());
  w.input_lens.clear();
  w.output_lens.clear();
  for (const auto& r : records.records) {
    if (r.warmup || r.error_kind != metrics::ErrorKind::None)
      continue;
    const std::int64_t in = metrics::input_token_count(r);
    const std::int64_t out = metrics::output_token_count(r);
    if (in >= 1 && out >= 1) {
      w.input_lens.push_back(in);
      w.output_lens.push_back(out);
    }
  }
  if (!w.input_lens.empty())
    w.num_prompts = static_cast<std::int64_t>(w.input_lens.size());
}

/// Calls `on_line(line, line_no)` for each '\n'-separated line of `text`, numbered from 1.
template <typename OnLine>
void for_each_line(std::string_view text, OnLine&& on_line) {
  std::size_t pos = 0;
  std::int64_t line_no = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos)
      end = text.size();
    on_line(text.substr(pos, end - pos), ++line_no);
    pos = end + 1;
  }
}

}  // namespace

std::vector<Point> read_points_csv(std::string_view text, const std::string& origin) {
  std::vector<Point> out;
  std::vector<std::string> header;
  for_each_line(text, [&](std::string_view line, std::int64_t line_no) {
    if (line.empty() || line.front() == '#')
      return;
    std::vector<std::string> cells = split_csv(line);
    if (header.empty()) {
      header = std::move(cells);
      return;
    }
    out.push_back(point_from_row(Row{header, cells, origin, line_no}));
  });
  if (header.empty())
    throw Exception(Error{"empty CSV: no header row", origin, 0});
  return out;
}

std::vector<Point> read_summary_json(std::string_view text, const std::string& origin,
                                     int num_gpus) {
  std::vector<Point> out;
  try {
    const json whole = json::parse(text.begin(), text.end());
    if (!whole.is_object())
      throw Exception(Error{"expected a JSON object", origin, 0});
    out.push_back(point_from_summary(whole, origin, num_gpus));
    return out;
  } catch (const json::parse_error&) {
    // JSONL: one summary per line.
  }
  for_each_line(text, [&](std::string_view line, std::int64_t line_no) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
      return;
    const std::string where = fmt::format("{}:{}", origin, line_no);
    json j;
    try {
      j = json::parse(line.begin(), line.end());
    } catch (const json::parse_error& e) {
      throw Exception(Error{fmt::format("invalid JSON: {}", e.what()), where, line_no});
    }
    if (!j.is_object())
      throw Exception(Error{"expected a JSON object per line", where, line_no});
    out.push_back(point_from_summary(j, where, num_gpus));
  });
  return out;
}

std::vector<Point> read_points_file(const std::string& path, int num_gpus) {
  const std::string text = read_file(path).value();
  const std::size_t first = text.find('\n');
  const std::string_view head = std::string_view(text).substr(0, first);
  if (head.find(',') != std::string_view::npos && head.find('{') == std::string_view::npos)
    return read_points_csv(text, path);
  std::vector<Point> points = read_summary_json(text, path, num_gpus);
  const std::string stem = std::filesystem::path(path).stem().string();
  for (Point& p : points) p.tags["file"] = stem;
  if (points.size() == 1) {
    const json j = json::parse(text, nullptr, false);
    const auto file = j.is_object() ? j.find("records_file") : j.end();
    if (j.is_object() && file != j.end() && file->is_string()) {
      const auto records = std::filesystem::path(path).parent_path() / file->get<std::string>();
      if (std::filesystem::is_regular_file(records))
        lengths_from_records(records, points.front().workload);
    }
  }
  return points;
}

bool Filter::matches(const Point& p) const {
  const auto it = p.tags.find(key);
  if (it == p.tags.end())
    return false;
  const std::string& tag = it->second;
  return std::any_of(values.begin(), values.end(), [&](const std::string& v) {
    if (!v.empty() && v.back() == '*')  // a prefix
      return tag.compare(0, v.size() - 1, v, 0, v.size() - 1) == 0;
    return tag == v;
  });
}

Filter parse_filter(std::string_view text, const std::string& flag) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0 || eq + 1 == text.size())
    throw Exception(Error{fmt::format("'{}' is not KEY=VALUE[,VALUE…]", text), flag, -1});
  Filter f;
  f.key = std::string(text.substr(0, eq));
  std::string_view rest = text.substr(eq + 1);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    f.values.emplace_back(rest.substr(0, comma));
    if (comma == std::string_view::npos)
      break;
    rest = rest.substr(comma + 1);
  }
  return f;
}

std::vector<Point> select_points(const std::vector<Point>& points,
                                 const std::vector<Filter>& select) {
  std::vector<Point> out;
  for (const auto& p : points) {
    if (std::all_of(select.begin(), select.end(), [&](const Filter& f) { return f.matches(p); }))
      out.push_back(p);
  }
  return out;
}

void split_holdout(const std::vector<Point>& points, const std::vector<Filter>& holdout,
                   std::vector<Point>& fit, std::vector<Point>& held_out) {
  fit.clear();
  held_out.clear();
  for (const auto& p : points) {
    if (std::any_of(holdout.begin(), holdout.end(), [&](const Filter& f) { return f.matches(p); }))
      held_out.push_back(p);
    else
      fit.push_back(p);
  }
}

}  // namespace llmbench::calib
