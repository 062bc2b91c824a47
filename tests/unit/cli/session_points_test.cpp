// Points of one `app::Session` resolved from flags as `llmbench run`, `simulate` and `sweep`
// resolve them (cli/run_plan.hpp, cli/simulate_flags.hpp):
// - a sweep with `--tokenizer` (several points against one built-in server, each with its own
//   seed) counts every prompt exactly on every point, for a completions and a chat backend: the
//   session owns the tokenizer and template, no plan points into a value it does not own (this
//   crashed with SIGSEGV on the first point before; scripts/sanitize.sh runs it under ASan);
// - the open-loop rule is one (`workload::is_open_loop`): a trace replay with a concurrency cap
//   schedules the same requests at the same times in `run` and `simulate`, and the queue wait
//   behind the cap is reported by both. Before the rule was shared, `simulate` recorded the slot
//   time as `scheduled_ns`: the fields that fix corrects are listed in `kOpenLoopFixFields`.

#include "llmbench/app/session.hpp"
#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/cli/simulate_flags.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/metrics/catalog.hpp"
#include "llmbench/workload/arrivals.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../tokenizer/test_data.hpp"
#include "shared_data.hpp"
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace llmbench::cli {
namespace {

namespace fs = std::filesystem;

/// The fields of a `simulate` results document that the shared open-loop rule changes for a
/// dataset with its own schedule and a concurrency cap (scripts/compare_results.py excludes
/// exactly these for that workload): every record's `scheduled_ns`, hence the statistics of the
/// latencies measured from it (TTFT and E2EL from the schedule) and of the wait behind the cap.
constexpr std::array<std::string_view, 3> kOpenLoopFixFields{"ttft_sched", "e2el_sched",
                                                             "queue_wait"};

ResolveEnv test_env() {
  ResolveEnv env;
  env.hardware_threads = 2;
  env.data_dir = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";
  return env;
}

class SessionPoints : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("llmbench-session-{}", ::getpid());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  /// DeepSeek-R1's tokenizer and its tokenizer_config.json chat template in `dir_/tok`; false
  /// when the shared data is not there.
  bool make_tokenizer_folder() {
    const fs::path json = tokenizer::testing::data_file("deepseek-r1/tokenizer.derived.json");
    const fs::path config =
        tokenizer::testing::data_root() / "deepseek-r1" / "tokenizer_config.json";
    std::error_code ec;
    if (json.empty() || !fs::exists(config, ec))
      return false;
    fs::create_directories(dir_ / "tok");
    fs::copy_file(json, dir_ / "tok" / "tokenizer.json", fs::copy_options::overwrite_existing);
    fs::copy_file(config, dir_ / "tok" / "tokenizer_config.json",
                  fs::copy_options::overwrite_existing);
    return true;
  }

  /// `run` flags against the built-in server with the fixed timing (1 ms TTFT and ITL).
  RunFlags builtin_flags() const {
    RunFlags f;
    f.server.timing = "fixed";
    f.server.options.ttft_ms = 1;
    f.server.options.itl_ms = 1;
    f.quiet = true;
    f.client_threads = 1;
    f.result_dir = dir_.string();
    return f;
  }

  /// A sweep of `points` points with `--tokenizer` against one built-in server, as `llmbench
  /// sweep` runs them: one session, each point with its own seed.
  void sweep_with_tokenizer(const std::string& backend) {
    if (!make_tokenizer_folder()) {
      LLMBENCH_SHARED_DATA_MISSING() << "tokenizers/deepseek-r1 not found";
    }
    app::Session session;
    for (std::uint64_t point = 0; point < 3; ++point) {
      RunFlags f = builtin_flags();
      f.backend = backend;
      f.tokenizer = (dir_ / "tok").string();
      f.dataset_name = "random";
      f.random_input_len = 24;
      f.random_output_len = 4;
      f.num_prompts = 6;
      f.max_concurrency = static_cast<std::int64_t>(point) + 1;
      f.seed = point;
      f.result_filename = fmt::format("{}-p{}.json", backend, point);
      f.save_result = true;
      const app::RunPlan plan = resolve_run(f, test_env());
      EXPECT_EQ(plan.load.tokenizer, nullptr);  // named by value, loaded by the session
      EXPECT_EQ(plan.dataset.tokenizer, nullptr);
      EXPECT_EQ(plan.dataset.chat_template, nullptr);
      const app::RunResult r = session.run(plan);
      SCOPED_TRACE(fmt::format("{} point {}", backend, point));
      EXPECT_EQ(r.exit_code, 0);
      EXPECT_EQ(r.summary().completed, 6U);
      EXPECT_EQ(r.summary().failed, 0U);
      // Every prompt was counted locally, exactly as the server (which counts with the same
      // tokenizer and template) counted it.
      for (const auto& rec : r.records) {
        EXPECT_GT(rec.input_tokens_local, 0) << rec.id;
        EXPECT_EQ(rec.input_tokens_local, rec.input_tokens) << rec.id;
      }
      EXPECT_EQ(r.summary().prompt_token_mismatches, 0U);
      EXPECT_TRUE(fs::exists(r.results_path)) << r.results_path;
    }
  }

  fs::path dir_;
};

TEST_F(SessionPoints, SweepWithTokenizerCountsEveryPromptOnEveryPointCompletions) {
  sweep_with_tokenizer("openai");
}

TEST_F(SessionPoints, SweepWithTokenizerCountsEveryPromptOnEveryPointChat) {
  sweep_with_tokenizer("openai-chat");
}

TEST_F(SessionPoints, ABadCaCertFailsBeforeAnyRequestWithOneMessage) {
  RunFlags f = builtin_flags();
  f.base_url = "https://127.0.0.1:9";  // nothing listens: a check that waited would time out
  f.server = ServeFlags{};
  f.ca_cert = (dir_ / "missing.pem").string();
  f.ready_check_timeout_s = 30;
  const app::RunPlan plan = resolve_run(f, test_env());
  std::string from_check;
  try {
    app::check_client(plan.load);
  } catch (const Exception& e) {
    from_check = e.what();
  }
  EXPECT_NE(from_check.find("missing.pem"), std::string::npos) << from_check;
  const auto start = std::chrono::steady_clock::now();
  std::string from_run;
  app::Session session;
  try {
    (void)session.run(plan);
  } catch (const Exception& e) {
    from_run = e.what();
  }
  EXPECT_EQ(from_run, from_check);  // the same message, from the same check
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
}

/// The measured records of `r` by id.
std::vector<metrics::RequestRecord> by_id(const app::RunResult& r) {
  std::vector<metrics::RequestRecord> out;
  for (const auto& rec : r.records) {
    if (!rec.warmup)
      out.push_back(rec);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

TEST_F(SessionPoints, TraceReplayWithACapIsOpenLoopInRunAndSimulate) {
  const std::string trace = std::string(LLMBENCH_TEST_SOURCE_DIR) +
                            "/tests/data/traces/mooncake_conversation_600s_le3000.jsonl";
  // 30 s of the trace at 30x: about a second of real time, some rows arriving together.
  const auto set_workload = [&](WorkloadFlags& f) {
    f.dataset_name = "trace";
    f.dataset_path = trace;
    f.trace_duration_s = 30;
    f.trace_speedup = 30;
    f.output_len = 8;
    f.max_concurrency = 1;
  };
  RunFlags rf = builtin_flags();
  set_workload(rf);
  SimulateFlags sf;
  set_workload(sf);
  app::Session session;
  const app::RunResult run = session.run(resolve_run(rf, test_env()));
  const app::RunResult sim = session.simulate(resolve_simulate(sf, test_env().data_dir, 0));
  ASSERT_EQ(run.summary().failed, 0U);
  ASSERT_EQ(sim.summary().failed, 0U);
  const auto a = by_id(run);
  const auto b = by_id(sim);
  ASSERT_EQ(a.size(), b.size());
  ASSERT_GT(a.size(), 5U);
  // The same schedule: the trace's own arrival times, from the first measured request.
  std::size_t queued = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].scheduled_ns - a[0].scheduled_ns, b[i].scheduled_ns - b[0].scheduled_ns) << i;
    EXPECT_GE(b[i].slot_ns, b[i].scheduled_ns) << i;
    queued += b[i].slot_ns > b[i].scheduled_ns ? 1 : 0;
  }
  // One slot and rows that arrive together: some requests waited in both, and both say so.
  EXPECT_GT(queued, 0U);
  EXPECT_GT(sim.summary().queue_wait_ms.max, 0.0);
  EXPECT_GT(run.summary().queue_wait_ms.max, 0.0);
  // The fields the shared rule corrects are those measured from the schedule.
  for (const auto name : kOpenLoopFixFields) {
    const metrics::LatencyMetric* m = metrics::find_latency_metric(name);
    ASSERT_NE(m, nullptr) << name;
    const metrics::Stats& sched = sim.summary().*(m->stats);
    EXPECT_GT(sched.count, 0U) << name;
  }
  EXPECT_GE(sim.summary().ttft_sched_ms.max, sim.summary().ttft_ms.max);
  EXPECT_GT(sim.summary().ttft_sched_ms.mean, sim.summary().ttft_ms.mean);
}

TEST_F(SessionPoints, TheTypedResultAnswersWhatItsResultsDocumentSays) {
  SimulateFlags f;
  f.num_prompts = 60;
  f.random_input_len = 256;
  f.random_output_len = 32;
  f.max_concurrency = 8;
  f.metric_percentiles = "50,99,99.9";
  f.goodput = {"ttft:500"};
  app::Session session;
  const app::RunResult r = session.simulate(resolve_simulate(f, test_env().data_dir, 0));
  const nlohmann::json doc = r.to_json();
  std::size_t answered = 0;
  for (const auto& [key, value] : doc.items()) {
    if (!value.is_number() && !value.is_null())
      continue;
    const auto typed = r.metric(key);
    if (!typed)
      continue;
    ++answered;
    if (value.is_null()) {
      EXPECT_TRUE(std::isnan(*typed)) << key;
    } else {
      EXPECT_EQ(*typed, value.get<double>()) << key;
    }
  }
  // Every summary number and every statistic of the ten latencies at three percentiles.
  EXPECT_GE(answered, metrics::kSummaryNumbers.size() + 10 * 8);
  EXPECT_EQ(r.metric("p99.9_ttft_ms"), doc.at("p99.9_ttft_ms").get<double>());
  EXPECT_FALSE(r.metric("p95_ttft_ms").has_value());  // not asked for: not in the document
  EXPECT_FALSE(r.metric("no_such_key").has_value());
  EXPECT_EQ(r.gpus(), 8.0);  // the default profile's TP8, one replica
}

TEST_F(SessionPoints, AClusterPointIsTypedLikeAnEnginePoint) {
  // docs/simulator.md "Cluster": 8 stable + 2 beta + 1 canary replica, TP8 each.
  SimulateFlags f;
  f.cluster_path = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data/sim/clusters/canary-5pct.json";
  f.num_prompts = 300;
  f.request_rate = "30";
  f.random_input_len = 256;
  f.random_output_len = 16;
  app::Session session;
  const app::SimPlan plan = resolve_simulate(f, test_env().data_dir, 0);
  ASSERT_TRUE(plan.cluster.has_value());
  const app::RunResult r = session.simulate(plan);
  ASSERT_TRUE(r.cluster.has_value());
  EXPECT_EQ(r.summary().completed, 300U);
  EXPECT_EQ(r.summary().failed, 0U);
  EXPECT_EQ(r.gpus(), 11.0 * 8.0);
  const nlohmann::json doc = r.to_json();
  EXPECT_EQ(doc.at("completed").get<std::int64_t>(), 300);
  EXPECT_EQ(r.metric("mean_ttft_ms"), doc.at("mean_ttft_ms").get<double>());
  EXPECT_EQ(r.metric("sim_steps"), doc.at("sim_steps").get<double>());
  EXPECT_GT(*r.metric("sim_steps"), 0.0);
  const auto& versions = doc.at("cluster").at("versions");
  ASSERT_EQ(versions.size(), 3U);
  std::int64_t routed = 0;
  for (const auto& v : versions) routed += v.at("requests").get<std::int64_t>();
  EXPECT_EQ(routed, 300);
  EXPECT_EQ(doc.at("config_effective").at("cluster").at("groups").size(), 3U);
  // No records kept, so no windows: the verdicts over them say they were not evaluated.
  EXPECT_FALSE(r.verdicts().stability.stable);
  EXPECT_NE(r.verdicts().stability.reason.find("not evaluated"), std::string::npos);
  // Engine flags do not apply beside --cluster.
  f.given = {"--tp"};
  EXPECT_THROW(resolve_simulate(f, test_env().data_dir, 0), Exception);
}

}  // namespace
}  // namespace llmbench::cli
