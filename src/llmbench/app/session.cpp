#include "llmbench/app/session.hpp"

#include "llmbench/app/detail/sim_cluster.hpp"
#include "llmbench/app/detail/spread.hpp"
#include "llmbench/app/detail/target.hpp"
#include "llmbench/app/outputs.hpp"
#include "llmbench/app/sim_requests.hpp"
#include "llmbench/app/stop_signals.hpp"
#include "llmbench/app/telemetry.hpp"
#include "llmbench/app/tokenizers.hpp"
#include "llmbench/app/what_if.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/heap.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/http/client.hpp"
#include "llmbench/protocol/dialect.hpp"
#include "llmbench/workload/arrivals.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace llmbench::app {

/// The loaded workload of a session: the tokenizer and chat template it owns, and the samples
/// last drawn, with what they were drawn from.
struct Session::Workload {
  std::string tokenizer_given;
  bool chat = false;
  std::shared_ptr<const tokenizer::Tokenizer> tokenizer;
  std::shared_ptr<const tokenizer::ChatTemplate> chat_template;
  std::shared_ptr<const std::vector<workload::Sample>> samples;
  workload::DatasetOptions dataset;  ///< what the samples were drawn from (no pointers)
  bool drawn = false;                ///< the samples were drawn from `dataset` (not given)
  bool warned_unhonoured = false;    ///< the unhonoured-flag warnings were logged
};

namespace {

/// `options` pointed at the session's tokenizer and template, for one call.
workload::DatasetOptions with_tokenizer(workload::DatasetOptions options,
                                        const tokenizer::Tokenizer* tok,
                                        const tokenizer::ChatTemplate* chat_template) {
  LLMBENCH_ASSERT(options.tokenizer == nullptr && options.chat_template == nullptr,
                  "a plan names its tokenizer by value, never by pointer");
  options.tokenizer = tok;
  options.chat_template = chat_template;
  return options;
}

/// The load facts of a finished load, with the achieved send rate against the planned one
/// (open loop) and a warning when the client fell behind.
LoadFacts load_facts(const RunPlan& plan, const loadgen::LoadResult& result) {
  LoadFacts f{.planned = result.planned,
              .schedule_span_ns = result.schedule_span_ns,
              .connections_opened = result.connections_opened,
              .conversations = result.conversations,
              .loop_lag_ms = result.loop_lag_ms};
  if (!std::isfinite(plan.report.rate) || result.schedule_span_ns <= 0)
    return f;
  TimeNs first_sent = std::numeric_limits<TimeNs>::max();
  TimeNs last_sent = 0;
  std::int64_t sent = 0;
  for (const auto& r : result.records) {
    // Multi-turn: the schedule is of conversation starts; later turns follow their answers.
    if (r.warmup || r.sent_ns < 0 || r.turn > 1)
      continue;
    first_sent = std::min(first_sent, r.sent_ns);
    last_sent = std::max(last_sent, r.sent_ns);
    ++sent;
  }
  f.planned_rate = static_cast<double>(result.planned - 1) / ns_to_s(result.schedule_span_ns);
  if (sent > 1 && last_sent > first_sent)
    f.achieved_rate = static_cast<double>(sent - 1) / ns_to_s(last_sent - first_sent);
  return f;
}

/// The warnings a finished load calls for: a client that could not keep up with the schedule,
/// and an open-file cap on the requests in flight that the load reached.
void warn_load_accuracy(const RunResult& r) {
  const auto& f = *r.load_facts;
  const std::int64_t cap = r.run_plan != nullptr ? r.run_plan->open_file_cap : 0;
  if (cap > 0 && static_cast<std::int64_t>(r.summary().max_concurrent_requests) >= cap) {
    log::warn(
        "requests in flight reached {}, the cap set below the open-file limit ({}): the load "
        "waited on it; raise the limit with ulimit -n",
        cap, r.run_plan->open_file_limit);
  }
  if (r.summary().total > 1 && std::isfinite(f.achieved_rate) &&
      f.achieved_rate < 0.95 * f.planned_rate) {
    log::warn(
        "the client sent at {:.2f} req/s but the schedule asked for {:.2f} req/s: the "
        "client (or the concurrency cap) could not keep up",
        f.achieved_rate, f.planned_rate);
  }
  // Lateness is sent − slot (docs/metrics.md): the wait behind --max-concurrency is not in it,
  // so a late client is a late client with a cap too.
  const auto& lateness = r.summary().lateness_ms;
  if (lateness.count > 0 && lateness.max > 10.0 && std::isfinite(r.report().rate)) {
    log::warn(
        "the client sent requests up to {:.1f} ms late (mean {:.2f} ms): it could not keep up "
        "with the schedule; see lateness_ms in the results",
        lateness.max, lateness.mean);
  }
}

/// Runs the load with SIGINT/SIGTERM/SIGHUP ending it early (in-flight requests cancelled and
/// recorded), each record written to the JSONL as it finishes.
loadgen::LoadResult run_load(const loadgen::LoadOptions& load, const Schedule& schedule,
                             RecordsFile* records, RunTelemetry& telemetry,
                             LoadObserver* observer) {
  loadgen::RecordSink sink;
  if (records != nullptr) {
    sink.write = [records](const metrics::RequestRecord& r) { records->writer->append(r); };
    sink.flush = [records] { records->writer->flush(); };
  }
  const StopSignals signals;
  loadgen::Progress progress;
  telemetry.start();
  if (observer != nullptr)
    observer->load_started(progress);
  loadgen::LoadResult result =
      loadgen::run_load(load, *schedule.samples, sink, &progress, StopSignals::stop_flag());
  if (observer != nullptr)
    observer->load_finished();
  telemetry.stop();  // before the built-in server stops: the last scrape reaches it
  if (result.interrupted) {
    const auto cancelled =
        std::count_if(result.records.begin(), result.records.end(),
                      [](const auto& r) { return r.error_kind == metrics::ErrorKind::Cancelled; });
    log::warn(
        "interrupted: {} requests finished, {} in flight were cancelled (counted apart from "
        "failed)",
        static_cast<std::int64_t>(result.records.size()) - cancelled, cancelled);
  }
  return result;
}

/// Rank 0 of a spread point: `<stem>.records.jsonl` with every rank's `records` (merged onto
/// its clock), written through the same checked writer as a single process's.
std::unique_ptr<RecordsFile> merged_records(const OutputPlan& output, const std::string& stem,
                                            const std::vector<metrics::RequestRecord>& records) {
  auto file = open_records(output, stem);
  for (const auto& r : records) file->writer->append(r);
  file->writer->flush();
  return file;
}

}  // namespace

std::vector<std::string> unhonoured_flag_warnings(const loadgen::LoadOptions& load) {
  std::vector<std::string> warnings;
  for (const std::string_view flag : protocol::unhonoured_flags(load.backend, load.request)) {
    warnings.push_back(fmt::format(
        "{} is not honoured: the {} backend does not send the field (its server does not "
        "accept it); the run goes on without it",
        flag, protocol::to_string(load.backend)));
  }
  return warnings;
}

bool leads_output() noexcept {
  const dist::World* world = dist::World::current();
  return world == nullptr || world->rank() == 0;
}

void check_client(const loadgen::LoadOptions& load) {
  http::check_client_options(load.url, load.client);
}

Session::Session() = default;

Session::~Session() {
  stop_target();
}

void Session::stop_target() {
  if (builtin_)
    builtin_->stop();
  builtin_.reset();
  builtin_tokenizer_.reset();
  builtin_template_.reset();
}

void Session::load_tokenizer(const std::string& given, bool chat) {
  if (workload_ && workload_->tokenizer_given == given && workload_->chat == chat)
    return;
  auto w = std::make_unique<Workload>();
  w->tokenizer_given = given;
  w->chat = chat;
  w->tokenizer = app::load_tokenizer(given);
  if (chat)
    w->chat_template = load_chat_template(given);
  workload_ = std::move(w);
}

const Session::Workload& Session::workload_for(
    const workload::DatasetOptions& dataset,
    const std::shared_ptr<const std::vector<workload::Sample>>& given, const std::string& tokenizer,
    bool chat) {
  load_tokenizer(tokenizer, chat);
  Workload& w = *workload_;
  if (given) {
    // Given samples: completions prompts are counted as the server counts them, with the
    // tokenizer's special tokens, so `input_tokens_local` can be compared with its usage.
    auto counted = std::make_shared<std::vector<workload::Sample>>(*given);
    tokenizer::Scratch scratch;
    for (auto& s : *counted) {
      if (w.tokenizer == nullptr || chat || s.prompt_len_exact)
        continue;
      if (auto n = w.tokenizer->count(s.prompt, /*add_special_tokens=*/true, scratch)) {
        s.prompt_len = static_cast<std::int64_t>(*n);
        s.prompt_len_exact = true;
      }
    }
    w.samples = std::move(counted);
    w.drawn = false;
    return w;
  }
  if (!w.samples || !w.drawn || !(w.dataset == dataset)) {
    // A point with its own --seed (each `sweep` measurement) draws its own prompts, with the
    // tokenizer already loaded.
    const TimeNs start = steady_now_ns();
    w.samples = std::make_shared<const std::vector<workload::Sample>>(
        workload::load_samples(with_tokenizer(dataset, w.tokenizer.get(), w.chat_template.get())));
    w.dataset = dataset;
    w.drawn = true;
    if (w.tokenizer) {
      log::info("{} prompts of exact token length in {:.2f} s", w.samples->size(),
                ns_to_s(steady_now_ns() - start));
    }
  }
  return w;
}

std::string run_banner(const RunPlan& plan, const loadgen::LoadOptions& lo,
                       const Schedule& schedule) {
  const double rate = plan.report.rate;
  const std::string_view ramp = workload::kRampUpNames.name(lo.ramp_up);
  return fmt::format(
      "benchmarking {} {} with {} ({}{}), {}{}", lo.url.origin(), lo.endpoint, lo.request.model,
      lo.duration_s > 0 ? fmt::format("duration {}s", lo.duration_s)
                        : fmt::format("{} prompts", schedule.num_prompts),
      schedule.num_warmups > 0 ? fmt::format(" + {} warm-up", schedule.num_warmups) : "",
      schedule.trace_times ? std::string("at the trace's own send times")
      : lo.ramp_up != workload::RampUp::None
          ? fmt::format("request rate ramp {} {:g} to {:g}/s", ramp, lo.ramp_up_start_rps,
                        lo.ramp_up_end_rps)
      : std::isinf(rate)
          ? std::string("request rate inf")
          : fmt::format("request rate {:g}/s, burstiness {:g}", rate, plan.report.burstiness),
      plan.max_concurrency > 0 ? fmt::format(", max concurrency {}", plan.max_concurrency) : "");
}

Schedule Session::schedule_run(const RunPlan& plan, const Workload& w) const {
  const auto& lo = plan.load;
  Schedule s{.samples = w.samples,
             .num_prompts = lo.num_prompts,
             .num_warmups = lo.num_warmups,
             .open_loop = false};
  const auto& samples = *w.samples;
  if (!samples.empty() && samples.front().arrival_ns >= 0) {
    // Trace replay: the rows after the warm-ups are the measured requests, at their own times.
    const auto rows = static_cast<std::int64_t>(samples.size());
    if (rows <= lo.num_warmups) {
      throw Exception(Error{fmt::format("the trace window has {} rows, not more than the {} "
                                        "warm-ups",
                                        rows, lo.num_warmups),
                            "--num-warmups", -1});
    }
    s.num_prompts = rows - lo.num_warmups;
  }
  const bool own_schedule =
      !samples.empty() &&
      !workload::dataset_arrivals(samples, static_cast<std::size_t>(s.num_warmups) % samples.size(),
                                  s.num_prompts)
           .empty();
  s.open_loop = workload::is_open_loop(own_schedule, lo.request_rate, lo.ramp_up);
  s.trace_times = own_schedule;
  return s;
}

RunResult Session::run(const RunPlan& plan, LoadObserver* observer) {
  dist::World* world = dist::World::current();
  if (world == nullptr || world->size() <= 1)
    return run_point(plan, observer);
  // A rank that fails alone would leave the others waiting in a collective: the job ends
  // (MPI_Abort), and each rank's records file keeps what it completed (docs/distributed.md).
  try {
    return run_point(plan, observer);
  } catch (const std::exception& e) {
    log::error("rank {} of {} ({}): {}; ending the MPI job", world->rank(), world->size(),
               world->host(), e.what());
    dist::World::abort(1);
  }
}

RunResult Session::run_point(const RunPlan& plan, LoadObserver* observer) {
  for (const auto& warning : plan.warnings) log::warn("{}", warning);
  if (!workload_ || !workload_->warned_unhonoured) {
    for (const auto& warning : unhonoured_flag_warnings(plan.load)) log::warn("{}", warning);
  }
  const Workload& w =
      workload_for(plan.dataset, plan.samples, plan.names.tokenizer, plan.load.request.chat);
  workload_->warned_unhonoured = true;
  RunResult r;
  r.run_plan = std::make_shared<const RunPlan>(plan);
  r.load = plan.load;
  const Schedule schedule = schedule_run(plan, w);
  r.load.num_prompts = schedule.num_prompts;
  r.samples = schedule.samples->size();
  // Under an MPI launcher with several ranks the point is spread (docs/distributed.md): every
  // rank drew the schedule above; it checks that it is rank 0's and sends its share.
  dist::World* world = dist::World::current();
  std::optional<detail::Spread> spread;
  if (world != nullptr && world->size() > 1)
    spread.emplace(*world, plan, r.load, *schedule.samples);
  const bool leader = !spread || spread->leader();
  if (!leader)
    observer = nullptr;  // rank 0 alone prints the progress and the table

  // ---- target ----
  if (plan.builtin) {
    if (!builtin_) {
      auto running = detail::start_builtin(*plan.builtin, w.tokenizer.get(), w.chat_template.get());
      builtin_ = std::move(running.server);
      builtin_url_ = running.url;
      builtin_tokenizer_ = w.tokenizer;  // the server counts with them while it runs
      builtin_template_ = w.chat_template;
    }
    r.load.url = builtin_url_;
  }
  check_client(r.load);
  r.server_models = detail::discover_model(
      r.load, plan.builtin ? "the built-in server" : "--base-url", plan.ready_check_timeout_s);

  // ---- outputs, then the load ----
  r.start_time = std::chrono::system_clock::now();
  r.stem = !plan.output.stem.empty()
               ? plan.output.stem
               : default_result_stem(plan.output.label, plan.backend_name, plan.report.rate,
                                     plan.max_concurrency, r.load.request.model,
                                     std::chrono::system_clock::to_time_t(r.start_time));
  if (spread)
    r.stem = spread->common_stem(r.stem);
  // A spread point: each rank streams its own records file as it goes (what a rank that dies
  // leaves behind); rank 0 writes the merged one after the load.
  auto records = open_records(plan.output, spread ? spread->rank_stem(r.stem) : r.stem);
  if (records)
    r.records_path = records->path;
  RunTelemetry telemetry(plan.telemetry, r.load);
  if (leader)
    log::info("{}", run_banner(plan, r.load, schedule));
  loadgen::LoadOptions load = spread ? spread->share(r.load) : r.load;
  load.tokenizer = w.tokenizer.get();
  loadgen::LoadResult result = run_load(load, schedule, records.get(), telemetry, observer);
  if (spread) {
    if (records)
      records->writer->flush();
    spread->gather(result);
    if (records && leader)
      records = merged_records(plan.output, r.stem, result.records);
    if (records)
      r.records_path = records->path;
    spread->share_merged(result);
  }

  // ---- analysis ----
  r.telemetry = telemetry.finish(result);
  r.load_facts = load_facts(plan, result);
  r.run_start_steady_ns = result.run_start_steady_ns;
  r.interrupted = result.interrupted;
  r.records = std::move(result.records);
  // The load's freed memory back to the kernel before the analysis allocates its sample lists.
  release_freed_memory();
  EngineQueue queue;
  if (r.telemetry->server_metrics) {
    // The batching-failure rule from the scraped /metrics (the server's batch cap is unknown).
    queue.samples = scrape_samples(r.telemetry->server_metrics->series, r.run_start_steady_ns);
    queue.source = "/metrics scrapes";
  }
  r.analysis = analyse_run(AnalysisInputs{.records = r.records,
                                          .tokens = nullptr,
                                          .report = plan.report,
                                          .window_s = plan.window_s,
                                          .queue = queue,
                                          .validity = plan.validity,
                                          .interrupted = r.interrupted});
  // Cancelled requests are not failures (they are counted apart), but a run that had to cancel
  // any did not finish its work: it still exits 1.
  r.exit_code = (r.summary().failed > 0 || r.summary().cancelled > 0 || r.interrupted) ? 1 : 0;
  if (spread && leader)
    spread->describe(r);
  if (leader) {
    if (observer != nullptr)
      observer->analysed(r);
    warn_load_accuracy(r);
    write_run_outputs(r, records.get());
  }
  if (spread)
    r.exit_code = spread->common_exit_code(r.exit_code);
  return r;
}

RunResult Session::simulate(const SimPlan& plan, LoadObserver* observer) {
  if (const dist::World* world = dist::World::current(); world != nullptr && world->size() > 1)
    throw Exception("a simulation runs in one process: start it without an MPI launcher");
  if (plan.cluster) {
    // A tiled trace is read by the cluster's source itself (a day is never held as samples).
    std::shared_ptr<const std::vector<workload::Sample>> samples;
    if (plan.cluster->trace_tile_s <= 0)
      samples = workload_for(plan.dataset, nullptr, plan.names.tokenizer, false).samples;
    return detail::simulate_cluster(plan, samples, observer);
  }
  log::info("{}", plan.engine.describe());
  const Workload& w = workload_for(plan.dataset, nullptr, plan.names.tokenizer, false);
  const auto& samples = *w.samples;
  RunResult r;
  r.sim_plan = std::make_shared<const SimPlan>(plan);
  r.samples = samples.size();
  // A trace brings its own schedule; other datasets get the arrival process.
  auto arrivals = workload::dataset_arrivals(samples, 0, static_cast<std::int64_t>(samples.size()));
  sim::SimOptions options = plan.options;
  options.closed_loop =
      !workload::is_open_loop(!arrivals.empty(), plan.report.rate, workload::RampUp::None);
  if (arrivals.empty()) {
    arrivals =
        workload::arrival_times(static_cast<std::int64_t>(samples.size()),
                                workload::ArrivalOptions{.request_rate = plan.report.rate,
                                                         .burstiness = plan.report.burstiness,
                                                         .seed = plan.dataset.seed});
  }
  auto requests = to_sim_requests(samples, arrivals, plan.dataset.random_prefix_len,
                                  options.engine.block_size, plan.dataset.trace.block_size);

  // ---- run ---- (the results folder is checked first, so a bad one costs no simulation)
  if (plan.output.save)
    prepare_result_dir(plan.output.dir);
  sim::Simulation engine(options, plan.engine.make_exec_model());
  const TimeNs wall_start = steady_now_ns();
  sim::SimResult result = engine.run(std::move(requests));
  const double wall_s = ns_to_s(steady_now_ns() - wall_start);
  r.records = std::move(result.records);
  r.tokens = std::move(result.tokens);

  // ---- analysis ----
  const EngineQueue queue{.samples = step_samples(result.steps),
                          .capacity = static_cast<double>(options.engine.scheduler.max_num_seqs),
                          .source = "engine timeline"};
  r.analysis = analyse_run(AnalysisInputs{.records = r.records,
                                          .tokens = &r.tokens,
                                          .report = plan.report,
                                          .window_s = plan.window_s,
                                          .queue = queue,
                                          .validity = plan.validity});
  const TimeNs interval =
      plan.timeline_interval_s > 0
          ? std::max<TimeNs>(1, static_cast<TimeNs>(plan.timeline_interval_s * 1e9))
          : std::max<TimeNs>(1, (result.stats.end_ns + 9) / 10);
  r.simulation =
      SimulationFacts{.stats = result.stats,
                      .timeline = sim::summarize_timeline(result.steps, interval),
                      .timeline_interval_ns = interval,
                      .wall_s = wall_s,
                      .engine = engine_facts(options, result.stats, result.steps, r.summary())};
  r.exit_code = r.summary().failed > 0 ? 1 : 0;
  r.start_time = std::chrono::system_clock::now();
  if (observer != nullptr)
    observer->analysed(r);
  if (!plan.output.trace_path.empty())
    write_step_trace(plan.output.trace_path, result.steps);
  if (plan.output.save)
    write_sim_outputs(r);
  return r;
}

}  // namespace llmbench::app
