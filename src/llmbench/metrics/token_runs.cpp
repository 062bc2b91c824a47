#include "llmbench/metrics/token_runs.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

namespace llmbench::metrics {

void check_token_runs(const TokenRuns& runs, std::size_t num_records) {
  for (std::size_t i = 0; i < runs.runs.size(); ++i) {
    const TokenRuns::Run& r = runs.runs[i];
    const bool grid_ok = r.grid < runs.grids.size();
    const auto grid_size = grid_ok ? static_cast<std::int64_t>(runs.grids[r.grid].size()) : 0;
    if (r.request >= num_records || !grid_ok || r.first < 0 || r.count < 1 ||
        r.first > grid_size - r.count) {
      throw Exception(Error{
          fmt::format("run {} (request {}, grid {}, first {}, count {}) is outside the {} records "
                      "or its grid ({} grids; this one has {} instants)",
                      i, r.request, r.grid, r.first, r.count, num_records, runs.grids.size(),
                      grid_size),
          "token runs"});
    }
  }
}

void expand_token_runs(const TokenRuns& runs, std::vector<RequestRecord>& records) {
  check_token_runs(runs, records.size());
  std::vector<std::size_t> tokens(records.size(), 0);
  for (const auto& r : runs.runs) tokens[r.request] += static_cast<std::size_t>(r.count);
  for (std::size_t i = 0; i < records.size(); ++i)
    records[i].chunks.reserve(records[i].chunks.size() + tokens[i]);
  // One sequential write per run (a scattered store per token missed the cache every few tokens).
  for (const auto& r : runs.runs) {
    const TimeNs* times = runs.grids[r.grid].data() + r.first;
    auto& chunks = records[r.request].chunks;
    const std::size_t base = chunks.size();
    chunks.resize(base + static_cast<std::size_t>(r.count));
    Chunk* out = chunks.data() + base;
    for (std::int64_t k = 0; k < r.count; ++k)
      out[k] = Chunk{.time_ns = times[k], .tokens = 1, .bytes = 0, .channel = Channel::Answer};
  }
}

}  // namespace llmbench::metrics
