#pragma once
/// @file
/// What a run was, read from its results JSON (docs/report.md "The configuration header"): the
/// lines of the header a report shows above a run (model, target, dataset and lengths, load,
/// server or engine, GPUs, date, host, llmbench version), the run's settings flattened into
/// comparable knobs, and the knobs in which several runs differ ("max_num_seqs 256 vs 512").
/// The results file crosses a process boundary, so it is read as JSON here; keys it lacks (an
/// older file, a vLLM file) leave their line out or say "not recorded".

#include <nlohmann/json.hpp>

#include <limits>
#include <map>
#include <string>
#include <vector>

namespace llmbench::report {

/// One line of a configuration header.
struct ConfigLine {
  std::string key;    ///< stable id: model, target, dataset, load, engine, gpus, date, host, tool
  std::string label;  ///< "Model", "Target", ...
  std::string text;   ///< "deepseek-r1", "openai at http://127.0.0.1:8000/v1/completions", ...
};

/// A run's configuration as the report shows and compares it.
struct RunConfig {
  std::vector<ConfigLine> lines;  ///< in the order of `ConfigLine::key` above
  /// The run's settings, flat: knob name (vLLM's spelling where it has one: "max_num_seqs",
  /// "random_input_len"; nested groups with a dot: "efficiency.compute") → value as text
  /// ("256", "true", "inf"). Derived sizes, paths of outputs, seeds and timeouts are left out:
  /// they differ between runs without making them different configurations.
  std::map<std::string, std::string> knobs;
  /// GPUs serving: tp × dp of a simulated or built-in engine, else the results' `num_gpus`, else
  /// the NVML devices sampled (`--gpu-telemetry`); NaN when unknown (a remote server).
  double gpus = std::numeric_limits<double>::quiet_NaN();
  std::string gpus_source;  ///< where `gpus` came from ("tp × dp", "num_gpus", "NVML devices")
};

/// The configuration of the results document `results` (a `run` or `simulate` results JSON,
/// docs/metrics.md; any object: missing keys are skipped).
RunConfig run_config(const nlohmann::json& results);

/// A knob whose value differs among several configurations.
struct KnobDifference {
  std::string knob;
  std::vector<std::string> values;  ///< one per configuration, "unset" where it has none
};

/// The knobs of `configs` whose values are not all equal, in knob-name order, with the model,
/// backend, dataset and engine knobs first (they name what a user changed most often). Empty for
/// fewer than two configurations.
std::vector<KnobDifference> knob_differences(const std::vector<const RunConfig*>& configs);

/// "max_num_seqs 256 vs 512; gpu h100 vs h200": each difference with its distinct values in
/// order of first appearance, at most `max_items` differences ("and N more" after them); "" when
/// there is none.
std::string describe_differences(const std::vector<KnobDifference>& differences,
                                 std::size_t max_items = 4);

/// What configuration `i` of the differences has: "max_num_seqs 256, gpu h100" (its own values
/// of the differing knobs, at most `max_items`); "" when there is no difference.
std::string describe_config(const std::vector<KnobDifference>& differences, std::size_t i,
                            std::size_t max_items = 3);

/// A value as the header and the knobs write it: strings as they are, whole numbers without a
/// decimal point, other numbers in shortest round-trip form, true/false, null as "unset", arrays
/// joined by ",".
std::string value_text(const nlohmann::json& value);

}  // namespace llmbench::report
