// The labelled corpus (corpus.hpp): every detector scored on runs whose truth is known by
// construction, false alarms counted as well as hits. The confusion tables printed here are the
// ones in docs/sweep.md "The labelled corpus".

#include "corpus.hpp"

#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace llmbench::corpus {
namespace {

using analysis::Steadiness;

std::vector<Case> all_cases() {
  std::vector<Case> all = simulated_cases();
  for (auto& c : fixed_timing_cases()) all.push_back(std::move(c));
  for (auto& c : recorded_cases(std::string(LLMBENCH_TEST_SOURCE_DIR) + "/tests/unit/corpus/data"))
    all.push_back(std::move(c));
  return all;
}

/// The window index of `seconds` after the first window's start.
long window_of(const Verdicts& v, double seconds) {
  const double start = ns_to_s(v.windows.front().start_ns);
  return std::lround(std::floor(seconds - start));
}

struct SpikeScore {
  int stalls = 0;
  int found = 0;         ///< stalls with a spike within one window
  int false_alarms = 0;  ///< spike windows not within one window of a stall
  int windows = 0;       ///< windows judged
};

SpikeScore score_spikes(const Case& c, const Verdicts& v) {
  SpikeScore s;
  s.stalls = static_cast<int>(c.truth.stalls_s.size());
  s.windows = static_cast<int>(v.spikes.judged_windows);
  std::vector<long> stall_windows;
  for (const double t : c.truth.stalls_s) stall_windows.push_back(window_of(v, t));
  std::vector<long> spike_windows;
  for (const auto& sp : v.spikes.spikes) {
    const auto w = static_cast<long>(sp.window);
    if (spike_windows.empty() || spike_windows.back() != w)
      spike_windows.push_back(w);
  }
  for (const long st : stall_windows) {
    bool hit = false;
    for (const long w : spike_windows) hit = hit || std::abs(w - st) <= 1;
    s.found += hit ? 1 : 0;
  }
  for (const long w : spike_windows) {
    bool near = false;
    for (const long st : stall_windows) near = near || std::abs(w - st) <= 1;
    s.false_alarms += near ? 0 : 1;
  }
  return s;
}

TEST(Corpus, EveryDetectorIsRightOnEveryLabelledCase) {
  const std::vector<Case> cases = all_cases();
  EXPECT_EQ(cases.size(), 39U);  // docs/sweep.md lists them
  // stability: truth → verdict → count
  std::map<Steadiness, std::map<Steadiness, int>> stability;
  int batch_tp = 0, batch_fn = 0, batch_fp = 0, batch_tn = 0;
  SpikeScore spikes_total;
  int spike_cases_with_false_alarm = 0;
  int unscored_spike_windows = 0;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Verdicts v = judge(c);
    ASSERT_FALSE(v.windows.empty());
    ++stability[c.truth.steadiness][v.stability.state];
    EXPECT_EQ(v.stability.state, c.truth.steadiness) << v.stability.reason;
    const SpikeScore s = score_spikes(c, v);
    if (c.truth.spikes_scored) {
      spikes_total.stalls += s.stalls;
      spikes_total.found += s.found;
      spikes_total.false_alarms += s.false_alarms;
      spikes_total.windows += s.windows;
      spike_cases_with_false_alarm += s.false_alarms > 0 ? 1 : 0;
      EXPECT_EQ(s.found, s.stalls) << analysis::spike_summary(v.spikes, analysis::SpikeRule{});
      EXPECT_EQ(s.false_alarms, 0) << analysis::spike_summary(v.spikes, analysis::SpikeRule{});
    } else {
      unscored_spike_windows += s.false_alarms;
    }
    if (c.truth.batching_observable) {
      EXPECT_TRUE(v.batching.evaluated) << v.batching.reason;
      EXPECT_EQ(v.batching.fired, c.truth.batching_fails) << v.batching.reason;
      if (c.truth.batching_fails)
        (v.batching.fired ? batch_tp : batch_fn) += 1;
      else
        (v.batching.fired ? batch_fp : batch_tn) += 1;
    }
    std::printf(
        "%-48s %-9s stability %-9s (truth %-9s) warm-up %zu; spikes %zu (stalls %d found "
        "%d, false %d%s); batching %s; %s\n",
        c.name.c_str(), c.family.c_str(), std::string(to_string(v.stability.state)).c_str(),
        std::string(to_string(c.truth.steadiness)).c_str(), v.stability.warmup_windows,
        v.spikes.spikes.size(), s.stalls, s.found, s.false_alarms,
        c.truth.spikes_scored ? "" : ", not scored",
        !c.truth.batching_observable ? "n/a"
        : v.batching.fired           ? "FIRED"
                                     : "no",
        analysis::interference_line(v.spikes, analysis::SpikeRule{}).c_str());
  }
  std::printf("\nstability (rows: truth, columns: verdict)\n%-10s", "");
  for (const auto& s : analysis::kSteadinessNames)
    std::printf(" %10s", std::string(s.name).c_str());
  std::printf("\n");
  for (const auto& t : analysis::kSteadinessNames) {
    std::printf("%-10s", std::string(t.name).c_str());
    for (const auto& s : analysis::kSteadinessNames)
      std::printf(" %10d", stability[t.state][s.state]);
    std::printf("\n");
  }
  std::printf(
      "\nspikes: %d injected stalls, %d found within one window; %d false-alarm windows "
      "of %d judged (%d case(s) with one); %d spike window(s) in unscored cases\n",
      spikes_total.stalls, spikes_total.found, spikes_total.false_alarms, spikes_total.windows,
      spike_cases_with_false_alarm, unscored_spike_windows);
  std::printf(
      "batching failure: true positive %d, false negative %d, false positive %d, true "
      "negative %d\n",
      batch_tp, batch_fn, batch_fp, batch_tn);
  EXPECT_GE(spikes_total.stalls, 3);
  EXPECT_GE(batch_tp, 1);
}

}  // namespace
}  // namespace llmbench::corpus
