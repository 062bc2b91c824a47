#include "llmbench/core/error.hpp"
#include "llmbench/metrics/detail/summary_builder.hpp"
#include "llmbench/metrics/summary.hpp"

#include <fmt/core.h>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

/// @file
/// `summarize(records, TokenRuns, options)`: the summary of the simulator's token runs without
/// their per-token chunks (docs/metrics.md, "Statistics"), equal bit for bit to the summary of
/// the expanded records.

namespace llmbench::metrics {

using detail::latency_of;
using detail::OutputSpan;
using detail::SummaryBuilder;

Summary summarize(const std::vector<RequestRecord>& records, const TokenRuns& tokens,
                  const SummaryOptions& options) {
  check_token_runs(tokens, records.size());
  const auto& grids = tokens.grids;
  // Each request's runs, in their order: a stable counting sort by request.
  std::vector<std::size_t> begin(records.size() + 1, 0);
  for (const auto& run : tokens.runs) ++begin[run.request + 1];
  for (std::size_t i = 0; i < records.size(); ++i) begin[i + 1] += begin[i];
  std::vector<const TokenRuns::Run*> by_request(tokens.runs.size());
  {
    std::vector<std::size_t> cursor(begin.begin(), begin.end() - 1);
    for (const auto& run : tokens.runs) by_request[cursor[run.request]++] = &run;
  }
  // Per grid instant k, as differences along the grid: how many counted runs have a token at k
  // (`emitted`), and how many have one at k − 1 and at k, i.e. an ITL sample of grid[k] −
  // grid[k − 1] (`spanned`).
  std::vector<std::vector<std::int64_t>> emitted(grids.size());
  std::vector<std::vector<std::int64_t>> spanned(grids.size());
  for (std::size_t g = 0; g < grids.size(); ++g) {
    emitted[g].assign(grids[g].size() + 1, 0);
    spanned[g].assign(grids[g].size() + 1, 0);
  }
  std::vector<double> run_gaps;      // ITLs from one run of a request to its next, in order
  std::vector<std::size_t> counted;  // completed non-warm-up requests, in order

  SummaryBuilder builder(records, options.slo);
  for (std::size_t i = 0; i < records.size(); ++i) {
    const RequestRecord& record = records[i];
    if (!record.chunks.empty()) {
      throw Exception(Error{fmt::format("record {} (id {}) has {} chunks of its own besides its "
                                        "token runs",
                                        i, record.id, record.chunks.size()),
                            "token runs"});
    }
    if (!builder.admit(record)) {
      continue;
    }
    counted.push_back(i);
    OutputSpan span;
    std::int64_t run_tokens = 0;
    TimeNs previous = -1;
    for (std::size_t k = begin[i]; k < begin[i + 1]; ++k) {
      const TokenRuns::Run& run = *by_request[k];
      const std::vector<TimeNs>& grid = grids[run.grid];
      const auto first = static_cast<std::size_t>(run.first);
      const auto end = first + static_cast<std::size_t>(run.count);
      ++emitted[run.grid][first];
      --emitted[run.grid][end];
      ++spanned[run.grid][first + 1];
      --spanned[run.grid][end];
      if (span.any) {
        run_gaps.push_back(ns_to_ms(grid[first] - previous));
      } else {
        span = OutputSpan{
            .any = true, .first = grid[first], .answered = true, .first_answer = grid[first]};
      }
      previous = grid[end - 1];
      run_tokens += run.count;
    }
    span.last = previous;
    span.chunks = run_tokens;  // one chunk per token
    // N as `output_token_count` gives it for the expanded record (one token per chunk).
    const std::int64_t reported = counted_output_tokens(record);
    const std::int64_t n = reported >= 0 ? reported : run_tokens;
    builder.add(record, n, latency_of(record, span, n));
  }

  // Token windows, and the distinct ITL values with their multiplicities.
  std::vector<std::vector<double>> gaps(grids.size());  // gaps[g][k] = grid[k] − grid[k − 1], ms
  std::vector<std::pair<double, std::size_t>> distinct;
  for (std::size_t g = 0; g < grids.size(); ++g) {
    const std::vector<TimeNs>& grid = grids[g];
    gaps[g].assign(grid.size(), 0.0);
    std::int64_t at = 0;
    std::int64_t across = 0;
    for (std::size_t k = 0; k < grid.size(); ++k) {
      at += emitted[g][k];
      across += spanned[g][k];
      if (at > 0) {
        builder.add_tokens(grid[k], at);
      }
      if (k > 0) {
        gaps[g][k] = ns_to_ms(grid[k] - grid[k - 1]);
        if (across > 0) {
          distinct.emplace_back(gaps[g][k], static_cast<std::size_t>(across));
        }
      }
    }
  }
  for (const double gap : run_gaps) distinct.emplace_back(gap, 1);
  // The ITL sample in the order `summarize` lists it for the expanded records: request by
  // request, each run's gaps preceded by the gap from the request's previous run.
  const auto visit = [&](const auto& emit) {
    std::size_t next_gap = 0;
    for (const std::size_t i : counted) {
      for (std::size_t k = begin[i]; k < begin[i + 1]; ++k) {
        const TokenRuns::Run& run = *by_request[k];
        if (k > begin[i]) {
          emit(&run_gaps[next_gap++], 1);
        }
        emit(gaps[run.grid].data() + run.first + 1, static_cast<std::size_t>(run.count - 1));
      }
    }
  };
  Stats itl =
      describe_weighted(visit, std::move(distinct), options.percentiles, options.extra_percentiles);
  return builder.finish(std::move(itl), std::nullopt, options);
}

}  // namespace llmbench::metrics
