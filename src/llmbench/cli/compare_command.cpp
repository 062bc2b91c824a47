// `llmbench compare A B [C ...]`: each run against the baseline A (analysis/compare.hpp), as
// text, Markdown or JSON, and with `--gate` an exit code for CI: 0 every gate passed, 1 one
// failed, 2 bad input (cli::run_guarded). docs/compare.md has the statistics and the grammar.

#include "llmbench/analysis/compare.hpp"
#include "llmbench/analysis/gate.hpp"
#include "llmbench/app/compare_inputs.hpp"
#include "llmbench/app/compare_report.hpp"
#include "llmbench/app/what_if.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

struct CompareFlags {
  std::vector<std::string> files;
  std::string format = "text";
  std::optional<std::string> gate;  ///< set when --gate was given ("" alone: canary)
  std::size_t resamples = 2000;
  std::size_t block_requests = 0;  ///< 0: ⌈√n⌉
  double confidence = 0.95;
  double alpha = 0.05;
  std::uint64_t seed = 0;
};

int execute_compare(const CompareFlags& f) {
  const app::CompareFormat format = app::compare_format_from_string(f.format);
  if (f.files.size() < 2)
    throw Exception(Error{"needs a baseline and at least one run to compare", "RESULTS", -1});
  if (f.resamples == 0)
    throw Exception(Error{"must be at least 1", "--resamples", -1});
  require_in_range(f.confidence, 0.5, 0.9999, "--confidence", "a level in [0.5, 0.9999]");
  require_in_range(f.alpha, 1e-6, 0.5, "--alpha", "a significance level in [1e-6, 0.5]");
  std::vector<analysis::Gate> gates;
  if (f.gate) {
    auto parsed = analysis::parse_gates(f.gate->empty() ? "canary" : *f.gate);
    if (!parsed)
      throw Exception(parsed.error());
    gates = std::move(*parsed);
  }
  std::vector<app::CompareInput> inputs;
  inputs.reserve(f.files.size());
  for (const auto& path : f.files) inputs.push_back(app::read_compare_input(path));
  const analysis::CompareOptions options{
      .bootstrap = {.resamples = f.resamples, .confidence = f.confidence, .seed = f.seed},
      .block_requests = f.block_requests,
      .alpha = f.alpha};
  std::vector<app::RunComparison> comparisons;
  for (std::size_t i = 1; i < inputs.size(); ++i) {
    app::RunComparison c{.a = &inputs.front(), .b = &inputs[i]};
    c.metrics = analysis::compare_runs(inputs.front().samples, inputs[i].samples, options);
    c.gates = analysis::evaluate_gates(gates, c.metrics);
    c.what_if = app::what_if_of_results(inputs.front().results, inputs[i].results);
    comparisons.push_back(std::move(c));
  }
  const std::string out =
      format == app::CompareFormat::Json
          ? app::compare_json(comparisons, options).dump(2) + "\n"
          : app::compare_text(comparisons, options, format == app::CompareFormat::Markdown);
  std::fwrite(out.data(), 1, out.size(), stdout);
  if (!app::gates_passed(comparisons)) {
    for (const auto& c : comparisons) {
      for (const auto& g : c.gates) {
        if (!g.passed)
          std::fprintf(stderr, "llmbench: gate failed for %s: %s\n", c.b->path.c_str(),
                       g.message.c_str());
      }
    }
    return 1;
  }
  return 0;
}

}  // namespace

Command add_compare_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "compare",
      "Compare runs against a baseline: bootstrap intervals, rank test, verdicts, --gate");
  auto f = std::make_shared<CompareFlags>();
  sub->add_option("RESULTS", f->files,
                  "baseline A, then the runs compared with it: llmbench results JSON (with "
                  "their records), records .jsonl, or vllm bench serve --save-detailed results")
      ->required();
  sub->add_option("--format", f->format,
                  fmt::format("output: {} (default text)", app::valid_compare_formats()));
  sub->add_option("--gate", f->gate,
                  fmt::format("gates, exit 1 when one fails: 'canary' (the default when given "
                              "alone; regressions only: {}) and/or KEY:BOUND items such as "
                              "'p99_ttft_ms:+5%,mean_tpot_ms:+2ms' (docs/compare.md)",
                              analysis::kCanaryGate))
      ->expected(0, 1);
  sub->add_option("--resamples", f->resamples, "bootstrap resamples (default 2000)")
      ->check(non_negative_integer());
  sub->add_option("--block-requests", f->block_requests,
                  "requests per resampling block (default 0: the square root of the run's "
                  "requests; 1 resamples single requests, docs/compare.md \"Why blocks\")")
      ->check(non_negative_integer());
  sub->add_option("--confidence", f->confidence, "interval level (default 0.95)");
  sub->add_option("--alpha", f->alpha, "significance level of the rank test (default 0.05)");
  sub->add_option("--seed", f->seed, "seed of the bootstrap resampling (default 0)")
      ->check(non_negative_integer());
  return [f, sub] {
    if (sub->count("--gate") > 0 && !f->gate)
      f->gate = std::string();
    return execute_compare(*f);
  };
}

}  // namespace llmbench::cli
