#pragma once
/// @file
/// The serving engine and its virtual-time driver. `EngineCore` is the online engine (requests
/// in, one step at a time: the scheduler forms a batch, the execution-time model prices it, the
/// step's end emits tokens), shared by `Simulation` and the real-time server
/// (`server::RealtimeEngine`). `Simulation` is the discrete-event run on a virtual clock
/// (microsoft/vidur's structure; docs/simulator.md "Structure"): events are ordered by (time,
/// priority, seq) in ONE comparator (`EventOrder`), each `Event::handle` appends the next events.
/// With data parallelism
/// (`SimOptions::data_parallel_size` > 1) the simulation runs that many `EngineCore` replicas that
/// step independently; step events carry their replica. Output: the same
/// `metrics::RequestRecord`s as a real run (ns of virtual time; one chunk per emitted token).

#include "llmbench/core/clock.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/metrics/token_runs.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/scheduler.hpp"
#include "llmbench/sim/slot_cache.hpp"

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace llmbench::sim {

class Simulation;

/// Event kinds; the enumerator value is the tie-break priority at equal time (lower first):
/// a finished step frees slots before arrivals at the same instant are queued, and the next step
/// starts only after both.
/// An `Enqueue` (a request reaching the engine after its API overhead) follows the arrivals
/// and precedes the step that may take it.
enum class EventKind : std::uint8_t { StepEnd = 0, Arrival = 1, Enqueue = 2, StepStart = 3 };

/// One event on the virtual clock.
struct Event {
  TimeNs time_ns = 0;
  EventKind kind = EventKind::Arrival;
  std::uint64_t seq = 0;      ///< insertion order, assigned by the simulation (last tie-break)
  std::int64_t request = -1;  ///< request index for Arrival and Enqueue
  std::int32_t replica = 0;   ///< engine replica of StepStart / StepEnd (0 … dp − 1)
  /// Applies the event and appends the events it causes to `out` (not cleared; the caller
  /// reuses one buffer, so handling allocates nothing once it has grown).
  void handle(Simulation& sim, std::vector<Event>& out) const;
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
  /// Prefix-cache block hashes given directly (`synthetic_block_hashes`); when non-empty they are
  /// used instead of hashing `prompt_tokens`.
  std::vector<std::uint64_t> block_hashes;
};

/// Deterministic pseudo token ids for a prompt text: `count` ids, id i hashing bytes
/// [4i, 4i + 4) of `text` (about one BPE token per 4 bytes, as `estimate_text_tokens` counts ASCII
/// text); positions past the text's end hash (salt, i), so equal text prefixes give equal id
/// prefixes.
std::vector<std::uint32_t> pseudo_tokens(std::string_view text, std::int64_t count,
                                         std::uint64_t salt);

/// The prefix-cache token ids of a prompt as the engine sees it: `token_ids` (an id prompt, or a
/// tokenizer's ids), then `pseudo_tokens(text, prompt_len − token_ids.size(), salt)` for the rest
/// of its `prompt_len` tokens (nothing more when the ids cover it). The one rule of `simulate`
/// (workload samples) and the real-time server (HTTP requests), so both hash equal prompts alike.
std::vector<std::uint32_t> prompt_cache_ids(std::span<const std::uint32_t> token_ids,
                                            std::string_view text, std::int64_t prompt_len,
                                            std::uint64_t salt);

/// Prefix-cache block hashes of a synthetic prompt without materialized ids: `prompt_len`
/// tokens whose first `shared_prefix_len` are common to every prompt (`--random-prefix-len`) and
/// whose rest is identified by `content_key` (equal keys = equal prompts, e.g. the corpus word a
/// random prompt starts at). One chained 64-bit hash per full block of `block_size` (> 0): block
/// j's hash depends on blocks 0 … j, and a block ending inside the shared prefix does not depend
/// on the key, so prompts share exactly their common full blocks, as `block_hashes` of their
/// ids would. O(prompt_len / block_size).
std::vector<std::uint64_t> synthetic_block_hashes(std::int64_t prompt_len,
                                                  std::int64_t shared_prefix_len,
                                                  std::uint64_t content_key,
                                                  std::int64_t block_size);

/// The costs of serving a request that are not engine steps (docs/simulator.md "TTFT"). Zero
/// unless a calibration sets them (`sim::Calibration`): a datasheet says nothing about them.
struct ServingOverheads {
  /// α, µs: from the client's send to the engine's WAITING queue (HTTP parsing, tokenization,
  /// the API server's hand-over to the engine). Adds to TTFT and end-to-end latency, not TPOT;
  /// in a closed loop it also delays the engine's next arrival. The simulation draws each
  /// request's overhead uniformly from [0.5·α, 1.5·α] (a hash of its index: deterministic), so
  /// arrivals are not locked to the step grid.
  double api_overhead_us = 0;
  /// W, µs: extra time of the engine's first step (warm-up: kernels, graphs and allocations that
  /// the first batch of a run pays once). Falls on the first wave of a closed loop.
  double first_step_overhead_us = 0;
};

/// Configuration of one engine (one model replica), shared by the virtual-time `Simulation` and
/// the real-time driver of `llmbench serve` (part of `EngineSpec`, engine_spec.hpp).
struct EngineConfig {
  SchedulerConfig scheduler;
  SchedulerKind scheduler_kind = SchedulerKind::VllmV1;
  std::int64_t num_gpu_blocks = 0;  ///< KV blocks of the replica (≥ 1)
  std::int64_t block_size = 16;
  bool check_invariants = false;  ///< run `BlockManager::check_invariants` after every step
  /// Largest prompt + output of one request, tokens (llama.cpp's context per slot); 0 = only the
  /// whole KV cache limits it. A longer request is rejected (`EngineCore::fits`).
  std::int64_t max_request_tokens = 0;
  ServingOverheads overheads;
  /// llama.cpp's slots over one unified KV cache (the llamacpp family): `max_num_seqs` slots keep
  /// their last request's cells while idle (`SlotCache`), and each step's attention window
  /// counts them (`BatchSums::retained_cells`). Off: nothing is kept after a request.
  bool slot_cache = false;
  /// With `slot_cache`: the cells the slots hold when the engine starts, least recently used
  /// first (a server that served earlier runs; `SlotCache`); empty = a fresh server.
  std::vector<std::int64_t> initial_slot_cells;
};

/// How to run the engine in virtual time: the replica's configuration and the run's own options.
struct SimOptions {
  EngineConfig engine;                ///< every replica's configuration (`EngineSpec::engine`)
  std::int64_t max_concurrency = -1;  ///< closed-loop cap on requests in flight; ≤ 0 = none
  /// Data-parallel engine replicas (vLLM `--data-parallel-size`), each an `EngineCore` with its
  /// own scheduler and `engine.num_gpu_blocks` KV blocks. An admitted request goes to the
  /// least-loaded replica (fewest RUNNING + WAITING; ties → lowest index), as vLLM's DP
  /// coordinator balances by queue length. ≥ 1.
  int data_parallel_size = 1;
  bool record_steps = false;  ///< fill `SimResult::steps` (for traces and calibration)
  /// Keep steady decodes implicit (`EngineCore::enable_decode_lane`, decode_lane.hpp): the same
  /// results, less work per running request and step. Off = every sequence of every batch is
  /// formed and applied one by one (the reference the lane is tested against). The only switch
  /// of the lane: the real-time server never turns it on.
  bool decode_lane = true;
  /// Write each request's token times into its record's `chunks` (one `Chunk` per token, as
  /// `run` records them). Off: the records' chunks stay empty and `SimResult::tokens` alone holds
  /// the token times (`metrics::summarize(records, tokens, …)` summarizes them without the 24
  /// bytes per token; `metrics::expand_token_runs` writes the chunks later if wanted).
  bool expand_chunks = true;
  /// No request rate (`run`'s closed loop): a record's `scheduled_ns` is the time it got its
  /// slot, as `run` plans a closed loop (docs/metrics.md, the per-request record). Off:
  /// `scheduled_ns` is the arrival and `slot_ns` − `scheduled_ns` the wait behind
  /// `max_concurrency`.
  bool closed_loop = false;
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
  std::int64_t num_running = 0;      ///< RUNNING after scheduling
  std::int64_t prefix_queries = 0;   ///< prefix-cache tokens queried while forming this batch
  std::int64_t prefix_hits = 0;      ///< of which found cached
  std::int32_t replica = 0;          ///< data-parallel replica that ran the step
};

/// Engine state over one window of time, from the step traces (simulate's "over time" table;
/// the same quantities `llmbench serve` exposes as vLLM gauges and counters in /metrics).
struct TimelineBucket {
  TimeNs start_ns = 0;
  TimeNs end_ns = 0;
  std::int64_t steps = 0;  ///< steps that started in the window
  /// Share of the window the engine spent in steps: Σ over steps of their time inside the
  /// window / (window length × replicas), 0–1 by definition.
  double busy_fraction = 0;
  double mean_kv_usage = 0;  ///< step-time-weighted KV usage over the window's steps
  double max_kv_usage = 0;
  double mean_running = 0;  ///< step-time-weighted RUNNING requests
  std::int64_t max_waiting = 0;
  std::int64_t preemptions = 0;
  std::int64_t prefix_queries = 0;  ///< tokens
  std::int64_t prefix_hits = 0;     ///< tokens
  /// prefix_hits / prefix_queries, 0 when nothing was queried.
  [[nodiscard]] double prefix_hit_rate() const noexcept {
    return prefix_queries > 0
               ? static_cast<double>(prefix_hits) / static_cast<double>(prefix_queries)
               : 0.0;
  }
};

/// Buckets `steps` (in start order) into windows of `bucket_ns` (> 0) from time 0 up to the
/// last step's end; each step is counted in the window where it starts (its time weight is its
/// whole duration; its busy time is split over the windows it spans). Empty windows are kept
/// (zeros) so the series is evenly spaced. With several data-parallel replicas their steps overlap:
/// `busy_fraction` is then the replicas' mean (the replicas are those the steps name) and the means
/// are over all replicas' steps.
std::vector<TimelineBucket> summarize_timeline(const std::vector<StepTrace>& steps,
                                               TimeNs bucket_ns);

/// Totals of one simulation.
struct SimStats {
  std::int64_t steps = 0;
  std::int64_t preemptions = 0;
  std::int64_t prefix_queries = 0;
  std::int64_t prefix_hits = 0;
  std::int64_t max_running = 0;          ///< RUNNING after scheduling, summed over replicas
  std::int64_t rejected = 0;             ///< requests that can never fit the KV cache (failed)
  std::int64_t swap_outs = 0;            ///< preemptions by swap to CPU (⊂ preemptions)
  std::int64_t swap_ins = 0;             ///< requests brought back from CPU
  std::int64_t swap_out_blocks = 0;      ///< Σ blocks copied GPU→CPU
  std::int64_t swap_in_blocks = 0;       ///< Σ blocks copied CPU→GPU
  std::int64_t recompute_fallbacks = 0;  ///< swap wanted but the CPU pool was full: recomputed
  int replicas = 1;                      ///< data-parallel replicas simulated
  TimeNs end_ns = 0;                     ///< virtual time of the last event
  double busy_s = 0;                     ///< Σ step times
  double mean_step_tokens = 0;
};

/// Result: one record per request, in request order.
struct SimResult {
  std::vector<metrics::RequestRecord> records;
  /// Every request's token times as runs over the replicas' step-end times (grid r = replica r;
  /// a request emits one token at the end of each step it samples in). Always filled; with
  /// `SimOptions::expand_chunks` the same times are also in `records[i].chunks`.
  metrics::TokenRuns tokens;
  SimStats stats;
  std::vector<StepTrace> steps;  ///< empty unless `SimOptions::record_steps`
};

/// The steps as a Chrome trace (`chrome://tracing`, Perfetto): one complete ("X") event per
/// step on track "engine" with its batch composition in `args`, plus "C" counter events for
/// KV usage and waiting requests. Times in µs of virtual time (Trace Event Format). Replica r's
/// steps go on thread r + 1 ("engine r" when there are several).
std::string steps_to_chrome_trace(const std::vector<StepTrace>& steps);

/// A request that reached its output length in a step.
struct FinishedRequest {
  std::int64_t id = 0;
  std::int64_t output_tokens = 0;
  std::int64_t cached_tokens = -1;  ///< prefix-cache hit at first scheduling (tokens)
  std::int64_t preemptions = 0;
};

/// What a finished step produced (`EngineCore::end_step`).
struct StepOutcome {
  std::vector<std::int64_t> emitted;      ///< ids that got one new token, in batch order
  std::vector<FinishedRequest> finished;  ///< ids done (their state is released)
  /// Decode lane only (`EngineCore::enable_decode_lane`): requests that emitted one token in
  /// each of steps first … last (step numbers count `end_step` calls from 0) and left the lane
  /// while this step was formed or applied; their tokens are not in `emitted`.
  std::vector<LaneRun> lane_runs;
};

/// The engine's online core: requests come in with `add_request`, and time advances one step at
/// a time (`begin_step` → duration → `end_step`), driven by a virtual clock (`Simulation`) or a
/// real one (`server::RealtimeEngine`). Not thread-safe; one driver thread.
class EngineCore {
 public:
  /// Shares the (pure, immutable) model, so replicas can use one; `config.num_gpu_blocks` ≥ 1.
  EngineCore(const EngineConfig& config, std::shared_ptr<const ExecTimeModel> exec_model);
  EngineCore(const EngineCore&) = delete;
  EngineCore& operator=(const EngineCore&) = delete;

  /// Turns on the scheduler's decode lane (decode_lane.hpp) when the scheduler has one and the
  /// model prices from `BatchSums`; then `StepOutcome::emitted` lists only the explicit part and
  /// the lane's tokens come as `StepOutcome::lane_runs`. Only before the first request, and not
  /// with `abort` (a lane member's tokens are reported when its stay ends, so an abort could not
  /// withdraw the in-flight step's token): for the virtual-time `Simulation`, which never
  /// aborts. Returns whether the lane is on.
  bool enable_decode_lane();
  /// True when prompt + output fit the whole KV cache (ceil((prompt + output) / block_size) ≤
  /// blocks) and, with chunked prefill off, one step's token budget (a request recomputed after
  /// a preemption must fit a single prefill; vLLM requires max_num_batched_tokens ≥
  /// max_model_len then); a request that does not must be rejected (vLLM rejects it too).
  /// Thread-safe.
  [[nodiscard]] bool fits(std::int64_t prompt_len, std::int64_t output_len) const noexcept;
  /// Queues a request in WAITING at time `now_ns` (non-decreasing over calls; the scheduler's
  /// `set_now`). `id` must be unique among live requests; lengths ≥ 1 and the request must
  /// `fit`. `prompt_tokens` (pseudo ids) give its prefix-cache block hashes when prefix caching
  /// is on; empty = shares nothing.
  void add_request(TimeNs now_ns, std::int64_t id, std::int64_t prompt_len, std::int64_t output_len,
                   const std::vector<std::uint32_t>& prompt_tokens);
  /// As `add_request`, with the prompt's prefix-cache block hashes given (`block_hashes` or
  /// `synthetic_block_hashes` for this engine's block_size) instead of token ids.
  void add_request_hashed(TimeNs now_ns, std::int64_t id, std::int64_t prompt_len,
                          std::int64_t output_len, std::vector<std::uint64_t> hashes);
  /// As `add_request_hashed` for a request whose prompt KV was computed elsewhere (the decode
  /// side of PD disaggregation): its `prompt_len` tokens count as computed at its first
  /// admission (`RequestState::num_external_tokens`) and its first output token as sampled, so
  /// its first step decodes token 2. `output_len` ≥ 2. Only with the `vllm-v1` scheduler.
  void add_request_prefilled(TimeNs now_ns, std::int64_t id, std::int64_t prompt_len,
                             std::int64_t output_len, std::vector<std::uint64_t> hashes);
  /// Tokens of the longest cached prefix of a prompt of `num_tokens` tokens with these block
  /// hashes (`BlockManager::cached_prefix_blocks` × block size); changes nothing.
  [[nodiscard]] std::int64_t cached_prefix_tokens(const std::vector<std::uint64_t>& hashes,
                                                  std::int64_t num_tokens) const;
  /// The steady steps that follow (`Scheduler::steady_run`); none while a step is in flight or
  /// without the decode lane.
  [[nodiscard]] SteadyRun steady_run() const;
  /// Applies `k` ≤ `steady_run().steps` steady steps without forming them (`Scheduler::
  /// skip_steady_steps`), counting them as `k` steps of `busy_s` seconds in all. Each would emit
  /// one token per lane member; they are reported as lane runs when the members leave the lane.
  void skip_steady_steps(std::int64_t k, double busy_s);
  /// Batch sums of the step begun last (valid after `begin_step` returned a duration).
  [[nodiscard]] const BatchSums& last_sums() const noexcept { return current_.sums; }
  /// Forms the next batch at `now_ns` (scheduler) and prices it (`price_step`: execution-time
  /// model plus swap copies): the step's duration in ns (≥ 1), or nullopt when nothing can run
  /// (the engine is idle). Must not be called while a step is in flight.
  std::optional<TimeNs> begin_step(TimeNs now_ns);
  /// Applies the step in flight: tokens emitted, requests finished (their blocks freed).
  /// Requests aborted during the step are left out of the outcome and released now. The
  /// reference stays valid until the next `end_step` (its storage is reused).
  const StepOutcome& end_step();
  /// Aborts live request `id` (client gone): removed from the scheduler's queues and its KV
  /// blocks freed (`Scheduler::abort`). While a step is in flight the abort is applied when the
  /// step ends, and the request's output of that step is dropped. Returns false when `id` is not
  /// live (unknown or already finished). Not allowed with the decode lane
  /// (`enable_decode_lane`).
  bool abort(std::int64_t id);
  /// Requests added and not yet finished or aborted.
  [[nodiscard]] std::size_t num_live() const noexcept { return live_.size(); }

  [[nodiscard]] bool in_step() const noexcept { return in_step_; }
  /// Trace of the step begun last (start, end, batch, gauges after scheduling).
  [[nodiscard]] const StepTrace& last_step() const noexcept { return last_; }
  /// Ids that the step begun last scheduled for the first time, in batch order (vLLM's
  /// "scheduled" instant of a request: its queue time ends at that step's start). Exact for every
  /// scheduler; a preempted request scheduled again is not listed again.
  [[nodiscard]] const std::vector<std::int64_t>& first_scheduled() const noexcept {
    return first_scheduled_;
  }
  [[nodiscard]] std::size_t num_running() const { return scheduler_->num_running(); }
  [[nodiscard]] std::size_t num_waiting() const { return scheduler_->num_waiting(); }
  /// KV block usage 0-1 (`BlockManager::usage`).
  [[nodiscard]] double kv_usage() const { return scheduler_->blocks().usage(); }
  [[nodiscard]] const SchedulerStats& scheduler_stats() const { return scheduler_->stats(); }
  [[nodiscard]] const EngineConfig& config() const noexcept { return config_; }
  /// Steps run, Σ step seconds and Σ tokens per step so far.
  [[nodiscard]] std::int64_t steps() const noexcept { return steps_; }
  [[nodiscard]] double busy_s() const noexcept { return busy_s_; }
  [[nodiscard]] double step_tokens_sum() const noexcept { return step_tokens_sum_; }
  /// With `EngineConfig::slot_cache`: the cells each slot keeps, least recently used first
  /// (`SlotCache::cells_by_age`); empty otherwise.
  [[nodiscard]] std::vector<std::int64_t> slot_cells() const;

 private:
  EngineConfig config_;
  std::shared_ptr<const ExecTimeModel> exec_model_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unordered_map<std::int64_t, std::unique_ptr<RequestState>> live_;
  SchedulerOutput current_;                    ///< the step in flight (storage reused)
  StepResult result_;                          ///< storage reused by end_step
  StepOutcome outcome_;                        ///< storage reused by end_step
  std::vector<std::int64_t> deferred_aborts_;  ///< aborted while a step was in flight
  std::vector<std::int64_t> first_scheduled_;  ///< see first_scheduled()
  std::vector<SeqWork> work_;
  std::optional<SlotCache> slots_;  ///< `EngineConfig::slot_cache`
  StepTrace last_;
  bool in_step_ = false;
  bool lane_ = false;  ///< the scheduler runs its decode lane
  std::int64_t steps_ = 0;
  double busy_s_ = 0;
  double step_tokens_sum_ = 0;
};

/// The engine on a virtual clock. Single-threaded; a `Simulation` runs once.
class Simulation {
 public:
  /// Takes ownership of the model (shared by the replicas); `options.num_gpu_blocks` ≥ 1,
  /// `options.data_parallel_size` ≥ 1.
  Simulation(const SimOptions& options, std::unique_ptr<ExecTimeModel> exec_model);
  /// Runs `requests` to completion. A request needing more blocks than the whole cache
  /// (prompt + output) fails at once with `ErrorKind::Http4xx` (vLLM rejects it too).
  SimResult run(std::vector<SimRequest> requests);

  // ---- event handlers (called by `Event::handle`; they append the events they cause) ----
  void on_arrival(const Event& event, std::vector<Event>& out);
  /// A request admitted `api_overhead_us` earlier reaches a replica's WAITING queue.
  void on_enqueue(const Event& event, std::vector<Event>& out);
  void on_step_start(const Event& event, std::vector<Event>& out);
  void on_step_end(const Event& event, std::vector<Event>& out);

 private:
  struct Replica {
    std::unique_ptr<EngineCore> core;
    bool busy = false;              ///< a step is running or a StepStart is queued
    std::int64_t last_running = 0;  ///< RUNNING after its last scheduling
  };
  void admit(std::size_t index, TimeNs now, std::vector<Event>& out);
  /// Hands request `index` to the least-loaded replica at `now` and starts it if idle.
  void enqueue(std::size_t index, TimeNs now, std::vector<Event>& out);
  void maybe_start(std::size_t replica, TimeNs now, std::vector<Event>& out);
  /// Least-loaded replica: fewest RUNNING + WAITING, ties → lowest index.
  [[nodiscard]] std::size_t pick_replica() const;

  /// Records that `request` emitted one token in each of steps `first` … `last` of `replica`:
  /// extends its open run when they follow it, else closes that run and opens a new one. Token
  /// times are kept as runs over the replicas' step-end times (`metrics::TokenRuns`), not a
  /// scattered store per token (docs/performance-history.md "Simulator": those missed
  /// the cache once per 2.7 tokens).
  void add_token_steps(std::size_t request, std::int32_t replica, std::int64_t first,
                       std::int64_t last);
  /// Appends `request`'s open run, if any, to `tokens_.runs` (the caller then replaces or drops
  /// it).
  void close_run(std::size_t request);
  /// Closes the open runs into `tokens_` and, with `expand_chunks`, writes the records' chunks.
  void finish_runs();

  SimOptions options_;
  std::vector<Replica> replicas_;
  /// A request's open run: steps first … last of `replica` (last = −1: none yet).
  struct OpenRun {
    std::int64_t first = 0;
    std::int64_t last = -1;
    std::int32_t replica = 0;
  };
  /// Closed runs in order of closing (each request's in time order), and per replica the end
  /// time of each step (`grids`).
  metrics::TokenRuns tokens_;
  std::vector<OpenRun> open_run_;  ///< per request
  std::vector<SimRequest> requests_;
  std::vector<metrics::RequestRecord> records_;
  std::deque<std::size_t> blocked_;  ///< arrived but over the concurrency cap
  std::int64_t in_flight_ = 0;
  std::int64_t running_total_ = 0;  ///< Σ replicas' last_running
  SimStats stats_;
  std::vector<StepTrace> steps_;
};

}  // namespace llmbench::sim
