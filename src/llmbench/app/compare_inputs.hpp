#pragma once
/// @file
/// The runs `llmbench compare` and `llmbench history` read (docs/compare.md "Inputs"): an
/// llmbench results JSON with its per-request records (`records_file` beside it), a records
/// JSONL alone, or a `vllm bench serve --save-result --save-detailed` result file, whose
/// per-request arrays are mapped to the same samples. The format is detected from the keys.

#include "llmbench/analysis/compare.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace llmbench::app {

/// What a compare input was read from.
enum class InputFormat : std::uint8_t {
  LlmbenchRecords,   ///< llmbench records (a results JSON's `records_file`, or a .jsonl)
  LlmbenchDetailed,  ///< llmbench results with `--save-detailed` arrays, records not found
  Vllm,              ///< `vllm bench serve` result with `--save-detailed` arrays
};

/// "llmbench records", "llmbench detailed arrays", "vllm bench serve".
std::string_view to_string(InputFormat format) noexcept;

/// One run read for comparison.
struct CompareInput {
  std::string path;  ///< as given
  InputFormat format = InputFormat::LlmbenchRecords;
  analysis::RunSamples samples{};
  nlohmann::json results = nullptr;  ///< the results document (null for a bare .jsonl)
};

/// Samples from `--save-detailed` arrays of `document` (read from `path`, named in errors):
/// `ttfts` (s), `itls` (per request a list, s), `output_lens`, `errors` ("" when it completed),
/// and `duration` (s) are required; `latencies` (vLLM, s), `e2els` and `tpots` (llmbench, s) are
/// used when present. A request failed when its error is a non-empty string. TPOT is `tpots[i]`,
/// else vLLM's (latency − ttft)/(output_len − 1) for output_len ≥ 2 (latency: `latencies[i]`,
/// else ttft + Σ itls[i]); E2EL is `e2els[i]`, else the latency. Throws `Exception` naming the
/// path and the missing key, or the key and index of a bad value.
analysis::RunSamples samples_from_arrays(const nlohmann::json& document, const std::string& path);

/// Reads `path`: a results JSON with `records_file` whose records file exists beside it (the
/// records), else with the detailed arrays; a vLLM result (`ttfts` without llmbench's
/// `records_file`); or a `.jsonl` of records. Throws `Exception` naming the path and what is
/// missing ("neither llmbench records nor --save-detailed arrays: key 'ttfts' missing").
CompareInput read_compare_input(const std::string& path);

}  // namespace llmbench::app
