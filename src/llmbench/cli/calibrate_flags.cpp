#include "llmbench/cli/calibrate_flags.hpp"

#include "llmbench/app/session.hpp"
#include "llmbench/cli/run_flags.hpp"
#include "llmbench/cli/run_plan.hpp"
#include "llmbench/core/clock.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"

#include <fmt/core.h>

#include <filesystem>

namespace llmbench::cli {

void add_calibrate_flags(CLI::App& app, CalibrateFlags& f) {
  app.add_option("inputs", f.inputs,
                 "Points to fit: llmbench results JSON (records beside it give per-request "
                 "lengths), vllm bench serve --save-result JSON, SGLang bench_serving JSON(L), or "
                 "a CSV of points (tests/data/calibration/README.md)");
  app.add_option("--base-url", f.base_url,
                 "Probe this live server (at most 20 short probes) and fit to the probes");
  app.add_option("--model", f.model, "Served model name for the probes (default: the first)");
  app.add_option("--backend", f.backend, "Request dialect of the probes")->capture_default_str();
  app.add_option("--tokenizer", f.tokenizer, "Tokenizer for exact probe prompt lengths");
  add_engine_flags(app, f.engine, "", "");
  app.add_option("--max-prefill-tokens", f.engine.max_prefill_tokens,
                 "SGLang --max-prefill-tokens of the server (engine sglang)");
  app.add_option("--num-continuous-decode-steps", f.engine.num_continuous_decode_steps,
                 "SGLang --num-continuous-decode-steps of the server (engine sglang)");
  app.add_option("--stream-interval", f.engine.stream_interval,
                 "SGLang --stream-interval of the server (recorded)");
  app.add_option("--ctx-size", f.engine.context_size,
                 "llama.cpp --ctx-size of the server: KV cells of all slots (engine llamacpp)");
  app.add_option("--kv-cache-dtype", f.engine.kv_cache_dtype, "auto or fp8");
  app.add_option("--engine-version", f.engine_version,
                 "Engine version recorded in the calibration file (default: what the server "
                 "reports, else unknown)");
  app.add_option("--num-gpus", f.num_gpus,
                 "GPUs the per-GPU throughput of summary files divides by (default tp x dp)");
  app.add_option("--select", f.select,
                 "Use only points whose tag KEY has one of the VALUEs (KEY=VALUE[,VALUE...], "
                 "repeatable, all must match)");
  app.add_option("--holdout", f.holdout,
                 "Never fit on points matching KEY=VALUE[,VALUE...] (repeatable, any matches): "
                 "they are predicted and their error reported apart");
  app.add_option("--fit", f.fit,
                 "Parameters to fit (default all: compute, memory, attention, step_overhead_us, "
                 "request_overhead_us, api_overhead_us, first_step_overhead_us; llamacpp also "
                 "moe_expert_overhead_us with an MoE model, vec_score_overhead_us on a CPU host)")
      ->delimiter(',');
  app.add_option("--jobs", f.jobs, "Points simulated at once")->capture_default_str();
  app.add_option("-o,--output", f.output, "Calibration file to write")->capture_default_str();
  app.add_flag("--evaluate", f.evaluate,
               "Do not fit: predict every point with the engine as given (e.g. --calibration "
               "FILE) and print the errors");
  app.add_option("--probe-dir", f.probe_dir,
                 "Folder for the probes' results files (default: <output stem>.probes)");
  app.add_option("--max-probe-seconds", f.max_probe_s, "Time budget of the live probes")
      ->capture_default_str();
  app.add_option("--probe-output-len", f.probe_output_len, "Output tokens of the decode probes")
      ->capture_default_str();
  app.add_option("--probe-concurrency", f.probe_concurrency,
                 "Largest probe concurrency (default: the server's slots, else 16)");
  app.add_option("--probe-max-input", f.probe_max_input, "Longest probe prompt, tokens")
      ->capture_default_str();
}

std::vector<calib::Point> run_probes(const CalibrateFlags& f, const std::vector<calib::Probe>& plan,
                                     const std::string& probe_dir, int num_gpus) {
  std::filesystem::create_directories(probe_dir);
  app::Session session;
  const ResolveEnv env = ResolveEnv::current();
  std::vector<calib::Point> points;
  const TimeNs start = steady_now_ns();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const double elapsed = ns_to_s(steady_now_ns() - start);
    if (elapsed > f.max_probe_s) {
      log::warn("probe time budget of {:.0f} s spent: {} of {} probes skipped", f.max_probe_s,
                plan.size() - i, plan.size());
      break;
    }
    const calib::Workload& w = plan[i].workload;
    RunFlags r;
    r.base_url = f.base_url;
    r.model = f.model;
    r.backend = f.backend;
    r.tokenizer = f.tokenizer;
    r.dataset_name = "random";
    r.random_input_len = w.input_max;
    r.random_output_len = w.output_max;
    r.random_range_ratio = 0;
    r.num_prompts = w.num_prompts;
    r.max_concurrency = w.max_concurrency;
    r.ignore_eos = true;
    r.seed = i + 1;  // fresh prompts per probe: no prefix-cache hits across probes
    r.save_result = true;
    r.result_dir = probe_dir;
    r.result_filename = fmt::format("probe-{:02}-{}.json", i + 1, plan[i].kind);
    r.quiet = true;
    log::info("probe {}/{} ({}): {} in / {} out, concurrency {}, {} requests", i + 1, plan.size(),
              plan[i].kind, w.input_max, w.output_max, w.max_concurrency, w.num_prompts);
    const app::RunResult result = session.run(resolve_run(r, env));
    if (result.results_path.empty() || result.analysis.summary.completed == 0) {
      log::warn("probe {} completed no request; left out of the fit", i + 1);
      continue;
    }
    for (auto& p : calib::read_points_file(result.results_path.string(), num_gpus)) {
      p.tags["probe"] = plan[i].kind;
      p.tags["source"] = f.base_url;
      p.label = fmt::format("{} {}", plan[i].kind, p.label);
      points.push_back(std::move(p));
    }
  }
  log::info("probes took {:.1f} s", ns_to_s(steady_now_ns() - start));
  return points;
}

}  // namespace llmbench::cli
