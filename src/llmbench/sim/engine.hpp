#pragma once
/// @file
/// The discrete-event simulation on a virtual clock (STYLE.md "Simulator", vidur's structure):
/// events are ordered by (time, priority, seq) in ONE comparator (`EventOrder`), each
/// `Event::handle` returns the next events. The engine runs one step at a time: StepStart asks
/// the scheduler for a batch and the execution-time model for its duration; StepEnd applies the
/// step, emits tokens and frees finished requests. Output: the same `metrics::RequestRecord`s as a
/// real run (ns of virtual time; one chunk per emitted token).

#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/scheduler.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::sim {

class Simulation;

/// Event kinds; the enumerator value is the tie-break priority at equal time (lower first):
/// a finished step frees slots before arrivals at the same instant are queued, and the next step
/// starts only after both.
enum class EventKind : std::uint8_t { StepEnd = 0, Arrival = 1, StepStart = 2 };

/// One event on the virtual clock.
struct Event {
  TimeNs time_ns = 0;
  EventKind kind = EventKind::Arrival;
  std::uint64_t seq = 0;      ///< insertion order, assigned by the simulation (last tie-break)
  std::int64_t request = -1;  ///< request index for Arrival
  /// Applies the event and returns the events it causes.
  [[nodiscard]] std::vector<Event> handle(Simulation& sim) const;
};

/// Strict weak order of events: by time, then priority (`EventKind` value), then seq.
/// `before(a, b)` is true when `a` must be handled first; `operator()` is the "later than"
/// predicate `std::priority_queue` needs (so the queue pops the earliest event).
struct EventOrder {
  [[nodiscard]] static bool before(const Event& a, const Event& b) noexcept;
  [[nodiscard]] bool operator()(const Event& a, const Event& b) const noexcept {
    return before(b, a);
  }
};

/// One request to simulate.
struct SimRequest {
  TimeNs arrival_ns = 0;        ///< when the load plan wants it sent
  std::int64_t prompt_len = 1;  ///< input tokens (≥ 1)
  std::int64_t output_len = 1;  ///< output tokens to generate (≥ 1; EOS ignored)
  /// Pseudo token ids for prefix caching; empty = a prompt sharing nothing with others.
  std::vector<std::uint32_t> prompt_tokens;
  bool warmup = false;
};

/// Deterministic pseudo token ids for a prompt text: `count` ids, id i hashing bytes
/// [4i, 4i + 4) of `text` (about one BPE token per 4 bytes, as `workload::estimate_tokens`);
/// positions past the text's end hash (salt, i), so equal text prefixes give equal id prefixes.
std::vector<std::uint32_t> pseudo_tokens(std::string_view text, std::int64_t count,
                                         std::uint64_t salt);

/// How to run the engine.
struct SimOptions {
  SchedulerConfig scheduler;
  SchedulerKind scheduler_kind = SchedulerKind::VllmV1;
  std::int64_t num_gpu_blocks = 0;  ///< KV blocks of the replica (from `plan_memory`)
  std::int64_t block_size = 16;
  std::int64_t max_concurrency = -1;  ///< closed-loop cap on requests in flight; ≤ 0 = none
  bool check_invariants = false;      ///< run `BlockManager::check_invariants` after every step
  bool record_steps = false;          ///< fill `SimResult::steps` (for traces and calibration)
};

/// One engine step, recorded when `SimOptions::record_steps` is set.
struct StepTrace {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  std::int64_t num_seqs = 0;         ///< sequences in the batch
  std::int64_t num_tokens = 0;       ///< tokens computed
  std::int64_t num_decode_seqs = 0;  ///< sequences computing exactly one token with context
  std::int64_t num_waiting = 0;      ///< WAITING after scheduling
  std::int64_t num_preempted = 0;    ///< preempted while forming this batch
  double kv_usage = 0;               ///< block usage after scheduling, 0-1
};

/// Totals of one simulation.
struct SimStats {
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  std::int64_t prefix_queries = 0;
  std::int64_t prefix_hits = 0;
  std::int64_t max_running = 0;
  std::int64_t rejected = 0;  ///< requests that can never fit the KV cache (failed)
  TimeNs end_ns = 0;          ///< virtual time of the last event
  double busy_s = 0;          ///< Σ step times
  double mean_step_tokens = 0;
};

/// Result: one record per request, in request order.
struct SimResult {
  std::vector<metrics::RequestRecord> records;
  SimStats stats;
  std::vector<StepTrace> steps;  ///< empty unless `SimOptions::record_steps`
};

/// The steps as a Chrome trace (`chrome://tracing`, Perfetto): one complete ("X") event per
/// step on track "engine" with its batch composition in `args`, plus "C" counter events for
/// KV usage and waiting requests. Times in µs of virtual time (Trace Event Format).
std::string steps_to_chrome_trace(const std::vector<StepTrace>& steps);

/// The engine. Single-threaded; a `Simulation` runs once.
class Simulation {
 public:
  /// Takes ownership of the models; `options.num_gpu_blocks` ≥ 1.
  Simulation(const SimOptions& options, std::unique_ptr<ExecTimeModel> exec_model);
  /// Runs `requests` to completion. A request needing more blocks than the whole cache
  /// (prompt + output) fails at once with `ErrorKind::Http4xx` (vLLM rejects it too).
  SimResult run(std::vector<SimRequest> requests);

  // ---- event handlers (called by `Event::handle`) ----
  std::vector<Event> on_arrival(const Event& event);
  std::vector<Event> on_step_start(const Event& event);
  std::vector<Event> on_step_end(const Event& event);

 private:
  void admit(std::size_t index, TimeNs now);
  [[nodiscard]] std::vector<Event> maybe_start(TimeNs now);

  SimOptions options_;
  std::unique_ptr<ExecTimeModel> exec_model_;
  std::unique_ptr<Scheduler> scheduler_;
  std::vector<SimRequest> requests_;
  std::vector<RequestState> states_;
  std::vector<metrics::RequestRecord> records_;
  std::deque<std::size_t> blocked_;  ///< arrived but over the concurrency cap
  std::int64_t in_flight_ = 0;
  bool busy_ = false;        ///< a step is running or a StepStart is queued
  SchedulerOutput current_;  ///< the step in flight
  SimStats stats_;
  double step_tokens_sum_ = 0;
  std::vector<StepTrace> steps_;
};

}  // namespace llmbench::sim
