#include "llmbench/cli/simulate_flags.hpp"

namespace llmbench::cli {

void add_simulate_flags(CLI::App& app, SimulateFlags& f) {
  add_workload_flags(app, f);
  app.add_flag("--ignore-eos", f.ignore_eos,
               "Accepted for symmetry with run: the simulator always generates the full length");
  add_engine_flags(app, f.engine, "", "");
  app.add_option("--timeline-interval", f.timeline_interval_s,
                 "Seconds per window of the KV-cache / preemption / prefix-hit table (default: a "
                 "tenth of the simulated time)");
  app.add_flag("--save-result", f.save_result, "Write the results JSON");
  app.add_option("--result-dir", f.result_dir,
                 "Folder for the results JSON and its <stem>.records.jsonl (one record per "
                 "request, as run writes)");
  app.add_option("--result-filename", f.result_filename);
  app.add_option("--trace", f.trace_path,
                 "Write the engine steps as a Chrome trace (chrome://tracing, Perfetto)");
  add_window_flag(app, f.window_s);
}

}  // namespace llmbench::cli
