#include "llmbench/sim/cluster_workload.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/sim/block_manager.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <utility>

namespace llmbench::sim {

namespace {

/// Folds `value` into the hash `h` (SplitMix64 step).
std::uint64_t fold(std::uint64_t h, std::uint64_t value) noexcept {
  return splitmix64(h ^ splitmix64(value));
}

std::uint64_t segments_hash(const std::vector<PromptSegment>& segments) noexcept {
  std::uint64_t h = 0x7365676d656e7473ULL;  // "segments"
  for (const auto& s : segments) h = fold(fold(h, s.key), static_cast<std::uint64_t>(s.tokens));
  return h;
}

}  // namespace

std::vector<std::uint64_t> segment_block_hashes(const std::vector<PromptSegment>& segments,
                                                std::int64_t prompt_len, std::int64_t block_size,
                                                std::uint64_t salt) {
  LLMBENCH_ASSERT(block_size > 0, "block_size must be > 0");
  const std::int64_t blocks = std::max<std::int64_t>(prompt_len, 0) / block_size;
  std::vector<std::uint64_t> out;
  out.reserve(static_cast<std::size_t>(blocks));
  const PromptSegment rest{.key = splitmix64(salt ^ 0x72657374ULL),
                           .tokens = std::numeric_limits<std::int64_t>::max()};
  std::size_t si = 0;
  std::int64_t offset = 0;  // tokens of segment si already covered
  std::uint64_t h = splitmix64(0x626c6f636b2d6831ULL ^ static_cast<std::uint64_t>(block_size));
  for (std::int64_t j = 0; j < blocks; ++j) {
    std::uint64_t piece = 0x7069656365ULL;  // "piece"
    for (std::int64_t need = block_size; need > 0;) {
      while (si < segments.size() && segments[si].tokens <= 0) ++si;
      const PromptSegment& s = si < segments.size() ? segments[si] : rest;
      const std::int64_t take = std::min(s.tokens - offset, need);
      // A piece is named by its segment, where it starts in it and how long it is.
      piece = fold(fold(fold(piece, s.key), static_cast<std::uint64_t>(offset)),
                   static_cast<std::uint64_t>(take));
      need -= take;
      offset += take;
      if (offset == s.tokens) {
        ++si;
        offset = 0;
      }
    }
    h = fold(h, piece);
    out.push_back(h);
  }
  return out;
}

std::vector<std::uint64_t> request_block_hashes(const ClusterRequest& request,
                                                std::int64_t block_size, std::uint64_t salt) {
  if (!request.segments.empty())
    return segment_block_hashes(request.segments, request.prompt_len, block_size, salt);
  if (!request.block_hashes.empty()) {
    LLMBENCH_ASSERT(request.hash_block_size == block_size,
                    "request block hashes were made for another block size");
    return request.block_hashes;
  }
  if (!request.prompt_tokens.empty())
    return block_hashes(request.prompt_tokens, block_size);
  return {};
}

bool RequestSource::follow_up(const ClusterRequest& done, TimeNs done_ns, ClusterRequest& out) {
  (void)done;
  (void)done_ns;
  (void)out;
  return false;
}

// ---- VectorSource ----

VectorSource::VectorSource(std::vector<ClusterRequest> requests) : requests_(std::move(requests)) {
  std::stable_sort(
      requests_.begin(), requests_.end(),
      [](const ClusterRequest& a, const ClusterRequest& b) { return a.arrival_ns < b.arrival_ns; });
}

bool VectorSource::next(ClusterRequest& out) {
  if (next_ >= requests_.size())
    return false;
  out = std::move(requests_[next_++]);
  return true;
}

// ---- conversations ----

TimeNs ThinkTime::after(std::int64_t conversation, std::int64_t turn) const {
  const double mean_ns = mean_ms * 1e6;
  if (!exponential || mean_ns <= 0)
    return static_cast<TimeNs>(std::llround(std::max(mean_ns, 0.0)));
  // The stream of `run`'s conversation driver (loadgen.cpp): one per (conversation, turn).
  const auto key =
      (static_cast<std::uint64_t>(conversation) << 20U) ^ static_cast<std::uint64_t>(turn);
  Rng rng(splitmix64(derive_seed(seed, "think-time") ^ key));
  return static_cast<TimeNs>(std::llround(rng.exponential(1.0 / mean_ns)));
}

ConversationSource::ConversationSource(std::vector<ConversationSpec> conversations, ThinkTime think)
    : conversations_(std::move(conversations)), think_(think) {
  order_.resize(conversations_.size());
  std::iota(order_.begin(), order_.end(), std::size_t{0});
  std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) {
    return conversations_[a].arrival_ns < conversations_[b].arrival_ns;
  });
  for (const auto& c : conversations_) {
    LLMBENCH_ASSERT(!c.turns.empty(), "a conversation needs a turn");
    total_turns_ += static_cast<std::int64_t>(c.turns.size());
  }
}

ClusterRequest ConversationSource::make_turn(std::size_t c, std::int32_t turn,
                                             TimeNs arrival) const {
  const ConversationSpec& spec = conversations_[c];
  ClusterRequest r;
  r.arrival_ns = arrival;
  r.conversation = static_cast<std::int64_t>(c);
  r.turn = turn;
  if (spec.system.tokens > 0)
    r.segments.push_back(spec.system);
  for (std::int32_t j = 0; j + 1 < turn; ++j) {
    const TurnSpec& t = spec.turns[static_cast<std::size_t>(j)];
    r.segments.push_back({.key = t.user_key, .tokens = t.user_tokens});
    // The answer of turn j + 1, as the history sends it back.
    const std::uint64_t answer = splitmix64((static_cast<std::uint64_t>(c) << 24U) ^
                                            static_cast<std::uint64_t>(j) ^ 0x616e73776572ULL);
    r.segments.push_back({.key = answer, .tokens = t.output_len});
  }
  const TurnSpec& now = spec.turns[static_cast<std::size_t>(turn - 1)];
  r.segments.push_back({.key = now.user_key, .tokens = now.user_tokens});
  r.prompt_len = 0;
  for (const auto& s : r.segments) r.prompt_len += s.tokens;
  r.prompt_len = std::max<std::int64_t>(r.prompt_len, 1);
  r.output_len = std::max<std::int64_t>(now.output_len, 1);
  r.input_hash = segments_hash(r.segments);
  return r;
}

bool ConversationSource::next(ClusterRequest& out) {
  if (next_ >= order_.size())
    return false;
  const std::size_t c = order_[next_++];
  out = make_turn(c, 1, conversations_[c].arrival_ns);
  return true;
}

bool ConversationSource::follow_up(const ClusterRequest& done, TimeNs done_ns,
                                   ClusterRequest& out) {
  if (done.conversation < 0)
    return false;
  const auto c = static_cast<std::size_t>(done.conversation);
  if (c >= conversations_.size() ||
      static_cast<std::size_t>(done.turn) >= conversations_[c].turns.size())
    return false;
  out = make_turn(c, done.turn + 1, done_ns + think_.after(done.conversation, done.turn));
  return true;
}

std::vector<ConversationSpec> make_conversations(const ConversationShape& shape) {
  Rng rng(shape.seed, "conversations");
  const auto draw = [&](std::int64_t mean) {
    const auto lo = std::max<std::int64_t>(
        1, static_cast<std::int64_t>(std::llround(static_cast<double>(mean) * (1 - shape.range))));
    const auto hi = std::max<std::int64_t>(
        lo, static_cast<std::int64_t>(std::llround(static_cast<double>(mean) * (1 + shape.range))));
    return rng.uniform_int(lo, hi);
  };
  const std::uint64_t system_key = splitmix64(shape.seed ^ 0x73797374656dULL);  // "system"
  std::vector<ConversationSpec> out;
  out.reserve(static_cast<std::size_t>(std::max<std::int64_t>(shape.count, 0)));
  double t_s = 0;
  for (std::int64_t c = 0; c < shape.count; ++c) {
    ConversationSpec spec;
    t_s += rng.exponential(shape.rate_per_s);
    spec.arrival_ns = static_cast<TimeNs>(std::llround(t_s * 1e9));
    spec.system = {.key = system_key, .tokens = shape.system_tokens};
    for (int j = 0; j < shape.turns; ++j) {
      const std::uint64_t key = splitmix64(shape.seed ^ (static_cast<std::uint64_t>(c) << 16U) ^
                                           static_cast<std::uint64_t>(j) ^ 0x75736572ULL);
      spec.turns.push_back(TurnSpec{.user_key = key,
                                    .user_tokens = draw(shape.user_tokens),
                                    .output_len = draw(shape.output_tokens)});
    }
    out.push_back(std::move(spec));
  }
  return out;
}

// ---- TiledTraceSource ----

TiledTraceSource::TiledTraceSource(std::vector<TraceRequest> rows, std::int64_t count,
                                   double duration_s, std::uint64_t seed)
    : rows_(std::move(rows)), count_(std::max<std::int64_t>(count, 0)) {
  LLMBENCH_ASSERT(!rows_.empty(), "a tiled trace needs rows");
  const TimeNs first = rows_.front().time_ns;
  for (auto& r : rows_) r.time_ns -= first;
  const TimeNs span = rows_.back().time_ns;
  const auto duration_ns = static_cast<TimeNs>(std::llround(std::max(duration_s, 0.0) * 1e9));
  const auto n = static_cast<std::int64_t>(rows_.size());
  const std::int64_t copies = (count_ + n - 1) / n;
  last_copy_rows_ = count_ - (copies - 1) * n;
  Rng rng(seed, "tiled-trace");
  if (duration_ns < span && span > 0)
    scale_ = static_cast<double>(duration_ns) / static_cast<double>(span);
  const double room = scale_ < 1 ? 0.0 : static_cast<double>(duration_ns - span);
  offsets_.reserve(static_cast<std::size_t>(copies));
  for (std::int64_t c = 0; c < copies; ++c) {
    offsets_.push_back(static_cast<TimeNs>(std::llround(rng.uniform(0, 1) * room)));
    heads_.push(Head{.time_ns = offsets_.back(), .copy = c, .row = 0});
  }
}

bool TiledTraceSource::next(ClusterRequest& out) {
  if (heads_.empty())
    return false;
  const Head h = heads_.top();
  heads_.pop();
  const auto n = static_cast<std::int64_t>(rows_.size());
  const auto copies = static_cast<std::int64_t>(offsets_.size());
  const TraceRequest& row = rows_[static_cast<std::size_t>(h.row)];
  out = ClusterRequest{};
  out.arrival_ns = h.time_ns;
  out.prompt_len = std::max<std::int64_t>(row.input_len, 1);
  out.output_len = std::max<std::int64_t>(row.output_len, 1);
  out.input_hash = splitmix64(static_cast<std::uint64_t>(h.copy * n + h.row) ^ 0x74696c65ULL);
  ++handed_;
  const std::int64_t rows_in_copy = h.copy + 1 == copies ? last_copy_rows_ : n;
  if (h.row + 1 < rows_in_copy) {
    const std::int64_t next = h.row + 1;
    const auto t = static_cast<double>(rows_[static_cast<std::size_t>(next)].time_ns) * scale_;
    heads_.push(Head{.time_ns = offsets_[static_cast<std::size_t>(h.copy)] +
                                static_cast<TimeNs>(std::llround(t)),
                     .copy = h.copy,
                     .row = next});
  }
  return true;
}

}  // namespace llmbench::sim
