#include "llmbench/report/verdicts.hpp"

#include "llmbench/analysis/slo_search.hpp"
#include "llmbench/report/run_config.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <utility>

namespace llmbench::report {

namespace {

using nlohmann::json;

// ---- the keys read ----

/// Where each verdict or answer is found, as JSON pointers tried in order: the first that
/// exists wins, for each pointer in a run's sweep row (`point`) first, then in its results; a
/// sweep's in the sweep JSON. The `verdict/...` pointers are the per-run verdict
/// object of later results files (one verdict per run and point: valid or invalid with reasons,
/// stable / unstable / saturated / too short, interrupted); today's files have the keys after
/// them (docs/sweep.md "Stability", "Spikes", "Batching failure", "Validity").
struct KeySource {
  std::string_view what;
  std::string_view pointer;
};
constexpr std::array<KeySource, 26> kVerdictKeys{{
    {"valid", "/verdict/valid"},
    {"valid", "/valid"},
    {"invalid_reasons", "/verdict/invalid_reasons"},
    {"invalid_reasons", "/invalid_reasons"},
    {"steadiness", "/verdict/steadiness"},
    {"steadiness", "/steadiness"},
    {"steadiness_reason", "/verdict/steadiness_reason"},
    {"steadiness_reason", "/stability/reason"},
    {"steadiness_reason", "/stability"},  // a sweep row's one sentence
    {"stable", "/stable"},
    {"interrupted", "/verdict/interrupted"},
    {"interrupted", "/interrupted"},
    {"spike_summary", "/spikes/summary"},
    {"spike_list", "/spikes/list"},
    {"spike_list", "/spikes"},  // a sweep row's list
    {"batching_evaluated", "/batching/evaluated"},
    {"batching_failed", "/batching/fired"},
    {"batching_failed", "/batching_failed"},
    {"batching_reason", "/batching/reason"},
    {"client_saturated", "/telemetry/client_saturated"},
    {"client_reasons", "/telemetry/client/reasons"},
    {"bottleneck", "/what_if/statement"},
    {"bottleneck", "/bottleneck/statement"},
    {"knee_statement", "/statement"},  // in a knee entry of a later sweep JSON
    {"slo_binding", "/slo_search/binding"},
    {"slo_answer_text", "/slo_search/answer_rounded"},
}};

/// The value of `what` at the first of its pointers that one of `docs` has (in the order of
/// `kVerdictKeys`, then of `docs`; null entries skipped), or null.
const json* find_key(std::string_view what, std::initializer_list<const json*> docs) {
  for (const auto& k : kVerdictKeys) {
    if (k.what != what)
      continue;
    const json::json_pointer ptr{std::string(k.pointer)};
    for (const json* doc : docs) {
      if (doc != nullptr && doc->is_object() && doc->contains(ptr) && !doc->at(ptr).is_null())
        return &doc->at(ptr);
    }
  }
  return nullptr;
}

std::string string_of(const json* j) {
  return j != nullptr && j->is_string() ? j->get<std::string>() : std::string();
}

double number_at(const json& j, std::string_view key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : std::nan("");
}

/// A number for a sentence: 3 significant digits below 100, whole above, thousands separated.
std::string num(double v) {
  if (!std::isfinite(v))
    return "n/a";
  if (std::fabs(v) >= 100) {
    std::string digits = fmt::format("{:.0f}", std::fabs(v));
    for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3)
      digits.insert(static_cast<std::size_t>(i), ",");
    return (v < 0 ? "-" : "") + digits;
  }
  return fmt::format("{:.3g}", v);
}

std::string metric_label(std::string_view metric) {
  static const std::map<std::string_view, std::string_view> kNames{
      {"itl", "ITL"}, {"ttft", "TTFT"}, {"tpot", "TPOT"}, {"e2el", "E2EL"}};
  const auto it = kNames.find(metric);
  return it != kNames.end() ? std::string(it->second) : std::string(metric);
}

/// "3 spikes; worst p99 ITL 146 ms, 8.3 × the median window, at 0-1 s" from a spike list.
std::string spike_text(const json& list) {
  if (!list.empty() && list.front().is_string()) {  // a sweep row's sentences
    std::string first = list.front().get<std::string>();
    if (first.rfind("spike: ", 0) == 0)
      first = first.substr(7);
    return fmt::format("{} spike{}; the first: {}", list.size(), list.size() == 1 ? "" : "s",
                       first);
  }
  const json* worst = nullptr;
  for (const auto& s : list) {
    if (s.is_object() && (worst == nullptr || number_at(s, "ratio") > number_at(*worst, "ratio")))
      worst = &s;
  }
  if (worst == nullptr)
    return "";
  return fmt::format("{} spike{}; worst p99 {} {} ms, {} × the median window, at {}-{} s",
                     list.size(), list.size() == 1 ? "" : "s",
                     metric_label(worst->value("metric", "")), num(number_at(*worst, "value_ms")),
                     num(number_at(*worst, "ratio")), num(number_at(*worst, "start_s")),
                     num(number_at(*worst, "end_s")));
}

std::string join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

// ---- the SLO ----

std::vector<analysis::SloConstraint> slo_constraints(const json& sweep) {
  std::vector<analysis::SloConstraint> out;
  const auto it = sweep.find("slo_search");
  if (it == sweep.end() || !it->is_object())
    return out;
  for (const auto& text : it->value("constraints", json::array())) {
    if (text.is_string()) {
      for (auto& c : analysis::parse_slo_constraints(text.get<std::string>()))
        out.push_back(std::move(c));
    }
  }
  return out;
}

/// The row of `sweep`'s points at `load` on the search axis that ran, or null.
const json* point_at_load(const json& sweep, double load) {
  const std::string axis = sweep.value("/slo_search/axis"_json_pointer, "");
  const auto points = sweep.find("points");
  if (points == sweep.end() || !points->is_array())
    return nullptr;
  for (const auto& p : *points) {  // a pointer into `sweep` is returned: no copy
    const json v = p.value("/axes"_json_pointer / axis, json());
    if (p.value("status", "") == "ok" && v.is_number() && v.get<double>() == load)
      return &p;
  }
  return nullptr;
}

Headline slo_headline(const json& sweep) {
  const json& s = sweep.at("slo_search");
  const auto constraints = slo_constraints(sweep);
  std::vector<std::string> texts;
  texts.reserve(constraints.size());
  for (const auto& c : constraints) texts.push_back(analysis::to_string(c));
  const std::string axis = s.value("axis", "load");
  Headline h{.key = "slo",
             .title = "SLO answer",
             .text = {},
             .tone = Tone::Info,
             .detail = s.value("method", "")};
  const json answer = s.value("answer", json());
  if (!answer.is_number()) {
    h.tone = Tone::Bad;
    h.text = fmt::format("{}: no {} meets it. {}", join(texts, ", "), axis, s.value("reason", ""));
    return h;
  }
  std::string value = string_of(find_key("slo_answer_text", {&sweep}));
  if (value.empty())
    value = num(answer.get<double>());
  h.tone = Tone::Good;
  h.text = fmt::format("{}: highest {} meeting it {}", join(texts, ", "), axis, value);
  // The binding constraint: the sweep's own when it names it, else the constraint with the
  // smallest margin at the answer (analysis::slo_margin, the search's own measure).
  std::string binding = string_of(find_key("slo_binding", {&sweep}));
  const json* at = point_at_load(sweep, answer.get<double>());
  if (binding.empty() && at != nullptr && !constraints.empty()) {
    const analysis::SloConstraint* tightest = nullptr;
    double smallest = std::numeric_limits<double>::infinity();
    for (const auto& c : constraints) {
      const double m = analysis::slo_margin(c, number_at(*at, c.metric));
      if (m < smallest) {
        smallest = m;
        tightest = &c;
      }
    }
    if (tightest != nullptr) {
      binding = fmt::format("{} ({} at the answer, {:.1f}% from its bound)",
                            analysis::to_string(*tightest), num(number_at(*at, tightest->metric)),
                            smallest * 100);
    }
  }
  if (!binding.empty())
    h.text += "; binding: " + binding;
  if (at != nullptr) {
    h.text +=
        fmt::format("; there {} output tok/s, {} req/s", num(number_at(*at, "output_throughput")),
                    num(number_at(*at, "request_throughput")));
  }
  h.detail = s.value("reason", "") + (h.detail.empty() ? "" : ". " + h.detail);
  if (!s.value("converged", true) || s.value("first_failing", json()).is_null())
    h.tone = Tone::Warn;  // HI met every constraint, or the budget ran out: a bound, not an answer
  return h;
}

// ---- the knee ----

Headline knee_headline(const json& knees) {
  Headline h{.key = "knee", .title = "Knee", .text = {}, .tone = Tone::Info, .detail = {}};
  std::vector<std::string> parts;
  for (const auto& k : knees) {
    if (!k.is_object())
      continue;
    const std::string group = k.value("group", "");
    std::string statement = string_of(find_key("knee_statement", {&k}));
    if (statement.empty()) {
      const json t = k.value("throughput_knee", json::object());
      const std::string axis = k.value("load_axis", "load");
      statement =
          t.value("found", false)
              ? fmt::format("throughput stops growing at {} {} ({} tok/s); saturation {} tok/s",
                            axis, num(number_at(t, "load")), num(number_at(t, "output_throughput")),
                            num(number_at(k, "saturation_output_throughput")))
              : fmt::format("no throughput knee: {}", t.value("reason", ""));
      const json l = k.value("latency_knee", json::object());
      if (l.value("found", false)) {
        statement +=
            fmt::format("; p99 TTFT takes off at {} tok/s ({} ms)",
                        num(number_at(l, "output_throughput")), num(number_at(l, "p99_ttft_ms")));
      }
    }
    parts.push_back(group.empty() ? statement : std::string(group).append(": ").append(statement));
  }
  h.text = join(parts, ". ");
  h.detail = knees.empty() ? "" : knees.front().value("method", "");
  return h;
}

// ---- counts over a sweep's points ----

/// "14 of 14 points invalid (most often: p99 ttft is not supported: ...)".
Headline validity_headline(const std::vector<RunVerdict>& verdicts) {
  std::size_t judged = 0;
  std::size_t invalid = 0;
  std::map<std::string, std::size_t> reasons;
  for (const auto& v : verdicts) {
    if (!v.valid)
      continue;
    ++judged;
    if (!*v.valid) {
      ++invalid;
      for (const auto& r : v.invalid_reasons) ++reasons[r];
    }
  }
  Headline h{.key = "validity", .title = "Validity", .text = {}, .tone = Tone::Good, .detail = {}};
  if (judged == 0)
    return h;
  if (invalid == 0) {
    h.text = fmt::format("all {} points valid", judged);
    return h;
  }
  const auto most =
      std::max_element(reasons.begin(), reasons.end(),
                       [](const auto& a, const auto& b) { return a.second < b.second; });
  h.tone = invalid == judged ? Tone::Bad : Tone::Warn;
  h.text = fmt::format("{} of {} points invalid; most often: {}", invalid, judged,
                       most != reasons.end() ? most->first : std::string());
  std::vector<std::string> all;
  all.reserve(reasons.size());
  for (const auto& [r, n] : reasons) all.push_back(fmt::format("{} ({} points)", r, n));
  h.detail = join(all, "; ");
  return h;
}

Headline stability_headline(const std::vector<RunVerdict>& verdicts,
                            const std::vector<std::string>& names) {
  std::map<std::string, std::vector<std::string>> by_state;
  std::size_t judged = 0;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].steadiness.empty())
      continue;
    ++judged;
    by_state[verdicts[i].steadiness].push_back(i < names.size() ? names[i] : "");
  }
  Headline h{
      .key = "stability", .title = "Stability", .text = {}, .tone = Tone::Good, .detail = {}};
  if (judged == 0)
    return h;
  std::vector<std::string> parts;
  for (const auto& [state, list] : by_state) {
    parts.push_back(fmt::format("{} {}", list.size(), state));
    if (state != "stable") {
      h.tone = Tone::Warn;
      h.detail += fmt::format("{}{}: {}", h.detail.empty() ? "" : "; ", state, join(list, ", "));
    }
  }
  h.text = fmt::format("{} of {} points: {}", judged, verdicts.size(), join(parts, ", "));
  return h;
}

Headline spikes_headline(const std::vector<RunVerdict>& verdicts,
                         const std::vector<std::string>& names) {
  std::size_t with = 0;
  std::size_t total = 0;
  std::vector<std::string> which;
  for (std::size_t i = 0; i < verdicts.size(); ++i) {
    if (verdicts[i].spikes == 0)
      continue;
    ++with;
    total += verdicts[i].spikes;
    which.push_back(
        fmt::format("{}: {}", i < names.size() ? names[i] : "", verdicts[i].spike_summary));
  }
  Headline h{.key = "spikes", .title = "Spikes", .text = {}, .tone = Tone::Good, .detail = {}};
  h.text = with == 0 ? std::string("no point had a p99 spike")
                     : fmt::format("{} spikes in {} of {} points", total, with, verdicts.size());
  h.tone = with == 0 ? Tone::Good : Tone::Warn;
  h.detail = join(which, "; ");
  return h;
}

}  // namespace

std::string_view to_string(Tone tone) noexcept {
  switch (tone) {
    case Tone::Good:
      return "good";
    case Tone::Warn:
      return "warn";
    case Tone::Bad:
      return "bad";
    case Tone::Info:
      break;
  }
  return "info";
}

RunVerdict run_verdict(const json& results, const json* point) {
  RunVerdict v;
  const std::initializer_list<const json*> docs{point, &results};
  if (const json* valid = find_key("valid", docs); valid != nullptr && valid->is_boolean())
    v.valid = valid->get<bool>();
  if (const json* reasons = find_key("invalid_reasons", docs);
      reasons != nullptr && reasons->is_array()) {
    for (const auto& r : *reasons) {
      if (r.is_string())
        v.invalid_reasons.push_back(r.get<std::string>());
    }
  }
  v.steadiness = string_of(find_key("steadiness", docs));
  if (v.steadiness.empty()) {
    if (const json* stable = find_key("stable", docs); stable != nullptr && stable->is_boolean())
      v.steadiness = stable->get<bool>() ? "stable" : "unstable";
  }
  v.steadiness_reason = string_of(find_key("steadiness_reason", docs));
  if (const json* i = find_key("interrupted", docs); i != nullptr && i->is_boolean())
    v.interrupted = i->get<bool>();
  if (const json* list = find_key("spike_list", docs); list != nullptr && list->is_array()) {
    v.spikes_known = true;
    v.spikes = list->size();
    v.spike_summary = spike_text(*list);
  }
  if (const std::string s = string_of(find_key("spike_summary", docs)); !s.empty()) {
    v.spikes_known = true;
    v.spike_summary = s;
  }
  const json* evaluated = find_key("batching_evaluated", docs);
  const json* fired = find_key("batching_failed", docs);
  if (fired != nullptr && fired->is_boolean() &&
      (evaluated == nullptr || !evaluated->is_boolean() || evaluated->get<bool>()))
    v.batching_failed = fired->get<bool>();
  v.batching_reason = string_of(find_key("batching_reason", docs));
  if (const json* c = find_key("client_saturated", docs); c != nullptr && c->is_boolean())
    v.client_saturated = c->get<bool>();
  if (const json* r = find_key("client_reasons", docs); r != nullptr && r->is_array()) {
    for (const auto& x : *r)
      v.client_reason += (v.client_reason.empty() ? "" : "; ") + value_text(x);
  }
  v.completed = number_at(results, "completed");
  v.failed = number_at(results, "failed");
  if (const auto f = results.find("failures_by_kind"); f != results.end() && f->is_object()) {
    for (const auto& [kind, n] : f->items())
      v.failures += fmt::format("{}{} {}", v.failures.empty() ? "" : ", ", kind, value_text(n));
  }
  return v;
}

std::vector<Badge> RunVerdict::badges() const {
  std::vector<Badge> out;
  if (valid) {
    out.push_back({"validity", *valid ? "valid" : "invalid", *valid ? Tone::Good : Tone::Bad,
                   join(invalid_reasons, "; ")});
  }
  if (!steadiness.empty()) {
    out.push_back({"steadiness", steadiness,
                   steadiness == "stable"      ? Tone::Good
                   : steadiness == "saturated" ? Tone::Bad
                                               : Tone::Warn,
                   steadiness_reason});
  }
  if (interrupted)
    out.push_back(
        {"interrupted", "interrupted", Tone::Bad, "ended early; its finished requests are kept"});
  if (failed > 0) {
    out.push_back({"failed", fmt::format("{} failed", num(failed)), Tone::Bad, failures});
  }
  if (spikes > 0)
    out.push_back({"spikes", fmt::format("{} spike{}", spikes, spikes == 1 ? "" : "s"), Tone::Warn,
                   spike_summary});
  else if (spikes_known)
    out.push_back({"spikes", "no spikes", Tone::Good, spike_summary});
  if (batching_failed) {
    out.push_back({"batching", *batching_failed ? "batching failed" : "batching held",
                   *batching_failed ? Tone::Bad : Tone::Good, batching_reason});
  }
  if (client_saturated)
    out.push_back({"client", "client saturated", Tone::Bad, client_reason});
  return out;
}

std::vector<Headline> run_headlines(const json& results, const RunVerdict& v) {
  std::vector<Headline> out;
  const auto ms = [&](const char* key) { return num(number_at(results, key)); };
  out.push_back(
      {"result", "Result",
       fmt::format("{} output tok/s at {} req/s; TTFT p50 {} / p99 {} ms; TPOT p50 {} / "
                   "p99 {} ms; E2EL p99 {} ms",
                   ms("output_throughput"), ms("request_throughput"), ms("median_ttft_ms"),
                   ms("p99_ttft_ms"), ms("median_tpot_ms"), ms("p99_tpot_ms"), ms("p99_e2el_ms")),
       Tone::Info,
       fmt::format("{} requests completed in {} s", num(v.completed),
                   num(number_at(results, "duration")))});
  if (v.failed > 0) {
    out.push_back({"failed", "Failures",
                   fmt::format("{} of {} requests failed: {}", num(v.failed),
                               num(v.failed + v.completed), v.failures),
                   Tone::Bad, ""});
  }
  if (v.valid && !*v.valid)
    out.push_back({"validity", "Invalid", join(v.invalid_reasons, "; "), Tone::Bad, ""});
  if (!v.steadiness.empty()) {
    out.push_back({"stability", "Stability",
                   v.steadiness + (v.steadiness_reason.empty() ? "" : ": " + v.steadiness_reason),
                   v.steadiness == "stable" ? Tone::Good : Tone::Warn, ""});
  }
  if (v.spikes_known) {
    out.push_back({"spikes", "Spikes",
                   v.spikes == 0 ? std::string("none (no window's p99 above 3 × the median window)")
                                 : v.spike_summary,
                   v.spikes == 0 ? Tone::Good : Tone::Warn, ""});
  }
  if (v.batching_failed) {
    out.push_back(
        {"batching", "Batching",
         (*v.batching_failed ? "dynamic batching failed: " : "batching held: ") + v.batching_reason,
         *v.batching_failed ? Tone::Bad : Tone::Good, ""});
  }
  if (v.client_saturated)
    out.push_back({"client", "Client saturated", v.client_reason, Tone::Bad,
                   "the client's own delays are in these latencies"});
  if (const std::string b = string_of(find_key("bottleneck", {&results})); !b.empty())
    out.push_back({"bottleneck", "Bottleneck", b, Tone::Info, ""});
  return out;
}

std::vector<Headline> sweep_headlines(const json& sweep, const std::vector<RunVerdict>& verdicts) {
  std::vector<Headline> out;
  std::vector<std::string> names;
  for (const auto& p : sweep.value("points", json::array())) {
    names.push_back(fmt::format("p{:02}", p.value("index", 0)));
  }
  if (sweep.contains("slo_search") && sweep["slo_search"].is_object())
    out.push_back(slo_headline(sweep));
  if (const auto k = sweep.find("knee"); k != sweep.end() && k->is_array() && !k->empty())
    out.push_back(knee_headline(*k));
  // One SLO search per engine setting: "setting: answer (binding; tok/s)" for each.
  if (const auto s = sweep.find("slo_settings"); s != sweep.end() && s->is_array()) {
    std::vector<std::string> parts;
    bool provisional = false;
    for (const auto& r : *s) {
      const json a = r.value("answer_rounded", json());
      provisional = provisional || r.value("provisional", false);
      parts.push_back(fmt::format("{}: {}{} ({}; {} tok/s)", r.value("setting", ""),
                                  a.is_number() ? num(a.get<double>()) : "none",
                                  r.value("provisional", false) ? " [provisional]" : "",
                                  r.value("binding_constraint", ""),
                                  num(number_at(r, "output_throughput"))));
    }
    const std::string axis =
        s->empty() ? "load" : s->front().value("/search/axis"_json_pointer, "");
    out.push_back({"slo_settings", "SLO answer per setting",
                   fmt::format("highest {} meeting the SLO: {}", axis, join(parts, "; ")),
                   provisional ? Tone::Warn : Tone::Info,
                   "one load search per setting, rounded down to the search's resolution"});
  }
  // Predict, then verify: the worst |predicted - measured| / measured per metric.
  if (const auto p = sweep.find("predict"); p != sweep.end() && p->is_object()) {
    std::vector<std::string> parts;
    const json worst = p->value("max_abs_error", json::object());
    for (const auto& [metric, e] : worst.items())
      parts.push_back(
          fmt::format("{} {}%", metric, e.is_number() ? num(100 * e.get<double>()) : "-"));
    out.push_back(
        {"predict", "Predicted against measured",
         fmt::format("{} setting(s) measured of {} predicted (ranked by {}); worst "
                     "error: {}",
                     p->value("verify_top", 0), p->value("settings", json::array()).size(),
                     p->value("ranked_by", ""), join(parts, ", ")),
         Tone::Info,
         "error = (predicted - measured) / measured; predictions in " +
             p->value("predicted_sweep", "")});
  }
  if (const auto p = sweep.find("profile"); p != sweep.end() && p->is_object()) {
    out.push_back(
        {"profile", "Profile",
         fmt::format("synchronous {} req/s, saturating {} req/s at max-concurrency {}{}",
                     num(number_at(*p, "synchronous_request_throughput")),
                     num(number_at(*p, "saturating_request_throughput")),
                     num(number_at(*p, "saturating_concurrency")),
                     p->value("saturated", false) ? "" : " (" + p->value("reason", "") + ")"),
         p->value("saturated", false) ? Tone::Info : Tone::Warn, p->value("rule", "")});
  }
  if (Headline h = validity_headline(verdicts); !h.text.empty())
    out.push_back(std::move(h));
  if (Headline h = stability_headline(verdicts, names); !h.text.empty())
    out.push_back(std::move(h));
  out.push_back(spikes_headline(verdicts, names));
  if (const auto p = sweep.find("pareto"); p != sweep.end() && p->is_object()) {
    const json pts = p->value("points", json::array());
    if (!pts.empty()) {
      const json& best = pts.front();  // by interactivity ascending: the most tok/s per GPU
      std::string axes;
      const json best_axes = best.value("axes", json::object());
      for (const auto& [a, val] : best_axes.items())
        axes += fmt::format("{}{}={}", axes.empty() ? "" : " ", a, value_text(val));
      out.push_back(
          {"pareto", "Pareto frontier",
           fmt::format("{} of {} points; most output per GPU {} tok/s at {} tok/s per "
                       "user ({})",
                       pts.size(), names.size(), num(number_at(best, "throughput_per_gpu")),
                       num(number_at(best, "interactivity")), axes),
           Tone::Info, p->value("y", "")});
    }
  }
  if (const std::string b = string_of(find_key("bottleneck", {&sweep})); !b.empty())
    out.push_back({"bottleneck", "Bottleneck", b, Tone::Info, ""});
  return out;
}

std::optional<bool> point_meets_slo(const json& sweep, const json& metrics, double load) {
  const auto constraints = slo_constraints(sweep);
  if (constraints.empty())
    return std::nullopt;
  for (const auto& p : sweep.value("/slo_search/points"_json_pointer, json::array())) {
    if (p.is_object() && number_at(p, "load") == load && p.contains("meets") &&
        p["meets"].is_boolean())
      return p["meets"].get<bool>();
  }
  for (const auto& c : constraints) {
    const double v = number_at(metrics, c.metric);
    if (std::isnan(v))
      return std::nullopt;
    if (analysis::slo_margin(c, v) < 0 ||
        ((c.op == analysis::SloOp::Lt || c.op == analysis::SloOp::Gt) &&
         analysis::slo_margin(c, v) <= 0))
      return false;
  }
  return true;
}

std::vector<std::string> broken_constraints(const json& sweep, const json& metrics) {
  std::vector<std::string> out;
  for (const auto& c : slo_constraints(sweep)) {
    const double v = number_at(metrics, c.metric);
    if (std::isnan(v))
      continue;  // not in the files: not judged here (point_meets_slo says so)
    const double m = analysis::slo_margin(c, v);
    const bool strict = c.op == analysis::SloOp::Lt || c.op == analysis::SloOp::Gt;
    if (m < 0 || (strict && m <= 0)) {
      const bool upper = c.op == analysis::SloOp::Le || c.op == analysis::SloOp::Lt;
      out.push_back(fmt::format("{} {} {} {}", c.metric, num(v), upper ? ">" : "<", num(c.bound)));
    }
  }
  return out;
}

}  // namespace llmbench::report
