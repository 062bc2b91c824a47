#include "llmbench/server/fault.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <system_error>

namespace llmbench::server {
namespace {

[[noreturn]] void fail(const char* flag, const std::string& message) {
  throw Exception(Error{message, flag, -1});
}

/// SplitMix64's finalizer (Steele, Lea, Flood, "Fast splittable pseudorandom number
/// generators", OOPSLA 2014): a bijective mix whose outputs pass BigCrush even for sequential
/// inputs, so hashing (seed, n) gives an independent uniform draw per request.
std::uint64_t mix64(std::uint64_t z) noexcept {
  z += 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

}  // namespace

const FaultKindInfo& fault_info(FaultKind kind) noexcept {
  for (const auto& info : kFaultKinds) {
    if (info.kind == kind)
      return info;
  }
  return kFaultKinds.front();  // unreachable for a valid kind
}

std::string fault_kind_names() {
  std::string out;
  for (const auto& info : kFaultKinds) {
    if (!out.empty())
      out += ", ";
    out += info.name;
  }
  return out;
}

Result<FaultRule> parse_fault(std::string_view text, const std::string& flag) {
  const std::size_t colon = text.find(':');
  const std::string_view name = text.substr(0, colon);
  FaultRule rule;
  for (const auto& info : kFaultKinds) {
    if (info.name == name)
      rule.kind = info.kind;
  }
  if (rule.kind == FaultKind::None) {
    return Error{fmt::format("unknown fault kind '{}' (valid: {})", name, fault_kind_names()), flag,
                 -1};
  }
  if (colon == std::string_view::npos)
    return rule;
  const std::string_view rate = text.substr(colon + 1);
  const auto [end, ec] = std::from_chars(rate.data(), rate.data() + rate.size(), rule.rate);
  if (ec != std::errc() || end != rate.data() + rate.size() || rate.empty()) {
    return Error{fmt::format("rate '{}' of '{}' is not a number", rate, text), flag,
                 static_cast<std::int64_t>(colon + 1)};
  }
  if (!(rule.rate > 0 && rule.rate <= 1)) {
    return Error{fmt::format("rate of '{}' must be in (0, 1]", text), flag,
                 static_cast<std::int64_t>(colon + 1)};
  }
  return rule;
}

void validate_faults(const FaultSettings& settings) {
  double sum = 0;
  for (std::size_t i = 0; i < settings.rules.size(); ++i) {
    const FaultRule& r = settings.rules[i];
    if (r.kind == FaultKind::None || !(r.rate > 0 && r.rate <= 1))
      fail("--fault", fmt::format("rule {} needs a kind and a rate in (0, 1]", i + 1));
    for (std::size_t j = 0; j < i; ++j) {
      if (settings.rules[j].kind == r.kind)
        fail("--fault", fmt::format("'{}' is given twice", fault_info(r.kind).name));
    }
    sum += r.rate;
  }
  if (sum > 1 + 1e-9)
    fail("--fault",
         fmt::format("the rates add up to {} (at most 1: each request gets one fault)", sum));
  if (!std::isfinite(settings.stall_s) || settings.stall_s < 0 || settings.stall_s > 86400)
    fail("--fault-stall-s", fmt::format("must be in [0, 86400], got {}", settings.stall_s));
  if (settings.huge_event_bytes < 1 || settings.huge_event_bytes > (std::int64_t{1} << 30)) {
    fail("--fault-huge-event-bytes",
         fmt::format("must be in [1, 2^30], got {}", settings.huge_event_bytes));
  }
  if (settings.drip_bytes < 1)
    fail("--fault-drip-bytes", fmt::format("must be >= 1, got {}", settings.drip_bytes));
  if (!std::isfinite(settings.drip_ms) || settings.drip_ms < 0 || settings.drip_ms > 1000)
    fail("--fault-drip-ms", fmt::format("must be in [0, 1000], got {}", settings.drip_ms));
}

FaultKind pick_fault(const FaultSettings& settings, std::int64_t number) noexcept {
  if (settings.rules.empty())
    return FaultKind::None;
  const std::uint64_t h = mix64(settings.seed ^ mix64(static_cast<std::uint64_t>(number)));
  // The top 53 bits as a double in [0, 1) (exact: 53 bits fit the mantissa).
  const double u = static_cast<double>(h >> 11U) * 0x1.0p-53;
  double edge = 0;
  for (const FaultRule& r : settings.rules) {
    edge += r.rate;
    if (u < edge)
      return r.kind;
  }
  return FaultKind::None;
}

}  // namespace llmbench::server
