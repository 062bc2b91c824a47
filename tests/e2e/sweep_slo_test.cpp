// End to end: the SLO search of `llmbench sweep --simulate` per engine setting (one load search
// per knob combination, docs/sweep.md "SLO search") and the extension of points that hold too
// little data to be valid (`--min-requests`).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "sweep_fixture.hpp"
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

using nlohmann::json;

class SweepSloTest : public SweepTest {};

/// Each setting's search is the search a sweep of that setting alone makes (the simulation is
/// deterministic), the answers differ where the knob binds, and the table says so.
TEST_F(SweepSloTest, OneLoadSearchPerKnobSettingAnswersPerSetting) {
  const std::vector<std::string> common{
      "--simulate",    "--sweep", "request-rate=1:64",   "--slo", "p99_ttft_ms<=2000",
      "--num-prompts", "300",     "--random-output-len", "256"};
  auto args = common;
  for (const char* a : {"--sweep", "max-num-seqs=8,64"}) args.emplace_back(a);
  ASSERT_EQ(sweep(args), 0) << read_file(log().string());
  const json doc = sweep_json();
  EXPECT_FALSE(doc.contains("slo_search"));
  const json& settings = doc.at("slo_settings");
  ASSERT_EQ(settings.size(), 2U) << settings.dump();
  EXPECT_EQ(settings[0].at("setting"), "max-num-seqs=8");
  EXPECT_EQ(settings[1].at("knobs").at("max-num-seqs"), "64");
  std::vector<double> answers;
  for (const auto& s : settings) {
    ASSERT_TRUE(s.at("answer").is_number()) << s.dump();
    EXPECT_LE(s.at("answer_rounded").get<double>(), s.at("answer").get<double>());
    EXPECT_EQ(s.at("binding_constraint"), "p99_ttft_ms<=2000");
    EXPECT_GT(s.at("output_throughput").get<double>(), 0);
    answers.push_back(s.at("answer").get<double>());
    // Every point of the setting's search ran at its knob value.
    for (const auto& p : s.at("search").at("points")) {
      const json& row = doc.at("points").at(p.at("row").get<std::size_t>());
      EXPECT_EQ(row.at("axes").at("max-num-seqs").get<double>(),
                std::stod(s.at("knobs").at("max-num-seqs").get<std::string>()));
      EXPECT_EQ(row.at("axes").at("request-rate").get<double>(), p.at("load").get<double>());
    }
  }
  // Eight running requests at most hold far less load than 64.
  EXPECT_LT(answers[0], 0.8 * answers[1]);
  const std::string out = read_file(log().string());
  EXPECT_NE(out.find("SLO answer per setting"), std::string::npos) << out;
  EXPECT_NE(out.find("max-num-seqs=8: "), std::string::npos) << out;
  // Each setting names what bounds it at the first load it could not carry: eight running
  // requests at most are the cap itself (docs/compare.md "What-if: the bottleneck").
  ASSERT_TRUE(settings[0].at("bottleneck").is_object()) << settings[0].dump();
  EXPECT_EQ(settings[0].at("bottleneck").at("which"), "max_num_seqs") << settings[0].dump();
  EXPECT_GT(settings[0].at("bottleneck").at("load").get<double>(), answers[0]);
  EXPECT_NE(out.find("Bottleneck per setting"), std::string::npos) << out;
  EXPECT_NE(out.find("max-num-seqs=8 → max-num-seqs=64"), std::string::npos) << out;
  // The same search of one setting alone lands on the same answer.
  for (std::size_t i = 0; i < 2; ++i) {
    auto alone = common;
    for (const char* a : {"--max-num-seqs", i == 0 ? "8" : "64"}) alone.emplace_back(a);
    ASSERT_EQ(sweep(alone), 0) << read_file(log().string());
    const json one = sweep_json();
    ASSERT_TRUE(one.contains("slo_search"));
    EXPECT_EQ(one.at("slo_search").at("answer").get<double>(), answers[i]) << i;
  }
}

/// Points of 40 requests cannot support a p99: without floors the answer is provisional; with
/// --min-requests each point is measured again with more requests until it is valid.
TEST_F(SweepSloTest, MinRequestsExtendsInvalidPointsUntilValid) {
  const std::vector<std::string> common{"--simulate", "--sweep",           "request-rate=1:64",
                                        "--slo",      "p99_ttft_ms<=2000", "--num-prompts",
                                        "40",         "--max-points",      "4"};
  ASSERT_EQ(sweep(common), 0) << read_file(log().string());
  EXPECT_TRUE(sweep_json().at("slo_search").at("provisional").get<bool>());
  auto args = common;
  for (const char* a : {"--min-requests", "150"}) args.emplace_back(a);
  ASSERT_EQ(sweep(args), 0) << read_file(log().string());
  const json doc = sweep_json();
  const json& s = doc.at("slo_search");
  ASSERT_GE(s.at("points").size(), 2U) << s.dump();
  for (const auto& p : s.at("points")) {
    const json& row = doc.at("points").at(p.at("row").get<std::size_t>());
    // 368 samples support a p99 at 95%; 40 x 11 = 440 is the first scale past it with 10%.
    EXPECT_GE(p.at("samples").get<std::size_t>(), 368U) << p.dump();
    EXPECT_GE(p.at("scale").get<int>(), 10) << p.dump();
    EXPECT_LE(p.at("scale").get<int>(), 16) << p.dump();
    EXPECT_GE(p.at("measurements").get<int>(), 2) << p.dump();
    EXPECT_EQ(row.at("scale"), p.at("scale"));
    EXPECT_EQ(row.at("earlier_results").size() + 1, row.at("trials").get<std::size_t>());
    if (p.at("scale").get<int>() < 16) {
      EXPECT_TRUE(p.at("valid").get<bool>()) << p.dump();
    }
  }
  EXPECT_NE(read_file(log().string()).find("extended to"), std::string::npos);
}

}  // namespace
}  // namespace llmbench::e2e
