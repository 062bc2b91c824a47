#pragma once
/// @file
/// One session behind `run`, `simulate`, `sweep`, `doctor` and the coming `calibrate`
/// (docs/architecture.md, "The application floor"; the model is llama.cpp's server-context, one
/// engine library behind every route): `Session::run` runs one `run` point against a target the
/// session keeps, `Session::simulate` one simulated point, both over the one `analyse_run`, and
/// each returns a typed `RunResult`. A point's steps: workload (tokenizer, template, samples,
/// owned by the session), target (the built-in server started once, TLS options checked, model
/// discovered), schedule (a value computed from the plan before the load), load, analysis,
/// outputs.

#include "llmbench/app/plan.hpp"
#include "llmbench/app/result.hpp"
#include "llmbench/loadgen/loadgen.hpp"
#include "llmbench/server/server.hpp"
#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"
#include "llmbench/workload/dataset.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::app {

/// Watches a point while it goes (`cli`'s live progress line and console table). Called on the
/// thread that called `Session::run` or `simulate`.
class LoadObserver {
 public:
  LoadObserver() = default;
  virtual ~LoadObserver() = default;
  LoadObserver(const LoadObserver&) = delete;
  LoadObserver& operator=(const LoadObserver&) = delete;
  LoadObserver(LoadObserver&&) = delete;
  LoadObserver& operator=(LoadObserver&&) = delete;

  /// Right before the load: `progress` is updated by the load's threads until `load_finished`.
  virtual void load_started(const loadgen::Progress& progress) = 0;
  /// Right after the load.
  virtual void load_finished() = 0;
  /// Once the point is analysed, before its files are written (the console table goes here,
  /// ahead of the lines that say where the files went).
  virtual void analysed(const RunResult& result) = 0;
};

/// The requests of one point, fixed before its load runs: the samples (warm-ups first), how
/// many are measured, and whether they go at planned times. Loadgen draws the arrival times of
/// an open loop from the plan's seed (or takes the samples' own); a launcher that spreads one
/// point over several ranks splits this value, each rank its share, before the load.
struct Schedule {
  std::shared_ptr<const std::vector<workload::Sample>> samples;
  std::int64_t num_prompts = 0;  ///< measured requests (a trace: its rows after the warm-ups)
  std::int64_t num_warmups = 0;
  bool open_loop = false;    ///< `workload::is_open_loop` of the plan and the samples
  bool trace_times = false;  ///< the samples bring their own send times (a trace replay)
};

/// The line `run` logs as it starts, built from what will be sent: "benchmarking URL ENDPOINT
/// with MODEL (N prompts[ + W warm-up]), LOAD[, max concurrency C]", N the schedule's measured
/// requests (a trace: the rows of its window, whatever `--num-prompts` said) or "duration Ds",
/// LOAD the trace's own times, a ramp, or the request rate and burstiness.
std::string run_banner(const RunPlan& plan, const loadgen::LoadOptions& load,
                       const Schedule& schedule);

/// False on the ranks other than 0 of an MPI job (docs/distributed.md): they print and write
/// nothing of a run's or a sweep's own, rank 0 does. True in a single process.
[[nodiscard]] bool leads_output() noexcept;

/// Runs points one after another against one target. Not thread-safe; not movable (the built-in
/// server and the loaded tokenizer are shared with the points it runs). The built-in server is
/// stopped on destruction.
class Session {
 public:
  Session();
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  Session(Session&&) = delete;
  Session& operator=(Session&&) = delete;

  /// Runs one `run` point: loads the workload (kept for later points with the same tokenizer
  /// and dataset; a point with another `--seed` draws its own samples), starts the built-in
  /// server the first time a plan asks for it (later points reuse it), checks the client's TLS
  /// options (a bad `--ca-cert` fails here, at once), discovers the model, opens the outputs,
  /// runs the load (SIGINT / SIGTERM / SIGHUP end it early: `RunResult::interrupted`), analyses
  /// it and writes the results, records, history entry and HTML report the plan asks for.
  /// Throws `Exception` on a bad plan, an unreachable target or an unwritable output. Under an
  /// MPI launcher with several ranks (`dist::World`) the point is spread over them
  /// (docs/distributed.md): rank 0 writes the files; every rank returns the merged records
  /// analysed alike (rank 0 hands them back to the others, so a caller that decides from each
  /// point's result, as `sweep`'s trials and searches do, decides alike on every rank) with rank
  /// 0's exit code; only rank 0's holds the per-rank figures (`RunResult::spread`). A rank that
  /// throws ends the job (MPI_Abort).
  RunResult run(const RunPlan& plan, LoadObserver* observer = nullptr);

  /// Runs one `simulate` point in virtual time: loads the workload, decides open or closed loop
  /// (`workload::is_open_loop`), runs the engine (or the cluster of `plan.cluster`, its records
  /// streamed to disk), analyses it and writes the results, records and step trace the plan
  /// asks for. Throws `Exception` on a bad plan or output, and under an MPI launcher with
  /// several ranks (a simulation is of one process).
  RunResult simulate(const SimPlan& plan, LoadObserver* observer = nullptr);

  /// Loads the tokenizer `given` names (and, for `chat`, its chat template) unless the session
  /// holds it already; later points that name it use it. "" = none. Throws `Exception` naming
  /// `--tokenizer`.
  void load_tokenizer(const std::string& given, bool chat);

  /// Stops the built-in server, if one runs; the next `run` point that needs it starts a new
  /// one (a sweep that changes the server's settings between points).
  void stop_target();

 private:
  struct Workload;
  const Workload& workload_for(const workload::DatasetOptions& dataset,
                               const std::shared_ptr<const std::vector<workload::Sample>>& given,
                               const std::string& tokenizer, bool chat);
  Schedule schedule_run(const RunPlan& plan, const Workload& w) const;
  /// `run` in one process, or in each rank of an MPI job (`detail::Spread`).
  RunResult run_point(const RunPlan& plan, LoadObserver* observer);

  std::unique_ptr<Workload> workload_;
  std::unique_ptr<server::Server> builtin_;
  http::Url builtin_url_;
  /// What the built-in server counts and renders with, kept alive as long as it runs.
  std::shared_ptr<const tokenizer::Tokenizer> builtin_tokenizer_;
  std::shared_ptr<const tokenizer::ChatTemplate> builtin_template_;
};

/// What can be checked of a target without contacting it: the client's TLS options for `load`'s
/// URL (`http::check_client_options`), so a bad `--ca-cert` fails at once, with one message for
/// `run` and `sweep`. Throws `Exception`.
void check_client(const loadgen::LoadOptions& load);

/// One warning per flag of `load`'s request shape that its backend cannot send
/// (`protocol::unhonoured_flags`), naming the flag and the backend; logged once before a run.
std::vector<std::string> unhonoured_flag_warnings(const loadgen::LoadOptions& load);

}  // namespace llmbench::app
