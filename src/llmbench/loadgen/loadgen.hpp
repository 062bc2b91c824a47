#pragma once
/// @file
/// Open- and closed-loop load drivers that send requests to an OpenAI-compatible endpoint and
/// fill one `RequestRecord` per request (docs/metrics.md, the per-request record). The whole
/// schedule is drawn before the run from the seed (MLPerf LoadGen habit); a dispatcher thread
/// releases requests at their scheduled times into worker threads, each with its own io_context,
/// connection pool, SSE parser and JSON decoder (wrk2 habit: nothing shared on the hot path).

#include "llmbench/core/name_table.hpp"
#include "llmbench/http/client.hpp"
#include "llmbench/metrics/record.hpp"
#include "llmbench/protocol/openai.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"
#include "llmbench/workload/arrivals.hpp"
#include "llmbench/workload/dataset.hpp"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::loadgen {

/// How the think time between two turns of a conversation is drawn (`--think-time-dist`).
enum class ThinkTime : std::uint8_t {
  Fixed,        ///< exactly `LoadOptions::think_time_ms`
  Exponential,  ///< exponential with mean `think_time_ms`, drawn per (conversation, turn)
};

/// The one table of think-time names: parsing, messages and `--help`.
inline constexpr auto kThinkTimes = make_name_table<ThinkTime>({
    {ThinkTime::Fixed, "fixed"},
    {ThinkTime::Exponential, "exponential"},
});

/// Parses a `--think-time-dist` name of `kThinkTimes`; throws `Exception` naming the flag and
/// the valid names otherwise.
ThinkTime parse_think_time(std::string_view name);

/// The name of `kind` in `kThinkTimes`.
std::string_view to_string(ThinkTime kind) noexcept;

/// One process's share of a load spread over several (`mpirun`, docs/distributed.md). Rank
/// `rank` of `ranks` sends the warm-ups and measured requests whose index i in the plan has
/// i mod ranks == rank, at the plan's times, so the ranks together send exactly the one plan;
/// the later turns of a conversation stay with the rank of its first turn. A share's records
/// carry `rank`; their ids are the plan's indices (later turns: `kTurnIdBase` + k·ranks + rank).
struct RankShare {
  int rank = 0;
  int ranks = 1;  ///< 1 = the whole plan (a single process)
  /// Called once, on the calling thread of `run_load`, when the warm-ups are done, with this
  /// process's steady clock now (ns); returns the steady-clock instant at which every rank
  /// begins the measured phase (blocking: it waits for the other ranks). Empty = at once.
  std::function<TimeNs(TimeNs)> agree_start;

  /// First id of the later turns of conversations in a share (above any plan index).
  static constexpr std::int64_t kTurnIdBase = std::int64_t{1} << 40;
  [[nodiscard]] bool spread() const noexcept { return ranks > 1; }
  /// Whether the request of plan index `index` is this rank's.
  [[nodiscard]] bool mine(std::int64_t index) const noexcept {
    return ranks <= 1 || index % ranks == rank;
  }
};

/// Load and request settings for one run (validated by the CLI before use).
struct LoadOptions {
  http::Url url;         ///< `--base-url`
  std::string endpoint;  ///< path after the URL prefix, e.g. "/v1/completions"
  protocol::Backend backend = protocol::Backend::OpenAI;
  /// The request every body is built from, set once from the flags: `model` (`--model`, or the
  /// first of /v1/models), `chat` (send `messages`), `stream`, the usage options, the sampling
  /// knobs and `--extra-body`. `run_load` fills in each sample's prompt and `max_tokens`.
  protocol::GenRequest request;
  http::ClientOptions client;         ///< headers (API key inside), TLS, timeouts
  std::int64_t num_prompts = 0;       ///< measured requests (ignored when `duration_s` > 0)
  std::int64_t num_warmups = 0;       ///< sent first, recorded with warmup=true, not measured
  std::int64_t max_concurrency = -1;  ///< closed-loop cap; -1 = none
  double request_rate = std::numeric_limits<double>::infinity();  ///< open-loop req/s; inf = none
  double burstiness = 1.0;                                        ///< gamma shape of inter-arrivals
  double duration_s = 0;  ///< > 0: send until this many seconds, then drain
  /// With `duration_s`: requests still in flight this long after the duration ends are
  /// cancelled (recorded as `ErrorKind::Cancelled`), so the whole run is bounded by
  /// `duration_s` + this grace (at most `drain_timeout_s`).
  double duration_grace_s = 10;
  double drain_timeout_s = 600;  ///< after the last send, wait this long for stragglers
  std::uint64_t seed = 0;
  int client_threads = 0;            ///< worker threads; 0 = hardware concurrency
  std::vector<std::string> secrets;  ///< credential values to redact from recorded messages
  bool prewarm_connections = true;   ///< closed loop: open min(cap, prompts) connections first
  /// `--multi-turn` (docs/workloads.md "Conversations"): each sample with `Sample::turns` is a
  /// conversation and `num_prompts` counts conversations. Turn 1 goes at the conversation's
  /// arrival (open loop) or when a slot frees (closed loop); when turn k completes, turn k+1 is
  /// scheduled its think time after turn k's `done`, with the history as `messages` (every
  /// earlier user turn and, as assistant turns, the answer text streamed back). A failed turn
  /// ends its conversation. Needs a chat request (`request.chat`). Every turn in flight holds a
  /// `max_concurrency` slot; none waits for a slot during its think time.
  bool multi_turn = false;
  ThinkTime think_time = ThinkTime::Fixed;  ///< `--think-time-dist`
  /// `--tokenizer`: count each response's output tokens locally (`RecordingHandler::
  /// count_output_with`) and record exact prompt counts (`input_tokens_local`, completions only).
  /// Must outlive `run_load`; null = no local counting.
  const tokenizer::Tokenizer* tokenizer = nullptr;
  /// `--ramp-up-strategy` with its start and end rates (workload::ArrivalOptions): an open loop
  /// whose rate moves over the measured requests; `request_rate` is then unused.
  workload::RampUp ramp_up = workload::RampUp::None;
  double ramp_up_start_rps = 0;
  double ramp_up_end_rps = 0;
  double think_time_ms = 0;  ///< `--think-time-ms`: mean think time between turns (ms), >= 0
  /// The share of the plan this process sends (`max_concurrency` is then this rank's part of
  /// the cap, `num_prompts` still the whole plan's).
  RankShare share;
};

/// Live counters for a progress display; read from any thread.
struct Progress {
  /// Measured requests planned (0 = unknown, duration); multi-turn: every turn of every planned
  /// conversation, an upper bound (a failed turn ends its conversation).
  std::atomic<std::int64_t> total{0};
  std::atomic<std::int64_t> sent{0};
  std::atomic<std::int64_t> done{0};  ///< measured requests finished (ok or not)
  std::atomic<std::int64_t> failed{0};
  std::atomic<std::int64_t> output_tokens{0};
};

/// How often at least the run's writer thread hands finished records to `RecordSink::flush`:
/// a `kill -9` loses only records finished within about this long before it.
inline constexpr std::chrono::milliseconds kRecordFlushInterval{50};

/// Where finished records go while the run goes (the per-request JSONL). Both functions are
/// called on the run's one writer thread, never concurrently and never on a worker's event loop,
/// so formatting and writing delay no stream; neither may throw. Either may be empty.
struct RecordSink {
  /// One finished record (warm-ups included), its chunk tokens assigned, in the order the
  /// workers finished them.
  std::function<void(const metrics::RequestRecord&)> write;
  /// After each batch of `write`s: at least every `kRecordFlushInterval` while records come,
  /// and once at the end of the run.
  std::function<void()> flush;
};

/// How the conversations of a multi-turn run ended (all zero in single-turn runs). Every
/// started conversation is in exactly one of the three end states once `run_load` returns.
struct ConversationCounts {
  std::int64_t started = 0;           ///< conversations whose turn 1 was sent
  std::int64_t completed = 0;         ///< every turn completed
  std::int64_t ended_by_failure = 0;  ///< a turn failed (not cancelled): the rest was not sent
  /// Stopped by `--duration`, an interrupt or the end-of-run drain: a turn was cancelled or the
  /// next turn was not sent.
  std::int64_t cut = 0;
};

/// What a run produced.
struct LoadResult {
  /// Every request sent, by `done_ns` (ties by id): kept per worker and merged after they join.
  std::vector<metrics::RequestRecord> records;
  TimeNs run_start_steady_ns = 0;  ///< absolute steady-clock zero of all record times
  bool interrupted = false;        ///< stopped by `stop` before the plan finished
  std::uint64_t connections_opened = 0;
  /// The most connections open at once (`http::ConnectionTally::peak`): the local ports held.
  std::int64_t ports_in_use_peak = 0;
  /// Failed connects by cause (`http::failure_cause`: an errno name such as ECONNREFUSED).
  std::map<std::string, std::int64_t> connect_errors;
  /// Every worker's event-loop lag samples, ms, one every 20 ms of each worker's loop
  /// (detail/loop_lag.hpp): how long a ready event waited behind the loop's other work.
  std::vector<float> loop_lag_ms;
  std::int64_t planned = 0;          ///< measured requests in the plan
  TimeNs measure_start_ns = 0;       ///< run-relative time the measured phase began
  TimeNs schedule_span_ns = 0;       ///< last scheduled arrival − measure start (open loop)
  ConversationCounts conversations;  ///< multi-turn runs
};

/// Runs the load: warm-ups (concurrently, up to the concurrency cap), then the measured phase.
/// `samples` are cycled in order. Each finished record gets its chunk tokens assigned
/// (`metrics::assign_chunk_tokens`) on its worker and is kept there; a copy goes to `sink` on
/// the writer thread. `stop`, when it becomes true (e.g. on SIGINT), ends dispatch and cancels
/// in-flight requests, which are recorded as `ErrorKind::Cancelled`. Throws `Exception` only for
/// setup errors (bad options, empty samples).
LoadResult run_load(const LoadOptions& options, const std::vector<workload::Sample>& samples,
                    const RecordSink& sink, Progress* progress = nullptr,
                    const std::atomic<bool>* stop = nullptr);

}  // namespace llmbench::loadgen
