#pragma once
/// @file
/// Requests for the cluster simulation (docs/simulator.md "Cluster", workloads): each with its
/// arrival, lengths, conversation and prefix identity, handed over in arrival order by a
/// `RequestSource` so that a day of ten million requests is never held at once. Sources: a list
/// (`VectorSource`, from `simulate`'s datasets), conversations whose turns arrive at the previous
/// turn's end plus think time (`ConversationSource`), and a trace tiled over a longer time to
/// scale its rate up while keeping its shape (`TiledTraceSource`, the Azure conversation trace
/// over a day).

#include "llmbench/core/clock.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <string>
#include <vector>

namespace llmbench::sim {

/// A run of `tokens` prompt tokens named by `key`: equal keys at equal positions are equal text,
/// so two prompts share exactly the blocks of their common segment prefix.
struct PromptSegment {
  std::uint64_t key = 0;
  std::int64_t tokens = 0;
  bool operator==(const PromptSegment&) const = default;
};

/// One request of the cluster workload.
struct ClusterRequest {
  TimeNs arrival_ns = 0;  ///< when it reaches the router (a later turn: set by its source)
  std::int64_t prompt_len = 1;
  std::int64_t output_len = 1;
  /// The input's identity for fingerprint routing (model id + this → bucket → version).
  std::uint64_t input_hash = 0;
  std::int64_t conversation = -1;  ///< −1 = a single request
  std::int32_t turn = 1;           ///< 1-based turn of its conversation
  /// Prefix identity, one of: segments (hashed for any block size), block hashes already made
  /// for `hash_block_size`, or pseudo token ids; all empty = shares nothing.
  std::vector<PromptSegment> segments;
  std::vector<std::uint64_t> block_hashes;
  std::int64_t hash_block_size = 0;
  std::vector<std::uint32_t> prompt_tokens;
  bool warmup = false;
};

/// Chained block hashes of a prompt made of `segments` (whose tokens sum to at least
/// `prompt_len`; tokens past their cover are unique to `salt`): block j's hash covers the pieces
/// of the segments in tokens [0, (j + 1)·block_size), so prompts share a block hash exactly when
/// their segment pieces up to its end are equal. O(blocks + segments).
std::vector<std::uint64_t> segment_block_hashes(const std::vector<PromptSegment>& segments,
                                                std::int64_t prompt_len, std::int64_t block_size,
                                                std::uint64_t salt);

/// The prefix-cache block hashes of `request` for blocks of `block_size` tokens (from whichever
/// identity it carries; `block_hashes` only when made for this block size). `salt` makes a
/// request without identity unique.
std::vector<std::uint64_t> request_block_hashes(const ClusterRequest& request,
                                                std::int64_t block_size, std::uint64_t salt);

/// Hands out requests in arrival order.
class RequestSource {
 public:
  virtual ~RequestSource() = default;
  /// The next request that arrives on its own (not a follow-up turn), arrival times
  /// non-decreasing over calls; false when there are no more.
  virtual bool next(ClusterRequest& out) = 0;
  /// The turn after `done` (which finished at `done_ns`) when its conversation has one: its
  /// arrival is `done_ns` plus think time. False otherwise (the default).
  virtual bool follow_up(const ClusterRequest& done, TimeNs done_ns, ClusterRequest& out);
  /// Requests it will hand out in all (with follow-ups), when known in advance; −1 otherwise.
  [[nodiscard]] virtual std::int64_t size_hint() const { return -1; }
};

/// A list of requests, sorted by arrival (stably).
class VectorSource final : public RequestSource {
 public:
  explicit VectorSource(std::vector<ClusterRequest> requests);
  bool next(ClusterRequest& out) override;
  [[nodiscard]] std::int64_t size_hint() const override {
    return static_cast<std::int64_t>(requests_.size());
  }

 private:
  std::vector<ClusterRequest> requests_;
  std::size_t next_ = 0;
};

/// One turn of a conversation: the user's new message and the answer's length.
struct TurnSpec {
  std::uint64_t user_key = 0;
  std::int64_t user_tokens = 1;
  std::int64_t output_len = 1;
};

/// A conversation: when its first turn arrives, an optional shared prefix (a system prompt whose
/// key other conversations may share) and its turns.
struct ConversationSpec {
  TimeNs arrival_ns = 0;
  PromptSegment system;  ///< tokens 0 = none
  std::vector<TurnSpec> turns;
};

/// Think time between a turn's end and the next turn (docs/workloads.md "Conversations"): fixed,
/// or exponential with that mean drawn per (conversation, turn) from `seed`, as `run` draws it.
struct ThinkTime {
  double mean_ms = 0;
  bool exponential = false;
  std::uint64_t seed = 0;
  /// The think time after `turn` (1-based) of `conversation`, ns.
  [[nodiscard]] TimeNs after(std::int64_t conversation, std::int64_t turn) const;
};

/// Conversations: turn k's prompt is the system prefix, every earlier user message and answer
/// (the answer as a segment of its own, keyed by conversation and turn) and the new message, so
/// a replica that served turn k − 1 holds turn k's prefix. Turn 1 arrives at the conversation's
/// arrival, turn k + 1 at turn k's end plus think time.
class ConversationSource final : public RequestSource {
 public:
  ConversationSource(std::vector<ConversationSpec> conversations, ThinkTime think);
  bool next(ClusterRequest& out) override;
  bool follow_up(const ClusterRequest& done, TimeNs done_ns, ClusterRequest& out) override;
  [[nodiscard]] std::int64_t size_hint() const override { return total_turns_; }

 private:
  /// The request of turn `turn` (1-based) of conversation `c`.
  [[nodiscard]] ClusterRequest make_turn(std::size_t c, std::int32_t turn, TimeNs arrival) const;
  std::vector<ConversationSpec> conversations_;
  std::vector<std::size_t> order_;  ///< conversations by first arrival
  std::size_t next_ = 0;
  ThinkTime think_;
  std::int64_t total_turns_ = 0;
};

/// Synthetic conversations with lengths drawn uniformly in [mean·(1 − range), mean·(1 + range)]
/// and first turns arriving as a Poisson process, for routing studies: `count` conversations of
/// `turns` turns, a `system_tokens` prefix shared by all (0 = none).
struct ConversationShape {
  std::int64_t count = 1000;
  int turns = 4;
  std::int64_t system_tokens = 0;
  std::int64_t user_tokens = 256;
  std::int64_t output_tokens = 128;
  double range = 0.5;
  double rate_per_s = 10;  ///< first turns per second (Poisson)
  std::uint64_t seed = 0;
};
std::vector<ConversationSpec> make_conversations(const ConversationShape& shape);

/// One row of a request trace: when, and the prompt and output lengths (the fields of
/// `workload::TraceRow` the tiling needs; the sim module does not read trace files).
struct TraceRequest {
  TimeNs time_ns = 0;
  std::int64_t input_len = 1;
  std::int64_t output_len = 1;
};

/// A trace scaled up by tiling: `count` requests made of copies of the trace's rows (lengths and
/// relative times kept), copy c shifted by a seeded offset uniform in [0, duration − trace
/// span], the copies merged in time order. The rate grows with the copies while each copy keeps
/// the trace's burstiness; every request's prompt is unique (no shared prefix: the trace has
/// none). When `duration_s` is shorter than the trace's span the trace's times are compressed
/// to it.
class TiledTraceSource final : public RequestSource {
 public:
  TiledTraceSource(std::vector<TraceRequest> rows, std::int64_t count, double duration_s,
                   std::uint64_t seed);
  bool next(ClusterRequest& out) override;
  [[nodiscard]] std::int64_t size_hint() const override { return count_; }

 private:
  struct Head {
    TimeNs time_ns = 0;
    std::int64_t copy = 0;
    std::int64_t row = 0;
    bool operator>(const Head& o) const noexcept {
      return time_ns != o.time_ns ? time_ns > o.time_ns : copy > o.copy;
    }
  };
  std::vector<TraceRequest> rows_;
  std::vector<TimeNs> offsets_;  ///< per copy
  std::int64_t count_ = 0;
  std::int64_t last_copy_rows_ = 0;
  double scale_ = 1;
  std::int64_t handed_ = 0;
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads_;
};

}  // namespace llmbench::sim
