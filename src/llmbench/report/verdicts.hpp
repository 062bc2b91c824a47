#pragma once
/// @file
/// The report's one reading of verdicts and answers (docs/report.md "Verdicts and answers"):
/// whether a run or sweep point is valid, stable, interrupted, had spikes or a batching failure,
/// and a sweep's answers (knee, SLO answer with its binding constraint, Pareto frontier, profile,
/// what-if bottleneck), read from the results and sweep JSON files. The analysis that decides
/// them runs where the files are written; this adapter only reads what they hold, and every key
/// it reads is listed in one table (`kVerdictKeys` in verdicts.cpp), so a key a later llmbench
/// adds is wired in one place.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::report {

/// How a badge or headline reads.
enum class Tone : std::uint8_t {
  Good,  ///< a healthy verdict ("valid", "stable", "no spikes")
  Warn,  ///< worth a look ("unstable", "3 spikes")
  Bad,   ///< the numbers are not to be trusted as they are ("invalid", "interrupted")
  Info,  ///< a plain fact or answer
};

/// "good", "warn", "bad", "info": the tone's name in the embedded data.
std::string_view to_string(Tone tone) noexcept;

/// A short verdict shown beside a run's name: "valid", "unstable", "interrupted", "3 spikes".
struct Badge {
  std::string key;   ///< validity, steadiness, interrupted, spikes, batching, client, failed
  std::string text;  ///< what the badge says
  Tone tone = Tone::Info;
  std::string detail;  ///< the reasons, for the badge's tooltip
};

/// The verdicts of one run or sweep point.
struct RunVerdict {
  std::optional<bool> valid;  ///< nullopt: not judged (a results file without validity)
  std::vector<std::string> invalid_reasons;
  /// "stable", "unstable", "saturated", "too short", or "" when the files do not say.
  std::string steadiness;
  std::string steadiness_reason;
  bool interrupted = false;
  bool spikes_known = false;  ///< the files hold a spike list or summary
  std::size_t spikes = 0;
  std::string
      spike_summary;  ///< "3 spikes; worst p99 ITL 146 ms, 8.3 × the median window, at 0-1 s"
  std::optional<bool> batching_failed;  ///< nullopt: not evaluated
  std::string batching_reason;
  bool client_saturated = false;
  std::string client_reason;
  double completed = 0;
  double failed = 0;
  std::string failures;  ///< "http_5xx 3, timeout 1" when requests failed

  /// The badges, in a fixed order: validity, steadiness, interrupted, failed, spikes, batching,
  /// client. A verdict the files do not hold gives no badge.
  [[nodiscard]] std::vector<Badge> badges() const;
};

/// The verdicts of the results document `results` and, for a sweep point, its row `point` of the
/// sweep JSON (null for a run). Keys are looked up in the row first, then in the results.
RunVerdict run_verdict(const nlohmann::json& results, const nlohmann::json* point);

/// One answer shown as a headline above the charts.
struct Headline {
  std::string key;    ///< result, knee, slo, validity, stability, spikes, batching, pareto, ...
  std::string title;  ///< "Knee", "SLO answer", ...
  std::string text;   ///< the answer in one or two sentences
  Tone tone = Tone::Info;
  std::string detail;  ///< what it rests on (the rule, the points), for a tooltip and the page
};

/// The headlines of one run: what it measured (throughput and latencies), then its stability,
/// spikes, batching verdict, client saturation and failures, and the what-if bottleneck when the
/// results name one.
std::vector<Headline> run_headlines(const nlohmann::json& results, const RunVerdict& verdict);

/// The headlines of a sweep (`sweep`: its `.sweep.json`; `verdicts`: the verdict of each of its
/// `points`, in order): the knee of each configuration, the SLO answer with its binding
/// constraint, the `--profile auto` result, how many points are valid and stable, spikes, the
/// Pareto frontier and the what-if bottleneck, each where the sweep holds it.
std::vector<Headline> sweep_headlines(const nlohmann::json& sweep,
                                      const std::vector<RunVerdict>& verdicts);

/// Whether the metrics of a sweep point (`metrics`: results-JSON keys) meet every constraint of
/// the sweep's `slo_search`: true, false, or nullopt when the sweep has no SLO or a constrained
/// value is missing. The sweep's own `meets` for the point's load is taken when the search
/// recorded it; else each "metric op bound" is read against the point's value.
std::optional<bool> point_meets_slo(const nlohmann::json& sweep, const nlohmann::json& metrics,
                                    double load);

/// The constraints of a sweep's SLO that `metrics` breaks, as "p99_tpot_ms 41.2 > 40".
std::vector<std::string> broken_constraints(const nlohmann::json& sweep,
                                            const nlohmann::json& metrics);

}  // namespace llmbench::report
