#include "llmbench/report/inputs.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/metrics/record_file.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <map>
#include <system_error>

namespace llmbench::report {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

json parse_json_file(const std::string& path) {
  const std::string text = read_file(path).value();
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw Exception(
        Error{fmt::format("is not JSON: {}", e.what()), path, static_cast<std::int64_t>(e.byte)});
  }
}

/// The string at `key`, or "" when it is missing or not a string.
std::string string_at(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Fills `run.records` from the file its results name (relative to `dir`), or notes why not.
void load_records(RunData& run, const fs::path& dir, const fs::path& fallback) {
  fs::path file = string_at(run.results, "records_file");
  file = file.empty() ? fallback : dir / file;
  std::error_code ec;
  if (file.empty() || !fs::is_regular_file(file, ec)) {
    run.records_note = file.empty() ? "the results name no records file"
                                    : fmt::format("records file {} not found", file.string());
    return;
  }
  auto loaded = metrics::read_record_file(file.string());
  run.records = std::move(loaded.records);
  run.records_loaded = true;
}

RunData load_run(const std::string& path, json document) {
  if (!document.is_object() || !document.contains("completed")) {
    throw Exception(
        Error{"is neither a results JSON of `run` / `simulate` (no \"completed\") "
              "nor a sweep JSON (no \"axes\" and \"points\")",
              path, -1});
  }
  const fs::path p(path);
  std::string name = run_name(document, p.stem().string());
  RunData run{.name = std::move(name),
              .source = path,
              .results = std::move(document),
              .records = {},
              .records_loaded = false,
              .records_note = {}};
  load_records(run, p.parent_path(), p.parent_path() / (p.stem().string() + ".records.jsonl"));
  return run;
}

SweepData load_sweep(const std::string& path, json document) {
  const fs::path p(path);
  SweepData sweep{.name = p.filename().string(),
                  .source = path,
                  .sweep = std::move(document),
                  .points = {},
                  .point_index = {}};
  // "s.sweep.json" → "s"
  if (const auto dot = sweep.name.find(".sweep.json"); dot != std::string::npos)
    sweep.name.resize(dot);
  for (const auto& point : sweep.sweep.at("points")) {
    const std::string file = point.is_object() ? string_at(point, "results_file") : "";
    std::error_code ec;
    if (file.empty() || !fs::is_regular_file(p.parent_path() / file, ec))
      continue;  // a point that failed to run has no results: the sweep rows still show it
    RunData run = load_run((p.parent_path() / file).string(),
                           parse_json_file((p.parent_path() / file).string()));
    run.name = point_name(point);
    sweep.points.push_back(std::move(run));
    sweep.point_index.push_back(point.value("index", std::size_t{0}));
  }
  return sweep;
}

}  // namespace

std::string run_name(const json& results, const std::string& fallback) {
  if (const auto it = results.find("label");
      it != results.end() && it->is_string() && !it->get<std::string>().empty())
    return it->get<std::string>();
  return fallback;
}

std::string point_name(const json& point) {
  std::string name = fmt::format("p{:02}", point.value("index", 0));
  if (const auto it = point.find("axes"); it != point.end() && it->is_object()) {
    for (const auto& [axis, value] : it->items()) {
      // Numbers in shortest form (the sweep JSON may hold 1 as 1.0).
      name += fmt::format(" {}={}", axis,
                          value.is_string()   ? value.get<std::string>()
                          : value.is_number() ? fmt::format("{}", value.get<double>())
                                              : value.dump());
    }
  }
  return name;
}

std::vector<std::string> shortest_distinct_paths(const std::vector<std::string>& paths) {
  // Each path as its components, the file's extension dropped: "x/a/run.json" → x, a, run.
  std::vector<std::vector<std::string>> parts;
  for (const auto& path : paths) {
    fs::path p(path);
    std::vector<std::string> c{p.stem().string()};
    for (p = p.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path())
      c.push_back(p.filename().string());
    parts.push_back(std::move(c));  // last component first
  }
  const auto suffix = [&](std::size_t i, std::size_t k) {
    std::string out;
    for (std::size_t j = std::min(k, parts[i].size()); j-- > 0;)
      out += parts[i][j] + (j > 0 ? "/" : "");
    return out;
  };
  std::vector<std::string> out(paths.size());
  std::map<std::string, int> copies;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    std::size_t k = 1;
    for (; k < parts[i].size(); ++k) {
      bool unique = true;
      for (std::size_t j = 0; j < paths.size() && unique; ++j)
        unique = j == i || paths[j] == paths[i] || suffix(j, k) != suffix(i, k);
      if (unique)
        break;
    }
    out[i] = suffix(i, k);
    if (const int n = ++copies[paths[i]]; n > 1)
      out[i] += fmt::format(" #{}", n);
  }
  return out;
}

void distinct_names(std::vector<RunData*>& runs) {
  std::map<std::string, std::vector<RunData*>> by_name;
  for (auto* run : runs) by_name[run->name].push_back(run);
  for (auto& [name, group] : by_name) {
    if (group.size() < 2)
      continue;
    std::vector<std::string> sources;
    for (const auto* run : group) sources.push_back(run->source);
    const auto distinct = shortest_distinct_paths(sources);
    for (std::size_t i = 0; i < group.size(); ++i) {
      const bool labelled = name != fs::path(group[i]->source).stem().string();
      group[i]->name = labelled ? fmt::format("{} ({})", name, distinct[i]) : distinct[i];
    }
  }
}

bool is_sweep_document(const json& document) {
  return document.is_object() && document.contains("axes") && document["axes"].is_array() &&
         document.contains("points") && document["points"].is_array();
}

void load_input(const std::string& path, ReportInputs& inputs) {
  json document = parse_json_file(path);
  if (is_sweep_document(document)) {
    inputs.sweeps.push_back(load_sweep(path, std::move(document)));
  } else {
    inputs.runs.push_back(load_run(path, std::move(document)));
  }
}

ReportInputs load_inputs(const std::vector<std::string>& paths) {
  if (paths.empty())
    throw Exception(Error{"no results or sweep file given", "report", -1});
  ReportInputs inputs;
  for (const auto& path : paths) load_input(path, inputs);
  std::vector<RunData*> runs;
  for (auto& run : inputs.runs) runs.push_back(&run);
  distinct_names(runs);
  // Sweeps are named by their files: two sweep.json of two folders keep apart the same way.
  std::vector<std::string> sources;
  for (const auto& s : inputs.sweeps) sources.push_back(s.source);
  std::map<std::string, int> uses;
  for (const auto& s : inputs.sweeps) ++uses[s.name];
  const auto distinct = shortest_distinct_paths(sources);
  for (std::size_t i = 0; i < inputs.sweeps.size(); ++i) {
    if (uses[inputs.sweeps[i].name] > 1) {
      std::string name = distinct[i];
      if (const auto dot = name.find(".sweep"); dot != std::string::npos)
        name.resize(dot);
      inputs.sweeps[i].name = name;
    }
  }
  return inputs;
}

}  // namespace llmbench::report
