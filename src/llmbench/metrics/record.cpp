#include "llmbench/metrics/record.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/name_table.hpp"

#include <algorithm>
#include <array>
#include <utility>
#include <vector>

namespace llmbench::metrics {

namespace {

// Names written in JSON for each ErrorKind (docs/metrics.md, "Per-request records").
constexpr auto kErrorKindNames = make_name_table<ErrorKind>({
    {ErrorKind::None, "none"},
    {ErrorKind::Connect, "connect"},
    {ErrorKind::Timeout, "timeout"},
    {ErrorKind::Http3xx, "http_3xx"},
    {ErrorKind::Http4xx, "http_4xx"},
    {ErrorKind::Http5xx, "http_5xx"},
    {ErrorKind::HttpOther, "http_other"},
    {ErrorKind::StreamError, "stream_error"},
    {ErrorKind::EmptyOutput, "empty_output"},
    {ErrorKind::Parse, "parse"},
    {ErrorKind::Cancelled, "cancelled"},
    {ErrorKind::Other, "other"},
});

// The stable names of each Channel ("chunks" channel codes are their first letters) and
// LocalCount (docs/metrics.md, "Per-request records").
constexpr auto kChannelNames = make_name_table<Channel>({
    {Channel::Answer, "answer"},
    {Channel::Reasoning, "reasoning"},
    {Channel::ToolCall, "tool_call"},
});
constexpr auto kLocalCountNames = make_name_table<LocalCount>({
    {LocalCount::None, "none"},
    {LocalCount::ChunkUsage, "chunk_usage"},
    {LocalCount::Tokenizer, "tokenizer"},
});

}  // namespace

std::string_view to_string(ErrorKind kind) noexcept {
  return kErrorKindNames.name(kind, "other");
}

ErrorKind error_kind_from_string(std::string_view name) noexcept {
  return kErrorKindNames.find(name).value_or(ErrorKind::Other);
}

std::string_view to_string(Channel channel) noexcept {
  return kChannelNames.name(channel, "answer");
}

std::string_view to_string(LocalCount source) noexcept {
  return kLocalCountNames.name(source, "none");
}

LocalCount local_count_from_string(std::string_view name) noexcept {
  return kLocalCountNames.find(name).value_or(LocalCount::None);
}

void assign_chunk_tokens(RequestRecord& record) {
  std::vector<std::size_t> unknown;
  std::int64_t known_sum = 0;
  for (std::size_t i = 0; i < record.chunks.size(); ++i) {
    if (record.chunks[i].tokens < 0) {
      unknown.push_back(i);
    } else {
      known_sum += record.chunks[i].tokens;
    }
  }
  if (unknown.empty()) {
    return;
  }
  std::int64_t target = -1;
  if (record.output_tokens >= 0) {
    target = record.output_tokens;
  } else if (record.output_tokens_local >= 0) {
    target = record.output_tokens_local;
  }
  const std::int64_t left = std::max<std::int64_t>(0, target - known_sum);
  const auto count = static_cast<std::int64_t>(unknown.size());
  if (target < 0 || left == count) {
    // One token each: no count to share out, or exactly one per chunk (the common stream).
    for (std::size_t i : unknown) {
      record.chunks[i].tokens = 1;
    }
    return;
  }
  if (left < count) {
    // Not enough for one each: the `left` chunks with the most bytes (earlier on ties) get one.
    std::vector<std::size_t> order = unknown;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
      return record.chunks[a].bytes > record.chunks[b].bytes;
    });
    for (std::size_t k = 0; k < order.size(); ++k) {
      record.chunks[order[k]].tokens = static_cast<std::int64_t>(k) < left ? 1 : 0;
    }
    return;
  }
  // One token each, then the rest in proportion to bytes with largest-remainder rounding (ties
  // go to the earlier chunk). With no bytes at all every chunk weighs the same.
  const std::int64_t extra = left - count;
  std::int64_t total_bytes = 0;
  for (std::size_t i : unknown) {
    total_bytes += std::max(0, record.chunks[i].bytes);
  }
  auto weight = [&](std::size_t i) -> std::int64_t {
    return total_bytes > 0 ? std::max(0, record.chunks[i].bytes) : 1;
  };
  const std::int64_t denominator = total_bytes > 0 ? total_bytes : count;
  LLMBENCH_ASSERT(denominator > 0, "some chunk has unknown tokens here");
  std::vector<std::pair<std::int64_t, std::size_t>> remainders;  // (remainder, position)
  std::int64_t given = 0;
  for (std::size_t k = 0; k < unknown.size(); ++k) {
    const std::int64_t share = extra * weight(unknown[k]);
    const std::int64_t whole = share / denominator;
    record.chunks[unknown[k]].tokens = static_cast<std::int32_t>(1 + whole);
    given += whole;
    remainders.emplace_back(share % denominator, k);
  }
  std::stable_sort(remainders.begin(), remainders.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::int64_t r = 0; r < extra - given; ++r) {
    record.chunks[unknown[remainders[static_cast<std::size_t>(r)].second]].tokens += 1;
  }
}

std::int64_t counted_output_tokens(const RequestRecord& record) noexcept {
  if (record.output_tokens >= 0) {
    return record.output_tokens;
  }
  return record.output_tokens_local >= 0 ? record.output_tokens_local : -1;
}

std::int64_t output_token_count(const RequestRecord& record) noexcept {
  if (const std::int64_t counted = counted_output_tokens(record); counted >= 0) {
    return counted;
  }
  std::int64_t sum = 0;
  for (const auto& chunk : record.chunks) {
    sum += tokens_or_one(chunk);
  }
  return sum;
}

std::int64_t input_token_count(const RequestRecord& record) noexcept {
  if (record.input_tokens >= 0) {
    return record.input_tokens;
  }
  if (record.input_tokens_local >= 0) {
    return record.input_tokens_local;
  }
  return record.prompt_len >= 0 ? record.prompt_len : 0;
}

}  // namespace llmbench::metrics
