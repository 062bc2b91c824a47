#include "llmbench/metrics/record.hpp"

#include <array>
#include <utility>

namespace llmbench::metrics {

namespace {

// Names written in JSON for each ErrorKind (docs/metrics.md, "Per-request records"). The order
// matches the enum so the table can be indexed by its value.
constexpr std::array<std::pair<ErrorKind, std::string_view>, 12> kErrorKindNames{{
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
}};

}  // namespace

std::string_view to_string(ErrorKind kind) noexcept {
  for (const auto& [k, name] : kErrorKindNames) {
    if (k == kind) {
      return name;
    }
  }
  return "other";
}

ErrorKind error_kind_from_string(std::string_view name) noexcept {
  for (const auto& [k, n] : kErrorKindNames) {
    if (n == name) {
      return k;
    }
  }
  return ErrorKind::Other;
}

std::string_view to_string(Channel channel) noexcept {
  switch (channel) {
    case Channel::Answer:
      return "answer";
    case Channel::Reasoning:
      return "reasoning";
    case Channel::ToolCall:
      return "tool_call";
  }
  return "answer";
}

std::string_view to_string(LocalCount source) noexcept {
  switch (source) {
    case LocalCount::None:
      return "none";
    case LocalCount::ChunkUsage:
      return "chunk_usage";
    case LocalCount::Tokenizer:
      return "tokenizer";
  }
  return "none";
}

LocalCount local_count_from_string(std::string_view name) noexcept {
  if (name == "chunk_usage") {
    return LocalCount::ChunkUsage;
  }
  if (name == "tokenizer") {
    return LocalCount::Tokenizer;
  }
  return LocalCount::None;
}

}  // namespace llmbench::metrics
