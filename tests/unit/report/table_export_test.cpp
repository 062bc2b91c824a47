#include "llmbench/report/table_export.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/metrics/record_io.hpp"
#include "llmbench/report/inputs.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace llmbench::report {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

/// The value of `column` in row `row` (0 = first data row) of `table`.
json at(const Table& table, std::size_t row, const std::string& column) {
  for (std::size_t i = 0; i < table.header.size(); ++i) {
    if (table.header[i] == column)
      return table.rows.at(row).at(i);
  }
  ADD_FAILURE() << "no column " << column;
  return nullptr;
}

RunData run_named(std::string name, json results) {
  return RunData{.name = std::move(name),
                 .source = "",
                 .results = std::move(results),
                 .records = {},
                 .records_loaded = false,
                 .records_note = "none here"};
}

TEST(ToCsv, QuotesAsRfc4180AndWritesNumbersExactly) {
  const Table t{.header = {"run", "x", "n", "flag"},
                .rows = {{"a,b", 0.1, 3, true}, {"say \"hi\"\nthere", nullptr, -2, false}}};
  EXPECT_EQ(to_csv(t),
            "run,x,n,flag\n"
            "\"a,b\",0.1,3,true\n"
            "\"say \"\"hi\"\"\nthere\",,-2,false\n");
}

TEST(ToMarkdown, TwoDecimalsNaForNullAndEscapedPipes) {
  const Table t{.header = {"run", "p99_ttft_ms", "completed"},
                .rows = {{"a|b", 12.3456, 100}, {"c\nd", nullptr, 0}}};
  EXPECT_EQ(to_markdown(t),
            "| run | p99_ttft_ms | completed |\n"
            "|---|---|---|\n"
            "| a\\|b | 12.35 | 100 |\n"
            "| c d | n/a | 0 |\n");
}

TEST(SummaryTable, OneRowPerRunThenPerSweepPointWithAxisColumns) {
  ReportInputs in;
  in.runs.push_back(run_named("base", {{"completed", 100},
                                       {"failed", 2},
                                       {"output_throughput", 1234.5},
                                       {"p99_ttft_ms", 87.25},
                                       {"mean_tpot_ms", nullptr}}));
  const json sweep = {{"axes", {{{"name", "max-concurrency"}}, {{"name", "gpu"}}}},
                      {"points",
                       {{{"index", 0},
                         {"axes", {{"max-concurrency", 4.0}, {"gpu", "h200"}}},
                         {"status", "ok"},
                         {"completed", 50},
                         {"p99_ttft_ms", 20.0}},
                        {{"index", 1},
                         {"axes", {{"max-concurrency", 8}, {"gpu", "h200"}}},
                         {"status", "failed"},
                         {"completed", nullptr}}}}};
  SweepData s{
      .name = "s", .source = "s.sweep.json", .sweep = sweep, .points = {}, .point_index = {}};
  // Point 0's results file was read: its numbers win over the sweep row's.
  s.points.push_back(
      run_named("p00", {{"completed", 50}, {"p99_ttft_ms", 20.5}, {"p99_e2el_ms", 300.0}}));
  s.point_index.push_back(0);
  in.sweeps.push_back(s);
  const Table t = summary_table(in);
  ASSERT_EQ(t.rows.size(), 3U);
  EXPECT_EQ(t.header[0], "run");
  EXPECT_EQ(t.header[2], "max-concurrency");
  EXPECT_EQ(t.header[3], "gpu");
  EXPECT_EQ(t.header[4], "status");
  EXPECT_EQ(at(t, 0, "run"), "base");
  EXPECT_EQ(at(t, 0, "completed"), 100);
  EXPECT_EQ(at(t, 0, "output_throughput"), 1234.5);
  EXPECT_TRUE(at(t, 0, "mean_tpot_ms").is_null());
  EXPECT_EQ(at(t, 0, "max-concurrency"), "");
  EXPECT_EQ(at(t, 1, "run"), "p00 gpu=h200 max-concurrency=4");
  EXPECT_EQ(at(t, 1, "sweep"), "s");
  EXPECT_EQ(at(t, 1, "max-concurrency"), 4);
  EXPECT_EQ(at(t, 1, "p99_ttft_ms"), 20.5);
  EXPECT_EQ(at(t, 1, "p99_e2el_ms"), 300.0);
  EXPECT_EQ(at(t, 2, "status"), "failed");
  EXPECT_TRUE(at(t, 2, "completed").is_null());

  const auto csv = lines_of(to_csv(t));
  ASSERT_EQ(csv.size(), 4U);
  // The configuration columns follow the status: only the verdict is known here.
  EXPECT_THAT(csv[1], HasSubstr("base,,,,ok,2 failed,,,,,,,,,,,,,100,2,,,1234.5,,,,,87.25,"));
  EXPECT_THAT(csv[2], HasSubstr("p00 gpu=h200 max-concurrency=4,s,4,h200,ok,,,,,,,,,,,,,,50,"));
  const auto md = lines_of(to_markdown(t));
  EXPECT_THAT(md[2], HasSubstr("| base |  |  |  | ok | 2 failed |  | n/a |"));
  EXPECT_THAT(md[2], HasSubstr("| 100 | 2 | n/a | n/a | 1234.50 |"));
}

TEST(RecordsTable, OneRowPerRecordWithLatenciesAndNoneForAFailure) {
  metrics::RequestRecord ok;
  ok.id = 7;
  ok.scheduled_ns = 1'000'000'000;
  ok.slot_ns = ok.scheduled_ns;
  ok.sent_ns = 1'002'000'000;
  for (const TimeNs t : {1'052'000'000, 1'062'000'000, 1'082'000'000})
    ok.chunks.push_back(
        {.time_ns = t, .tokens = 1, .bytes = 3, .channel = metrics::Channel::Answer});
  ok.done_ns = 1'082'000'000;
  ok.http_status = 200;
  ok.input_tokens = 12;
  ok.output_tokens = 3;
  ok.finish_reason = "length";
  metrics::RequestRecord bad;
  bad.id = 8;
  bad.scheduled_ns = 2'000'000'000;
  bad.sent_ns = 2'000'000'000;
  bad.done_ns = 2'100'000'000;
  bad.http_status = 503;
  bad.error_kind = metrics::ErrorKind::Http5xx;
  bad.error_message = "overloaded, retry";
  ReportInputs in;
  in.runs.push_back(RunData{.name = "r",
                            .source = "r.json",
                            .results = {{"completed", 1}},
                            .records = {ok, bad},
                            .records_loaded = true,
                            .records_note = {}});
  const Table t = records_table(in);
  ASSERT_EQ(t.rows.size(), 2U);
  EXPECT_EQ(at(t, 0, "id"), 7);
  EXPECT_EQ(at(t, 0, "status"), "ok");
  EXPECT_DOUBLE_EQ(at(t, 0, "scheduled_s").get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(at(t, 0, "ttft_ms").get<double>(), 50.0);
  EXPECT_DOUBLE_EQ(at(t, 0, "tpot_ms").get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(at(t, 0, "itl_mean_ms").get<double>(), 15.0);
  EXPECT_DOUBLE_EQ(at(t, 0, "e2el_ms").get<double>(), 80.0);
  EXPECT_EQ(at(t, 0, "output_tokens"), 3);
  EXPECT_EQ(at(t, 1, "status"), "http_5xx");
  EXPECT_TRUE(at(t, 1, "ttft_ms").is_null());
  EXPECT_EQ(lines_of(to_csv(t))[2], "r,8,false,http_5xx,503,2,2,,,,,0,0,0,,\"overloaded, retry\"");

  in.runs.push_back(run_named("no-records", {{"completed", 1}}));
  try {
    (void)records_table(in);
    FAIL() << "no exception";
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("has no per-request records (none here)"));
  }
}

class InputsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("llmbench-report-inputs-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(dir_ / name) << text;
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(InputsTest, ResultsWithRecordsAndASweepWithItsPoints) {
  write("a.json", R"({"completed": 1, "records_file": "a.records.jsonl"})");
  metrics::RequestRecord r;
  r.scheduled_ns = 0;
  r.sent_ns = 5;
  r.chunks.push_back({.time_ns = 20, .tokens = 1, .bytes = 3, .channel = metrics::Channel::Answer});
  r.done_ns = 50;
  write("a.records.jsonl", metrics::record_to_json_line(r) + "\n");
  write("p0.json", R"({"completed": 2})");  // no records file beside it
  write("s.sweep.json",
        R"({"axes":[{"name":"max-concurrency"}],"points":[
            {"index":0,"axes":{"max-concurrency":1.0},"status":"ok","results_file":"p0.json"},
            {"index":1,"axes":{"max-concurrency":2},"status":"failed","results_file":""}]})");
  const ReportInputs in = load_inputs({path("a.json"), path("s.sweep.json")});
  ASSERT_EQ(in.runs.size(), 1U);
  EXPECT_EQ(in.runs[0].name, "a");
  EXPECT_TRUE(in.runs[0].records_loaded) << in.runs[0].records_note;
  ASSERT_EQ(in.runs[0].records.size(), 1U);
  EXPECT_EQ(in.runs[0].records[0].sent_ns, 5);
  ASSERT_EQ(in.sweeps.size(), 1U);
  EXPECT_EQ(in.sweeps[0].name, "s");
  ASSERT_EQ(in.sweeps[0].points.size(), 1U);  // the failed point has no results
  EXPECT_EQ(in.sweeps[0].points[0].name, "p00 max-concurrency=1");
  EXPECT_FALSE(in.sweeps[0].points[0].records_loaded);
  EXPECT_THAT(in.sweeps[0].points[0].records_note, HasSubstr("p0.records.jsonl not found"));
}

TEST_F(InputsTest, RunsAreNamedByTheirLabelAndASharedLabelKeepsTheFile) {
  write("a.json", R"({"completed": 1, "label": "baseline"})");
  write("b.json", R"({"completed": 1, "label": "canary"})");
  write("c.json", R"({"completed": 1, "label": "canary"})");
  write("d.json", R"({"completed": 1, "label": ""})");
  write("e.json", R"({"completed": 1, "label": null})");
  const ReportInputs in =
      load_inputs({path("a.json"), path("b.json"), path("c.json"), path("d.json"), path("e.json")});
  ASSERT_EQ(in.runs.size(), 5U);
  EXPECT_EQ(in.runs[0].name, "baseline");
  EXPECT_EQ(in.runs[1].name, "canary (b)");
  EXPECT_EQ(in.runs[2].name, "canary (c)");
  EXPECT_EQ(in.runs[3].name, "d");
  EXPECT_EQ(in.runs[4].name, "e");
}

TEST(ShortestDistinctPaths, TheFewestFoldersThatTellFilesApart) {
  EXPECT_THAT(shortest_distinct_paths({"x/a/run.json", "x/b/run.json", "y/b/run.json", "run.json"}),
              ::testing::ElementsAre("a/run", "x/b/run", "y/b/run", "run"));
  EXPECT_THAT(shortest_distinct_paths({"/r/base.json", "/r/new.json"}),
              ::testing::ElementsAre("base", "new"));
  EXPECT_THAT(shortest_distinct_paths({"a.json", "a.json"}), ::testing::ElementsAre("a", "a #2"));
}

TEST_F(InputsTest, FourFilesNamedRunJsonGetFourNames) {
  for (const char* d : {"a", "b", "c", "d"}) {
    fs::create_directories(dir_ / d / "out");
    write(std::string(d) + "/out/run.json", R"({"completed": 1})");
  }
  write("a/out/lab.json", R"({"completed": 1, "label": "canary"})");
  write("b/out/lab.json", R"({"completed": 1, "label": "canary"})");
  const ReportInputs in =
      load_inputs({path("a/out/run.json"), path("b/out/run.json"), path("c/out/run.json"),
                   path("d/out/run.json"), path("a/out/lab.json"), path("b/out/lab.json")});
  std::vector<std::string> names;
  for (const auto& r : in.runs) names.push_back(r.name);
  EXPECT_THAT(names, ::testing::ElementsAre("a/out/run", "b/out/run", "c/out/run", "d/out/run",
                                            "canary (a/out/lab)", "canary (b/out/lab)"));
}

TEST(CompactMarkdown, FitsAPullRequestComment) {
  const auto results = [](int seqs, double tput, double ttft) {
    return json{
        {"completed", 300},
        {"failed", 0},
        {"model_id", "deepseek-r1"},
        {"backend", "simulate"},
        {"simulated", true},
        {"tool_version", "0.1.0"},
        {"git_sha", "a6f64a7fad6f"},
        {"stable", true},
        {"spikes", {{"list", json::array()}}},
        {"output_throughput", tput},
        {"request_throughput", tput / 256},
        {"median_ttft_ms", ttft},
        {"p99_ttft_ms", ttft * 2},
        {"config_effective", {{"dataset_name", "random"}, {"max_num_seqs", seqs}, {"tp", 8}}}};
  };
  ReportInputs in;
  in.runs.push_back(run_named("base", results(256, 1500, 120)));
  in.runs.push_back(run_named("more-seqs", results(512, 1510, 118)));
  const std::string md = to_compact_markdown(in);
  const auto lines = lines_of(md);
  ASSERT_GE(lines.size(), 5U) << md;
  EXPECT_THAT(lines[0], HasSubstr("**Model** deepseek-r1"));
  EXPECT_THAT(lines[0], HasSubstr("**llmbench** 0.1.0 (a6f64a7fad6f)"));
  EXPECT_EQ(lines[2],
            "| run | differs | verdict | failed | req/s | out tok/s | TTFT p50 | TTFT p99 | TPOT "
            "p99 | ITL p99 | E2EL p99 |");
  EXPECT_THAT(lines[4], HasSubstr("| base | max_num_seqs 256 | ok | 0 | 5.86 | "
                                  "1500 | 120 | 240 | n/a |"));
  EXPECT_THAT(lines[5], HasSubstr("| more-seqs | max_num_seqs 512 |"));
  for (std::size_t i = 2; i < lines.size(); ++i) EXPECT_LE(lines[i].size(), 160U) << lines[i];

  // The full table carries the configuration columns too.
  const Table t = summary_table(in);
  EXPECT_EQ(at(t, 0, "model"), "deepseek-r1");
  EXPECT_EQ(at(t, 1, "differs"), "max_num_seqs 512");
  EXPECT_EQ(at(t, 0, "verdict"), "stable, no spikes");
  EXPECT_EQ(at(t, 0, "gpus"), 8.0);
  EXPECT_EQ(at(t, 0, "dataset"), "random");
}

TEST_F(InputsTest, BadFilesAreNamedWithThePosition) {
  write("broken.json", "{\"completed\": 1,,}");
  write("other.json", R"({"hello": 1})");
  const auto message = [&](const std::string& name) {
    try {
      (void)load_inputs({path(name)});
    } catch (const Exception& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_THAT(message("broken.json"), HasSubstr("broken.json: is not JSON"));
  EXPECT_THAT(message("broken.json"), HasSubstr("(at byte 17)"));
  EXPECT_THAT(message("other.json"), HasSubstr("neither a results JSON"));
  EXPECT_THAT(message("missing.json"), HasSubstr("missing.json"));
  EXPECT_THROW((void)load_inputs({}), Exception);
}

}  // namespace
}  // namespace llmbench::report
