#include "llmbench/metrics/summary.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/detail/summary_builder.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

namespace llmbench::metrics {

using detail::latency_of;
using detail::OutputSpan;
using detail::SummaryBuilder;

namespace {

// Whether every chunk after the first counts as one token (the ITLs are then the chunk gaps).
bool every_chunk_after_the_first_one_token(const std::vector<Chunk>& chunks) noexcept {
  for (std::size_t i = 1; i < chunks.size(); ++i) {
    if (tokens_or_one(chunks[i]) != 1) {
      return false;
    }
  }
  return true;
}

}  // namespace

Slo parse_slo(const std::vector<std::string>& items) {
  Slo slo;
  for (const auto& item : items) {
    // Accept "ttft:500 tpot:50" in one element too (a quoted flag value).
    std::istringstream words(item);
    std::string word;
    while (words >> word) {
      const auto colon = word.find(':');
      if (colon == std::string::npos) {
        throw Exception(
            Error{fmt::format("'{}' is not KEY:MS (e.g. ttft:500)", word), "--goodput"});
      }
      const std::string_view key = std::string_view(word).substr(0, colon);
      const std::string_view text = std::string_view(word).substr(colon + 1);
      double value = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(value) ||
          value <= 0) {
        throw Exception(
            Error{fmt::format("'{}': the value must be a positive number of milliseconds", word),
                  "--goodput"});
      }
      std::optional<double>* target = nullptr;
      if (key == "ttft") {
        target = &slo.ttft_ms;
      } else if (key == "tpot") {
        target = &slo.tpot_ms;
      } else if (key == "e2el") {
        target = &slo.e2el_ms;
      } else {
        throw Exception(
            Error{fmt::format("'{}': unknown metric '{}' (expected ttft, tpot or e2el)", word, key),
                  "--goodput"});
      }
      if (target->has_value()) {
        throw Exception(Error{fmt::format("'{}': {} is given twice", word, key), "--goodput"});
      }
      *target = value;
    }
  }
  return slo;
}

RequestLatency request_latency(const RequestRecord& record) noexcept {
  if (record.chunks.empty()) {
    return latency_of(record, OutputSpan{}, 0);
  }
  OutputSpan span{.any = true,
                  .first = record.chunks.front().time_ns,
                  .last = record.chunks.back().time_ns,
                  .chunks = static_cast<std::int64_t>(record.chunks.size())};
  for (const auto& chunk : record.chunks) {
    if (chunk.channel != Channel::Reasoning) {  // a tool call is the answer too
      span.answered = true;
      span.first_answer = chunk.time_ns;
      break;
    }
  }
  return latency_of(record, span, output_token_count(record));
}

void append_itl_ms(const RequestRecord& record, std::vector<double>& out) {
  // A chunk that carries zero tokens emits no sample; its gap is carried into the next chunk
  // with tokens, so the samples of a request always sum to last − first chunk time.
  for (std::size_t i = 1; i < record.chunks.size(); ++i) {
    const std::int64_t tokens = tokens_or_one(record.chunks[i]);
    if (tokens == 0) {
      continue;
    }
    std::size_t prev = i - 1;
    while (prev > 0 && record.chunks[prev].tokens == 0) {
      --prev;
    }
    const double gap = ns_to_ms(record.chunks[i].time_ns - record.chunks[prev].time_ns);
    if (tokens == 1) {
      out.push_back(gap);  // the common case: one token per streamed chunk
      continue;
    }
    const double per_token = gap / static_cast<double>(tokens);
    out.insert(out.end(), static_cast<std::size_t>(tokens), per_token);
  }
}

void append_inter_chunk_ms(const RequestRecord& record, std::vector<double>& out) {
  const std::size_t n = record.chunks.size();
  if (n < 2) {
    return;
  }
  // Sized once and filled by index: a push_back per token was most of the summary's cost on
  // simulated runs of millions of tokens.
  const std::size_t base = out.size();
  out.resize(base + n - 1);
  double* gaps = out.data() + base;
  const Chunk* chunks = record.chunks.data();
  for (std::size_t i = 1; i < n; ++i) {
    gaps[i - 1] = ns_to_ms(chunks[i].time_ns - chunks[i - 1].time_ns);
  }
}

Summary summarize(const std::vector<RequestRecord>& records, const SummaryOptions& options) {
  SummaryBuilder builder(records, options.slo);
  std::size_t num_chunks = 0;
  for (const auto& r : records) {
    num_chunks += !r.warmup && r.ok() ? r.chunks.size() : 0;
  }
  std::vector<double> itl;
  std::vector<double> inter_chunk;
  itl.reserve(num_chunks);
  bool inter_chunk_is_itl = true;

  for (const auto& record : records) {
    if (!builder.admit(record)) {
      continue;
    }
    // Chunk tokens were assigned where the record was made (`assign_chunk_tokens`); a chunk
    // still unknown counts as one token.
    const bool one_token_each = every_chunk_after_the_first_one_token(record.chunks);
    builder.add(record, output_token_count(record), request_latency(record));
    // While every chunk after the first carries one token, the ITL samples are exactly the
    // inter-chunk gaps (same values, same order), so one vector serves both until a record
    // breaks that; the inter-chunk list is then split off from the ITLs gathered so far.
    if (inter_chunk_is_itl && !one_token_each) {
      inter_chunk_is_itl = false;
      inter_chunk.assign(itl.begin(), itl.end());
    }
    if (one_token_each) {
      append_inter_chunk_ms(record, itl);  // one token per chunk: the ITLs are the gaps
    } else {
      append_itl_ms(record, itl);
    }
    if (!inter_chunk_is_itl)
      append_inter_chunk_ms(record, inter_chunk);
    for (const auto& chunk : record.chunks) {
      builder.add_tokens(chunk.time_ns, tokens_or_one(chunk));
    }
  }
  const auto& qs = options.percentiles;
  Stats itl_stats = describe(std::move(itl), qs, options.extra_percentiles);
  std::optional<Stats> inter_chunk_stats;
  if (!inter_chunk_is_itl) {
    inter_chunk_stats = describe(std::move(inter_chunk), qs, options.extra_percentiles);
  }
  return builder.finish(std::move(itl_stats), std::move(inter_chunk_stats), options);
}

}  // namespace llmbench::metrics
