#include "llmbench/dist/spread.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/metrics/statistics.hpp"
#include "llmbench/workload/arrivals.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>

namespace llmbench::dist {

namespace {

/// FNV-1a, 64 bits (Fowler, Noll, Vo; the parameters of RFC draft-eastlake-fnv).
class Fnv {
 public:
  void bytes(std::string_view data) noexcept {
    for (const char c : data) {
      hash_ ^= static_cast<unsigned char>(c);
      hash_ *= 0x100000001b3ULL;
    }
  }
  void number(std::int64_t v) noexcept {
    bytes(std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
  }
  void real(double v) noexcept { number(std::bit_cast<std::int64_t>(v)); }
  void text(std::string_view s) noexcept {
    number(static_cast<std::int64_t>(s.size()));
    bytes(s);
  }
  [[nodiscard]] std::uint64_t value() const noexcept { return hash_; }

 private:
  std::uint64_t hash_ = 0xcbf29ce484222325ULL;
};

/// `t` moved by `shift` unless it is a "not set" sentinel (< 0).
TimeNs moved(TimeNs t, TimeNs shift) noexcept {
  return t < 0 ? t : t + shift;
}

}  // namespace

std::int64_t quota(std::int64_t count, int rank, int ranks) noexcept {
  if (count <= rank)
    return 0;
  return (count - rank + ranks - 1) / ranks;
}

std::int64_t cap_share(std::int64_t cap, int rank, int ranks) {
  if (cap <= 0)
    return cap;
  if (cap < ranks) {
    throw Exception(Error{fmt::format("--max-concurrency {} is below the {} ranks of the job: "
                                      "each rank needs at least one slot",
                                      cap, ranks),
                          "--max-concurrency", -1});
  }
  return cap / ranks + (rank < cap % ranks ? 1 : 0);
}

std::uint64_t schedule_digest(const std::vector<workload::Sample>& samples,
                              const loadgen::LoadOptions& load) {
  Fnv h;
  h.number(load.num_prompts);
  h.number(load.num_warmups);
  h.real(load.request_rate);
  h.real(load.burstiness);
  h.real(load.duration_s);
  h.number(static_cast<std::int64_t>(load.seed));
  h.number(static_cast<std::int64_t>(load.ramp_up));
  h.real(load.ramp_up_start_rps);
  h.real(load.ramp_up_end_rps);
  h.number(load.multi_turn ? 1 : 0);
  h.number(static_cast<std::int64_t>(samples.size()));
  for (const auto& s : samples) {
    h.text(s.prompt);
    h.number(static_cast<std::int64_t>(s.prompt_token_ids.size()));
    for (const auto id : s.prompt_token_ids) h.number(static_cast<std::int64_t>(id));
    h.number(static_cast<std::int64_t>(s.messages.size()));
    for (const auto& m : s.messages) {
      h.text(m.role);
      h.text(m.content);
    }
    h.number(s.prompt_len);
    h.number(s.output_len);
    h.number(s.arrival_ns);
    h.number(static_cast<std::int64_t>(s.turns.size()));
    for (const auto& t : s.turns) {
      h.text(t.content);
      h.number(t.output_len);
    }
  }
  const bool counted_rate = load.duration_s <= 0 && std::isfinite(load.request_rate) &&
                            load.ramp_up == workload::RampUp::None && !samples.empty() &&
                            samples.front().arrival_ns < 0;
  if (counted_rate) {
    const auto arrivals = workload::arrival_times(
        load.num_prompts,
        workload::ArrivalOptions{
            .request_rate = load.request_rate, .burstiness = load.burstiness, .seed = load.seed});
    for (const TimeNs t : arrivals) h.number(t);
  }
  return h.value();
}

std::string encode_part(const RankPart& part) {
  const nlohmann::json head = {{"rank", part.rank},
                               {"host", part.host},
                               {"run_start_steady_ns", part.run_start_steady_ns},
                               {"connections_opened", part.connections_opened},
                               {"ports_in_use_peak", part.ports_in_use_peak},
                               {"connect_errors", part.connect_errors},
                               {"loop_lag_ms", part.loop_lag_ms}};
  std::string out = head.dump();
  out += '\n';
  for (const auto& r : part.records) {
    out += metrics::record_to_json_line(r);
    out += '\n';
  }
  return out;
}

RankPart decode_part(std::string_view text) {
  RankPart part;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_no;
    if (line_no == 1) {
      const auto head = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (!head.is_object())
        throw Exception("a rank's part does not start with its facts line");
      part.rank = head.value("rank", 0);
      part.host = head.value("host", "");
      part.run_start_steady_ns = head.value("run_start_steady_ns", TimeNs{0});
      part.connections_opened = head.value("connections_opened", std::uint64_t{0});
      part.ports_in_use_peak = head.value("ports_in_use_peak", std::int64_t{0});
      part.connect_errors = head.value("connect_errors", std::map<std::string, std::int64_t>{});
      part.loop_lag_ms = head.value("loop_lag_ms", std::vector<float>{});
      continue;
    }
    auto record = metrics::record_from_json_line(line);
    if (!record) {
      throw Exception(fmt::format("rank {}'s records, line {}: {}", part.rank, line_no,
                                  record.error().message));
    }
    part.records.push_back(std::move(*record));
  }
  return part;
}

std::vector<metrics::RequestRecord> merge_parts(std::vector<RankPart>& parts,
                                                const std::vector<ClockOffset>& before,
                                                TimeNs* run_start_steady_ns) {
  // Each rank's run start on rank 0's clock; the merged run clock starts at the earliest, so no
  // mapped instant is negative.
  TimeNs zero = std::numeric_limits<TimeNs>::max();
  for (const auto& p : parts)
    zero = std::min(zero,
                    p.run_start_steady_ns - before.at(static_cast<std::size_t>(p.rank)).offset_ns);
  std::vector<metrics::RequestRecord> out;
  for (auto& p : parts) {
    const TimeNs shift =
        p.run_start_steady_ns - before.at(static_cast<std::size_t>(p.rank)).offset_ns - zero;
    for (auto& r : p.records) {
      r.rank = p.rank;
      r.scheduled_ns = moved(r.scheduled_ns, shift);
      r.slot_ns = moved(r.slot_ns, shift);
      r.sent_ns = moved(r.sent_ns, shift);
      r.headers_ns = moved(r.headers_ns, shift);
      r.done_ns = moved(r.done_ns, shift);
      for (auto& c : r.chunks) c.time_ns = moved(c.time_ns, shift);
      out.push_back(std::move(r));
    }
    p.records.clear();
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    if (a.done_ns != b.done_ns)
      return a.done_ns < b.done_ns;
    return a.rank != b.rank ? a.rank < b.rank : a.id < b.id;
  });
  if (run_start_steady_ns != nullptr)
    *run_start_steady_ns = zero;
  return out;
}

SpreadFacts spread_facts(const std::vector<metrics::RequestRecord>& records,
                         const std::vector<RankPart>& parts, std::int64_t planned,
                         const std::vector<ClockOffset>& before,
                         const std::vector<ClockOffset>& after, double duration_s,
                         double window_s) {
  SpreadFacts f;
  f.ranks = static_cast<int>(parts.size());
  f.per_rank.resize(parts.size());
  std::vector<std::vector<double>> lateness(parts.size());
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto& rf = f.per_rank[i];
    const auto& p = parts[i];
    rf.rank = p.rank;
    rf.host = p.host;
    rf.quota = quota(planned, p.rank, f.ranks);
    rf.connections_opened = p.connections_opened;
    rf.ports_in_use_peak = p.ports_in_use_peak;
    rf.connect_errors_by_cause = p.connect_errors;
    std::vector<double> lags(p.loop_lag_ms.begin(), p.loop_lag_ms.end());
    std::sort(lags.begin(), lags.end());
    rf.loop_lag_p99_ms = lags.empty() ? 0 : metrics::percentile_sorted(lags, 99);
    rf.before = before.at(static_cast<std::size_t>(p.rank));
    rf.after = after.at(static_cast<std::size_t>(p.rank));
    rf.error_bound_ns = std::max(rf.before.bound_ns, rf.after.bound_ns) +
                        std::abs(rf.after.offset_ns - rf.before.offset_ns);
    f.max_error_bound_ns = std::max(f.max_error_bound_ns, rf.error_bound_ns);
  }
  for (const auto& r : records) {
    if (r.warmup || r.rank < 0 || static_cast<std::size_t>(r.rank) >= parts.size())
      continue;
    auto& rf = f.per_rank[static_cast<std::size_t>(r.rank)];
    ++rf.requests;
    if (r.ok()) {
      ++rf.completed;
      rf.output_tokens += metrics::output_token_count(r);
    } else if (r.error_kind == metrics::ErrorKind::Cancelled) {
      ++rf.cancelled;
    } else {
      ++rf.failed;
      if (r.error_kind == metrics::ErrorKind::Connect)
        ++rf.connect_errors;
    }
    if (r.sent_ns >= 0 && r.slot_ns >= 0)
      lateness[static_cast<std::size_t>(r.rank)].push_back(
          static_cast<double>(r.sent_ns - r.slot_ns) / 1e6);
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    auto& rf = f.per_rank[i];
    const auto& late = lateness[i];
    if (!late.empty()) {
      double sum = 0;
      for (const double v : late) sum += v;
      rf.lateness_mean_ms = sum / static_cast<double>(late.size());
      rf.lateness_max_ms = *std::max_element(late.begin(), late.end());
    }
    if (duration_s > 0) {
      rf.request_throughput = static_cast<double>(rf.completed) / duration_s;
      rf.output_throughput = static_cast<double>(rf.output_tokens) / duration_s;
    }
    if (rf.requests == 0 && rf.quota > 0) {
      f.warnings.push_back(
          fmt::format("rank {} ({}) sent none of its {} requests", rf.rank, rf.host, rf.quota));
    } else if (rf.connect_errors > 0) {
      f.warnings.push_back(fmt::format("rank {} ({}) could not connect for {} of its {} requests",
                                       rf.rank, rf.host, rf.connect_errors, rf.requests));
    }
  }
  if (window_s > 0 && static_cast<double>(f.max_error_bound_ns) / 1e9 > window_s) {
    f.warnings.push_back(fmt::format(
        "the clock error bound between ranks ({:.3f} ms) exceeds the window length ({:g} s): "
        "merged windows and the timeline mix requests across window edges; sync the hosts' "
        "clocks (chrony, docs/distributed.md)",
        static_cast<double>(f.max_error_bound_ns) / 1e6, window_s));
  }
  return f;
}

nlohmann::json to_json(const SpreadFacts& facts) {
  nlohmann::json ranks = nlohmann::json::array();
  for (const auto& r : facts.per_rank) {
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"quota", r.quota},
                     {"requests", r.requests},
                     {"completed", r.completed},
                     {"failed", r.failed},
                     {"cancelled", r.cancelled},
                     {"connect_errors", r.connect_errors},
                     {"output_tokens", r.output_tokens},
                     {"request_throughput", r.request_throughput},
                     {"output_throughput", r.output_throughput},
                     {"lateness_mean_ms", r.lateness_mean_ms},
                     {"lateness_max_ms", r.lateness_max_ms},
                     {"loop_lag_p99_ms", r.loop_lag_p99_ms},
                     {"connections_opened", r.connections_opened},
                     {"ports_in_use_peak", r.ports_in_use_peak},
                     {"connect_errors_by_cause", r.connect_errors_by_cause},
                     {"clock_offset_ns", r.before.offset_ns},
                     {"clock_bound_ns", r.before.bound_ns},
                     {"clock_offset_after_ns", r.after.offset_ns},
                     {"clock_bound_after_ns", r.after.bound_ns},
                     {"clock_error_bound_ns", r.error_bound_ns}});
  }
  return {{"ranks", facts.ranks},
          {"deal", "plan index i goes to rank i mod ranks"},
          {"schedule_digest", fmt::format("{:016x}", facts.schedule_digest)},
          {"clock_error_bound_ns", facts.max_error_bound_ns},
          {"per_rank", ranks},
          {"warnings", facts.warnings}};
}

}  // namespace llmbench::dist
