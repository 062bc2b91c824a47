#include "llmbench/metrics/summary.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <optional>
#include <sstream>
#include <string_view>
#include <system_error>
#include <utility>

namespace llmbench::metrics {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr TimeNs kNsPerSecond = 1'000'000'000;

// Milliseconds between two timestamps, NaN when either never happened (-1).
double span_ms(TimeNs from, TimeNs to) noexcept {
  if (from < 0 || to < 0) {
    return kNaN;
  }
  return ns_to_ms(to - from);
}

// Tokens a chunk stands for in the metrics when its count is unknown: one (DESIGN.md §3 counts
// every output-carrying event as at least one token until a tokenizer says otherwise).
std::int64_t chunk_tokens_or_one(const Chunk& chunk) noexcept {
  return chunk.tokens >= 0 ? chunk.tokens : 1;
}

// What `summarize` needs to know of a request's chunks, found in one pass.
struct ChunkShape {
  bool unknown_tokens = false;  // some chunk's token count is unknown (< 0)
  bool one_token_each = true;   // every chunk after the first counts as one token
};

ChunkShape chunk_shape(const std::vector<Chunk>& chunks) noexcept {
  ChunkShape shape;
  for (std::size_t i = 0; i < chunks.size(); ++i) {
    const std::int64_t tokens = chunks[i].tokens;
    shape.unknown_tokens |= tokens < 0;
    shape.one_token_each &= i == 0 || tokens == 1 || tokens < 0;
  }
  return shape;
}

// Input tokens of one completed request: server usage, else the workload's intended length.
std::int64_t input_token_count(const RequestRecord& record) noexcept {
  if (record.input_tokens >= 0) {
    return record.input_tokens;
  }
  if (record.input_tokens_local >= 0) {
    return record.input_tokens_local;
  }
  return record.prompt_len >= 0 ? record.prompt_len : 0;
}

void push_if_finite(std::vector<double>& out, double value) {
  if (std::isfinite(value)) {
    out.push_back(value);
  }
}

// Whether a completed request meets every SLO given. A request with no output has no TTFT and
// fails a TTFT SLO (it never delivered a first token); a request with N < 2 has no TPOT and meets
// a TPOT SLO (vLLM's goodput treats a missing TPOT the same way).
bool meets_slo(const RequestLatency& latency, const Slo& slo) noexcept {
  if (slo.ttft_ms && !(latency.ttft_ms <= *slo.ttft_ms)) {
    return false;
  }
  if (slo.tpot_ms && std::isfinite(latency.tpot_ms) && !(latency.tpot_ms <= *slo.tpot_ms)) {
    return false;
  }
  if (slo.e2el_ms && !(latency.e2el_ms <= *slo.e2el_ms)) {
    return false;
  }
  return true;
}

// Peak number of intervals [sent, done] open at one instant (closed intervals: a request that
// starts exactly when another ends overlaps it).
std::size_t max_overlap(std::vector<std::pair<TimeNs, int>> events) {
  // Requests are open on [sent, done): at equal times an end comes before a start (-1 sorts
  // before +1), so a closed loop that sends the next request at the instant the previous one
  // finishes (the simulator does, in virtual time) is not counted twice.
  std::sort(events.begin(), events.end());
  std::int64_t open = 0;
  std::int64_t peak = 0;
  for (const auto& [time, delta] : events) {
    open += delta;
    peak = std::max(peak, open);
  }
  return static_cast<std::size_t>(peak);
}

}  // namespace

namespace {

/// The two ranks numpy.percentile(method="linear") reads for quantile q/100 of n values, and the
/// interpolation weight t between them.
struct PercentileRanks {
  std::size_t below = 0;
  std::size_t above = 0;
  double t = 0;
};

PercentileRanks percentile_ranks(std::size_t n, double q) noexcept {
  // q is divided by 100 first and the virtual index is quantile·(n−1), as numpy does.
  const double quantile = q / 100.0;
  const double virtual_index = quantile * static_cast<double>(n - 1);
  const double last = static_cast<double>(n - 1);
  const double below = std::clamp(std::floor(virtual_index), 0.0, last);
  const double above = std::clamp(below + 1.0, 0.0, last);
  return {static_cast<std::size_t>(below), static_cast<std::size_t>(above), virtual_index - below};
}

/// The percentile between the values `a` (rank `below`) and `b` (rank `above`) at weight t, as
/// numpy's _lerp computes it: b − (b−a)·(1−t) when t ≥ 0.5, a + (b−a)·t otherwise; the same
/// operation order keeps results bit-identical.
double lerp_ranks(double a, double b, double t) noexcept {
  const double diff = b - a;
  return t >= 0.5 ? b - diff * (1.0 - t) : a + diff * t;
}

}  // namespace

double percentile_sorted(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) {
    return kNaN;
  }
  const PercentileRanks r = percentile_ranks(sorted.size(), q);
  return lerp_ranks(sorted[r.below], sorted[r.above], r.t);
}

namespace {

/// Σ f(a[i]) for i < n in the order of numpy's pairwise summation (`pairwise_sum` in
/// numpy/_core/src/umath/loops_utils.h.src, numpy 1.x and 2.x): fewer than 8 terms are added one
/// by one to 0; up to 128, eight running sums take every eighth term, are combined as
/// ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)), and the terms beyond the last multiple of 8
/// are added to that; more are split in two halves (the first a multiple of 8 long), each summed
/// so, and the halves added.
template <class F>
double pairwise_sum(const double* a, std::size_t n, const F& f) {
  if (n < 8) {
    double sum = 0.0;
    for (std::size_t i = 0; i < n; ++i) sum += f(a[i]);
    return sum;
  }
  if (n <= 128) {
    double r[8];
    for (std::size_t j = 0; j < 8; ++j) r[j] = f(a[j]);
    std::size_t i = 8;
    for (; i < n - n % 8; i += 8) {
      for (std::size_t j = 0; j < 8; ++j) r[j] += f(a[i + j]);
    }
    double sum = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
    for (; i < n; ++i) sum += f(a[i]);
    return sum;
  }
  std::size_t half = n / 2;
  half -= half % 8;
  return pairwise_sum(a, half, f) + pairwise_sum(a + half, n - half, f);
}

/// numpy.sum of f over `values` as numpy.mean and numpy.std compute it for a float64 array (a
/// Python list is converted to one): the reduction runs over blocks of 8,192 elements (numpy's
/// default buffer size), each summed pairwise, the block sums added in order to 0. Checked
/// bit for bit against numpy 1.24's mean and std on 945 arrays of 1 to 1,000,001 values.
constexpr std::size_t kNumpyBlock = 8192;

template <class F>
double numpy_sum(const std::vector<double>& values, const F& f) {
  double sum = 0.0;
  for (std::size_t first = 0; first < values.size(); first += kNumpyBlock)
    sum += pairwise_sum(values.data() + first, std::min(kNumpyBlock, values.size() - first), f);
  return sum;
}

/// `numpy_sum` of f over a sequence handed over in pieces (`add`), in the same order: the pieces
/// are gathered into blocks of 8,192 values, each summed pairwise, the block sums added in turn.
template <class F>
class StreamedNumpySum {
 public:
  explicit StreamedNumpySum(F f) : f_(std::move(f)), block_(kNumpyBlock) {}
  /// Appends values[0 … n) to the sequence.
  void add(const double* values, std::size_t n) {
    while (n > 0) {
      const std::size_t take = std::min(n, kNumpyBlock - fill_);
      std::copy_n(values, take, block_.data() + fill_);
      fill_ += take;
      values += take;
      n -= take;
      if (fill_ == kNumpyBlock)
        flush();
    }
  }
  /// The sum of the whole sequence.
  double finish() {
    if (fill_ > 0)
      flush();
    return sum_;
  }

 private:
  void flush() {
    sum_ += pairwise_sum(block_.data(), fill_, f_);
    fill_ = 0;
  }
  F f_;
  std::vector<double> block_;
  std::size_t fill_ = 0;
  double sum_ = 0.0;
};

/// The values of `ranks` (ascending, distinct, each < values.size()) in the sorted order of
/// `values`, by `std::nth_element` on the part right of the previous rank: O(n) per pass.
/// Reorders `values`.
std::vector<double> select_ranks(std::vector<double>& values,
                                 const std::vector<std::size_t>& ranks) {
  std::vector<double> out;
  out.reserve(ranks.size());
  auto first = values.begin();
  for (const std::size_t k : ranks) {
    const auto kth = values.begin() + static_cast<std::ptrdiff_t>(k);
    std::nth_element(first, kth, values.end());
    out.push_back(*kth);
    first = kth + 1;
  }
  return out;
}

/// The same as `select_ranks(values, ranks)` for finite values in [lo, hi] with lo < hi, in two
/// passes over `values` instead of one per rank. v ↦ ⌊(v − lo)·(B − 1)/(hi − lo)⌋ is monotone
/// (each rounding step is), so it sorts the values into B = 65,536 ordered buckets; a count per
/// bucket locates the bucket of each rank, and only those buckets' values are copied out and
/// selected in. A run's ITLs are millions of values, and each nth_element pass over them cost
/// as much as the rest of the summary.
std::vector<double> select_ranks(std::vector<double>& values, const std::vector<std::size_t>& ranks,
                                 double lo, double hi) {
  constexpr std::size_t kMinValues = std::size_t{1} << 14;  // below this nth_element is cheaper
  constexpr std::size_t kBuckets = std::size_t{1} << 16;
  if (values.size() < kMinValues || values.size() > std::numeric_limits<std::uint32_t>::max())
    return select_ranks(values, ranks);
  const double scale = static_cast<double>(kBuckets - 1) / (hi - lo);
  if (!std::isfinite(scale))  // a range below ~1e-304: (v − lo)·scale would be inf or NaN
    return select_ranks(values, ranks);
  const auto bucket = [lo, scale](double v) {
    return std::min(static_cast<std::size_t>((v - lo) * scale), kBuckets - 1);
  };
  std::vector<std::uint32_t> counts(kBuckets, 0);
  for (const double v : values) ++counts[bucket(v)];
  // Each rank's bucket, and the rank of the bucket's first value.
  struct Wanted {
    std::size_t bucket = 0;
    std::size_t first_rank = 0;
  };
  std::vector<Wanted> wanted;  // distinct buckets, ascending
  std::vector<std::size_t> rank_slot(ranks.size());
  std::size_t b = 0;
  std::size_t below = 0;  // values in buckets < b
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    while (below + counts[b] <= ranks[i]) below += counts[b++];
    if (wanted.empty() || wanted.back().bucket != b)
      wanted.push_back({b, below});
    rank_slot[i] = wanted.size() - 1;
  }
  constexpr std::uint8_t kNone = 0xFF;
  if (wanted.size() >= kNone)  // hundreds of percentiles asked for (--metric-percentiles)
    return select_ranks(values, ranks);
  std::vector<std::uint8_t> slot_of(kBuckets, kNone);
  std::vector<std::vector<double>> gathered(wanted.size());
  for (std::size_t w = 0; w < wanted.size(); ++w) {
    slot_of[wanted[w].bucket] = static_cast<std::uint8_t>(w);
    gathered[w].reserve(counts[wanted[w].bucket]);
  }
  for (const double v : values) {
    const std::uint8_t w = slot_of[bucket(v)];
    if (w != kNone)
      gathered[w].push_back(v);
  }
  std::vector<double> out;
  out.reserve(ranks.size());
  std::size_t done_slot = wanted.size();  // ranks in one bucket: select right of the previous
  std::ptrdiff_t next_first = 0;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    auto& part = gathered[rank_slot[i]];
    if (rank_slot[i] != done_slot) {
      done_slot = rank_slot[i];
      next_first = 0;
    }
    const auto kth =
        part.begin() + static_cast<std::ptrdiff_t>(ranks[i] - wanted[rank_slot[i]].first_rank);
    std::nth_element(part.begin() + next_first, kth, part.end());
    out.push_back(*kth);
    next_first = kth - part.begin() + 1;
  }
  return out;
}

}  // namespace

namespace {

Stats empty_stats(const std::vector<double>& qs) {
  Stats stats;
  for (double q : qs) {
    stats.percentiles.emplace_back(q, 0.0);
  }
  return stats;
}

/// The squared deviation from `mean` that numpy.std sums.
struct SquaredDeviation {
  double mean;
  double operator()(double v) const noexcept {
    const double d = v - mean;
    return d * d;
  }
};

/// The Stats of `count` ≥ 1 values from their numpy-order sum, their extremes, `squares(mean)`
/// (their numpy-order Σ (v − mean)²) and `values_at(ranks)` (the values at ascending distinct
/// ranks of their sorted order). `squares` is called before `values_at`, which may reorder them.
template <class Squares, class ValuesAt>
Stats stats_from(std::size_t count, double sum, double lo, double hi, const Squares& squares,
                 const ValuesAt& values_at, const std::vector<double>& qs) {
  Stats stats;
  const auto n = static_cast<double>(count);
  stats.count = count;
  // numpy.mean over vLLM's list, then the population standard deviation (numpy.std, ddof = 0),
  // both summed in numpy's order, so they are bit-identical to numpy's.
  stats.mean = sum / n;
  stats.std = std::sqrt(squares(stats.mean) / n);
  stats.min = lo;
  stats.max = hi;
  std::vector<std::size_t> ranks;
  const auto want = [&](double q) {
    const PercentileRanks r = percentile_ranks(count, q);
    ranks.push_back(r.below);
    ranks.push_back(r.above);
  };
  want(50);
  for (double q : qs) want(q);
  std::sort(ranks.begin(), ranks.end());
  ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
  const std::vector<double> at_rank = values_at(ranks);
  // Interpolates exactly as `percentile_sorted` would over the sorted values.
  const auto value = [&](std::size_t rank) {
    return at_rank[static_cast<std::size_t>(std::lower_bound(ranks.begin(), ranks.end(), rank) -
                                            ranks.begin())];
  };
  const auto percentile = [&](double q) {
    const PercentileRanks r = percentile_ranks(count, q);
    return lerp_ranks(value(r.below), value(r.above), r.t);
  };
  stats.median = percentile(50);
  for (double q : qs) {
    stats.percentiles.emplace_back(q, percentile(q));
  }
  return stats;
}

/// `describe` of a sample given twice: `visit(emit)` calls emit(values, n) with the sample in
/// its order (for the sums), and `distinct` holds its values with their multiplicities (for the
/// order statistics; they sum to the sample size). All values are finite.
template <class Visit>
Stats describe_weighted(const Visit& visit, std::vector<std::pair<double, std::size_t>> distinct,
                        const std::vector<double>& qs) {
  std::size_t count = 0;
  for (const auto& d : distinct) count += d.second;
  if (count == 0) {
    return empty_stats(qs);
  }
  std::sort(distinct.begin(), distinct.end());
  StreamedNumpySum sum([](double v) { return v; });
  visit([&](const double* values, std::size_t n) { sum.add(values, n); });
  const auto squares = [&](double mean) {
    StreamedNumpySum deviations(SquaredDeviation{mean});
    visit([&](const double* values, std::size_t n) { deviations.add(values, n); });
    return deviations.finish();
  };
  const auto values_at = [&](const std::vector<std::size_t>& ranks) {
    std::vector<double> out;
    out.reserve(ranks.size());
    std::size_t d = 0;
    std::size_t below = 0;  // values in distinct[0 … d)
    for (const std::size_t rank : ranks) {
      while (below + distinct[d].second <= rank) below += distinct[d++].second;
      out.push_back(distinct[d].first);
    }
    return out;
  };
  return stats_from(count, sum.finish(), distinct.front().first, distinct.back().first, squares,
                    values_at, qs);
}

}  // namespace

Stats describe(std::vector<double> values, const std::vector<double>& qs) {
  if (values.empty()) {
    return empty_stats(qs);
  }
  const double sum = numpy_sum(values, [](double v) { return v; });
  double lo = values.front();
  double hi = values.front();
  for (double v : values) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  const auto squares = [&](double mean) { return numpy_sum(values, SquaredDeviation{mean}); };
  const auto values_at = [&](const std::vector<std::size_t>& ranks) {
    return std::isfinite(sum) && hi > lo && std::isfinite(hi - lo)
               ? select_ranks(values, ranks, lo, hi)
               : select_ranks(values, ranks);
  };
  return stats_from(values.size(), sum, lo, hi, squares, values_at, qs);
}

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
  if (target < 0) {
    for (std::size_t i : unknown) {
      record.chunks[i].tokens = 1;
    }
    return;
  }
  const std::int64_t left = std::max<std::int64_t>(0, target - known_sum);
  const auto count = static_cast<std::int64_t>(unknown.size());
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

namespace {

/// N as counted by someone: server usage, else the local count; -1 when neither exists (N is
/// then the chunks' tokens).
std::int64_t counted_output_tokens(const RequestRecord& record) noexcept {
  if (record.output_tokens >= 0) {
    return record.output_tokens;
  }
  return record.output_tokens_local >= 0 ? record.output_tokens_local : -1;
}

}  // namespace

std::int64_t output_token_count(const RequestRecord& record) noexcept {
  if (const std::int64_t counted = counted_output_tokens(record); counted >= 0) {
    return counted;
  }
  std::int64_t sum = 0;
  for (const auto& chunk : record.chunks) {
    sum += chunk_tokens_or_one(chunk);
  }
  return sum;
}

namespace {

/// A request's output instants as the latencies read them (ns since run start).
struct OutputSpan {
  bool any = false;          // some output arrived; `first` and `last` are then set
  TimeNs first = -1;         // first output chunk
  TimeNs last = -1;          // last output chunk
  bool answered = false;     // some chunk was an answer chunk; `first_answer` is then set
  TimeNs first_answer = -1;  // first answer chunk
};

/// The latencies of a completed request with output `span` and N = `output_tokens`.
RequestLatency latency_of(const RequestRecord& record, const OutputSpan& span,
                          std::int64_t output_tokens) noexcept {
  RequestLatency out{kNaN, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN};
  out.lateness_ms = span_ms(record.scheduled_ns, record.sent_ns);
  if (!span.any) {
    // No output: TTFT, TTFAT and TPOT stay undefined; latency runs to the stream's end.
    out.e2el_ms = span_ms(record.sent_ns, record.done_ns);
    out.e2el_sched_ms = span_ms(record.scheduled_ns, record.done_ns);
    return out;
  }
  out.ttft_ms = span_ms(record.sent_ns, span.first);
  out.ttft_sched_ms = span_ms(record.scheduled_ns, span.first);
  out.e2el_ms = span_ms(record.sent_ns, span.last);
  out.e2el_sched_ms = span_ms(record.scheduled_ns, span.last);
  if (span.answered) {
    out.ttfat_ms = span_ms(record.sent_ns, span.first_answer);
  }
  if (output_tokens >= 2) {
    out.tpot_ms = ns_to_ms(span.last - span.first) / static_cast<double>(output_tokens - 1);
  }
  return out;
}

}  // namespace

RequestLatency request_latency(const RequestRecord& record) noexcept {
  if (record.chunks.empty()) {
    return latency_of(record, OutputSpan{}, 0);
  }
  OutputSpan span{true, record.chunks.front().time_ns, record.chunks.back().time_ns, false, -1};
  for (const auto& chunk : record.chunks) {
    if (chunk.channel != Channel::Reasoning) {  // a tool call is the answer too (issue 14)
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
    const std::int64_t tokens = chunk_tokens_or_one(record.chunks[i]);
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

namespace {

/// What `summarize` gathers over the records, whichever way their token times are held: counts,
/// token totals, per-request latencies, goodput, in-flight intervals and 1 s token windows.
class SummaryBuilder {
 public:
  /// Judges goodput by `slo`. Finds the duration window's opening (DESIGN.md §3 "from the first
  /// send to the last completion"): the first send of any non-warm-up request, failed ones included
  /// (the load was running). It closes at the last `done` of a completed request (a trailing
  /// timeout does not stretch the window over which completed work is divided).
  SummaryBuilder(const std::vector<RequestRecord>& records, const Slo& slo) : slo_(slo) {
    for (const auto& r : records) {
      if (!r.warmup && r.sent_ns >= 0 && (first_send_ < 0 || r.sent_ns < first_send_)) {
        first_send_ = r.sent_ns;
      }
    }
  }

  /// Counts `record`; true when it is a completed non-warm-up request, whose latencies and
  /// tokens are then to be added.
  bool admit(const RequestRecord& record) {
    if (record.warmup) {
      return false;
    }
    ++s_.total;
    if (!record.ok()) {
      ++s_.failed;
      ++s_.failures_by_kind[std::string(to_string(record.error_kind))];
      return false;
    }
    ++s_.completed;
    last_done_ = std::max(last_done_, record.done_ns);
    return true;
  }

  /// Adds a completed request with N = `output_tokens` and its latencies.
  void add(const RequestRecord& record, std::int64_t output_tokens, const RequestLatency& latency) {
    s_.total_output_tokens += output_tokens;
    s_.total_input_tokens += input_token_count(record);
    if (record.input_tokens >= 0 && record.input_tokens_local >= 0 &&
        record.input_tokens != record.input_tokens_local) {
      ++s_.prompt_token_mismatches;
    }
    if (record.output_tokens < 0) {
      ++s_.usage_missing;
      if (record.output_tokens_local >= 0 &&
          record.output_tokens_local_source == LocalCount::Tokenizer) {
        ++s_.output_tokens_counted_locally;
      }
    } else if (record.output_tokens_local >= 0 &&
               record.output_tokens != record.output_tokens_local) {
      ++s_.token_count_mismatches;
    }
    push_if_finite(ttft_, latency.ttft_ms);
    push_if_finite(ttfat_, latency.ttfat_ms);
    push_if_finite(ttft_sched_, latency.ttft_sched_ms);
    push_if_finite(tpot_, latency.tpot_ms);
    push_if_finite(e2el_, latency.e2el_ms);
    push_if_finite(e2el_sched_, latency.e2el_sched_ms);
    push_if_finite(lateness_, latency.lateness_ms);
    if (meets_slo(latency, slo_)) {
      ++s_.good_requests;
    }
    if (record.sent_ns >= 0 && record.done_ns >= record.sent_ns) {
      intervals_.emplace_back(record.sent_ns, +1);
      intervals_.emplace_back(record.done_ns, -1);
    }
  }

  /// Adds `tokens` output tokens of a completed request received at `time_ns` to its window
  /// [first_send + k s, first_send + (k+1) s).
  void add_tokens(TimeNs time_ns, std::int64_t tokens) {
    const TimeNs offset = first_send_ >= 0 ? std::max<TimeNs>(0, time_ns - first_send_) : 0;
    // Token times arrive mostly in order, so the window changes rarely: divide only when one
    // leaves the current window (a 64-bit division per token was a tenth of `simulate`'s summary).
    if (offset >= window_end_ || offset < window_start_) {
      window_ = static_cast<std::size_t>(offset / kNsPerSecond);
      window_start_ = static_cast<TimeNs>(window_) * kNsPerSecond;
      window_end_ = window_start_ + kNsPerSecond;
    }
    if (window_ >= kDenseWindows) {
      far_windows_[window_] += tokens;  // a run over 12 days, or a corrupt time
      return;
    }
    if (window_ >= tokens_per_window_.size()) {
      tokens_per_window_.resize(window_ + 1, 0);
    }
    tokens_per_window_[window_] += tokens;
  }

  /// The summary, with the ITL and (when they differ from the ITLs) inter-chunk statistics.
  Summary finish(Stats itl, std::optional<Stats> inter_chunk, const SummaryOptions& options) {
    if (first_send_ >= 0 && last_done_ > first_send_) {
      s_.duration_s = ns_to_s(last_done_ - first_send_);
    }
    if (s_.duration_s > 0) {
      s_.request_throughput = static_cast<double>(s_.completed) / s_.duration_s;
      s_.output_throughput = static_cast<double>(s_.total_output_tokens) / s_.duration_s;
      s_.total_token_throughput =
          static_cast<double>(s_.total_input_tokens + s_.total_output_tokens) / s_.duration_s;
      s_.request_goodput = static_cast<double>(s_.good_requests) / s_.duration_s;
    }
    // Peak output tokens in a 1 s window.
    for (const std::int64_t tokens : tokens_per_window_) {
      s_.max_output_tokens_per_s =
          std::max(s_.max_output_tokens_per_s, static_cast<double>(tokens));
    }
    for (const auto& [window, tokens] : far_windows_) {
      s_.max_output_tokens_per_s =
          std::max(s_.max_output_tokens_per_s, static_cast<double>(tokens));
    }
    // Peak concurrency over completed requests (as vLLM counts it), exact rather than per second.
    s_.max_concurrent_requests = max_overlap(std::move(intervals_));
    const auto& qs = options.percentiles;
    s_.ttft_ms = describe(std::move(ttft_), qs);
    s_.ttfat_ms = describe(std::move(ttfat_), qs);
    s_.ttft_sched_ms = describe(std::move(ttft_sched_), qs);
    s_.tpot_ms = describe(std::move(tpot_), qs);
    s_.itl_ms = std::move(itl);
    s_.inter_chunk_ms = inter_chunk ? std::move(*inter_chunk) : s_.itl_ms;
    s_.e2el_ms = describe(std::move(e2el_), qs);
    s_.e2el_sched_ms = describe(std::move(e2el_sched_), qs);
    s_.lateness_ms = describe(std::move(lateness_), qs);
    return std::move(s_);
  }

 private:
  // Dense for the first 2^20 windows, a map beyond.
  static constexpr std::size_t kDenseWindows = std::size_t{1} << 20;
  Summary s_;
  Slo slo_;  // what `add` judges goodput by
  TimeNs first_send_ = -1;
  TimeNs last_done_ = -1;
  std::vector<double> ttft_, ttfat_, ttft_sched_, tpot_, e2el_, e2el_sched_, lateness_;
  std::vector<std::pair<TimeNs, int>> intervals_;
  std::vector<std::int64_t> tokens_per_window_;
  std::map<std::size_t, std::int64_t> far_windows_;
  std::size_t window_ = 0;
  TimeNs window_start_ = 0;
  TimeNs window_end_ = -1;
};

}  // namespace

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

  for (const auto& original : records) {
    if (!builder.admit(original)) {
      continue;
    }
    // Work on a copy only when some chunk's token count is unknown.
    ChunkShape shape = chunk_shape(original.chunks);
    const bool needs_tokens = shape.unknown_tokens;
    RequestRecord filled;
    if (needs_tokens) {
      filled = original;
      assign_chunk_tokens(filled);
      shape = chunk_shape(filled.chunks);
    }
    const RequestRecord& record = needs_tokens ? filled : original;
    builder.add(record, output_token_count(record), request_latency(record));
    // While every chunk after the first carries one token, the ITL samples are exactly the
    // inter-chunk gaps (same values, same order), so one vector serves both until a record
    // breaks that; the inter-chunk list is then split off from the ITLs gathered so far.
    if (inter_chunk_is_itl && !shape.one_token_each) {
      inter_chunk_is_itl = false;
      inter_chunk.assign(itl.begin(), itl.end());
    }
    if (shape.one_token_each) {
      append_inter_chunk_ms(record, itl);  // one token per chunk: the ITLs are the gaps
    } else {
      append_itl_ms(record, itl);
    }
    if (!inter_chunk_is_itl)
      append_inter_chunk_ms(record, inter_chunk);
    for (const auto& chunk : record.chunks) {
      builder.add_tokens(chunk.time_ns, chunk.tokens);
    }
  }
  const auto& qs = options.percentiles;
  Stats itl_stats = describe(std::move(itl), qs);
  std::optional<Stats> inter_chunk_stats;
  if (!inter_chunk_is_itl) {
    inter_chunk_stats = describe(std::move(inter_chunk), qs);
  }
  return builder.finish(std::move(itl_stats), std::move(inter_chunk_stats), options);
}

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
        span = OutputSpan{true, grid[first], -1, true, grid[first]};
      }
      previous = grid[end - 1];
      run_tokens += run.count;
    }
    span.last = previous;
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
  Stats itl = describe_weighted(visit, std::move(distinct), options.percentiles);
  return builder.finish(std::move(itl), std::nullopt, options);
}

}  // namespace llmbench::metrics
