// `llmbench probe comm`: NCCL collectives timed across this machine's GPUs (telemetry/nccl.hpp),
// fitted per collective, dtype and GPU count (sim/comm_model.hpp), printed like nccl-tests'
// tables with the fit's error at every size, and written as the `comm` section of a calibration
// file (sim/comm_calibration.hpp) that `simulate`, `serve` and `plan` take with --calibration.

#include "llmbench/app/calibration.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/telemetry_flags.hpp"
#include "llmbench/core/collective.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/log.hpp"
#include "llmbench/sim/comm_calibration.hpp"
#include "llmbench/sim/comm_model.hpp"
#include "llmbench/telemetry/nccl.hpp"

#include <fmt/core.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::cli {

namespace {

/// `llmbench probe comm`'s flags as typed.
struct ProbeCommFlags {
  std::string gpu_devices;
  std::string gpu_counts;
  std::string collectives;
  std::string dtypes = "bf16";
  std::string min_bytes = "4K";
  std::string max_bytes = "1G";
  int iters = telemetry::CommProbeOptions{}.iters;
  int warmup_iters = telemetry::CommProbeOptions{}.warmup_iters;
  double fit_tolerance = sim::CommFitOptions{}.tolerance;
  int max_segments = sim::CommFitOptions{}.max_pieces;
  std::string calibration_out;
  std::vector<std::string> cudart_library;
  std::vector<std::string> nccl_library;
};

/// "4096", "4K", "64M", "1G" (powers of 1024, as nccl-tests reads -b and -e).
std::int64_t parse_byte_size(const std::string& text, const char* flag) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  int shift = 0;
  if (ec == std::errc{} && ptr + 1 == end) {
    switch (*ptr) {
      case 'K':
      case 'k':
        shift = 10;
        break;
      case 'M':
      case 'm':
        shift = 20;
        break;
      case 'G':
      case 'g':
        shift = 30;
        break;
      default:
        shift = -1;
    }
  }
  if (ec != std::errc{} || value < 1 || shift < 0 || (ptr != end && shift == 0) ||
      value > (std::int64_t{1} << (40 - shift))) {
    throw Exception(Error{fmt::format("'{}' is not a size in bytes (e.g. 4096, 4K, 64M, 1G; at "
                                      "most 1T)",
                                      text),
                          flag, 0});
  }
  return value << shift;
}

/// Parses a comma list of names with `find`; errors name the flag, the item and the known names.
template <class T, class Find>
std::vector<T> parse_names(const std::string& text, const char* flag, Find find,
                           const std::string& known) {
  std::vector<T> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(',', start);
    if (end == std::string::npos)
      end = text.size();
    const std::string item = text.substr(start, end - start);
    const auto v = find(item);
    if (!v) {
      throw Exception(Error{fmt::format("'{}' is not one of {}", item, known), flag,
                            static_cast<std::int64_t>(start)});
    }
    out.push_back(*v);
    start = end + 1;
  }
  return out;
}

telemetry::CommProbeOptions resolve_probe_options(const ProbeCommFlags& f) {
  telemetry::CommProbeOptions o;
  o.cudart_libraries = f.cudart_library;
  o.nccl_libraries = f.nccl_library;
  if (!f.gpu_devices.empty()) {
    for (const unsigned d : parse_gpu_devices(f.gpu_devices))
      o.devices.push_back(static_cast<int>(d));
  }
  if (!f.gpu_counts.empty()) {
    try {
      for (const unsigned k : parse_gpu_devices(f.gpu_counts))
        o.gpu_counts.push_back(static_cast<int>(k));
    } catch (const Exception& e) {
      throw Exception(
          Error{"a comma list of GPU counts (e.g. 2,4,8)", "--gpu-counts", e.error().offset});
    }
  }
  if (!f.collectives.empty()) {
    o.collectives = parse_names<Collective>(
        f.collectives, "--collectives", [](const std::string& s) { return find_collective(s); },
        collective_names());
  }
  o.dtypes = parse_names<CommDtype>(
      f.dtypes, "--dtypes", [](const std::string& s) { return find_comm_dtype(s); },
      comm_dtype_names());
  o.min_bytes = parse_byte_size(f.min_bytes, "--min-bytes");
  o.max_bytes = parse_byte_size(f.max_bytes, "--max-bytes");
  o.iters = f.iters;
  o.warmup_iters = f.warmup_iters;
  telemetry::validate_comm_probe_options(o);
  if (!(f.fit_tolerance > 0 && f.fit_tolerance < 10))
    throw Exception(Error{"must be in (0, 10)", "--fit-tolerance", -1});
  if (f.max_segments < 1 || f.max_segments > 16)
    throw Exception(Error{"must be in 1..16", "--max-segments", -1});
  return o;
}

void print_setup(const telemetry::CommProbeSetup& s, const std::vector<int>& counts,
                 const telemetry::CommProbeOptions& o) {
  std::printf("# llmbench probe comm: NCCL %s (%s), CUDA runtime %d, driver %d (%s)\n",
              s.nccl_version.c_str(), s.nccl_library.c_str(), s.cuda_runtime_version,
              s.cuda_driver_version, s.cudart_library.c_str());
  for (const auto& d : s.devices) {
    std::printf("#   GPU %d: %s (compute capability %d.%d)\n", d.index, d.name.c_str(),
                d.compute_capability / 10, d.compute_capability % 10);
  }
  std::string env;
  for (const auto& [k, v] : s.nccl_env) env += fmt::format(" {}={}", k, v);
  std::string list;
  for (const int k : counts) list += (list.empty() ? "" : ", ") + std::to_string(k);
  std::printf(
      "# NCCL environment:%s\n# GPU counts: %s; sizes %lld..%lld B, x2; %d iterations "
      "after %d warm-up\n",
      env.c_str(), list.c_str(), static_cast<long long>(o.min_bytes),
      static_cast<long long>(o.max_bytes), o.iters, o.warmup_iters);
  std::printf(
      "# time: mean and p99 over iterations of the mean over GPUs (CUDA events); "
      "algbw = S/t, busbw = algbw x 2(n-1)/n (all_reduce) or (n-1)/n (nccl-tests)\n");
}

std::string bandwidth_text(const sim::CommPiece& p) {
  const double bw = p.bandwidth_gb_s();
  return std::isfinite(bw) ? fmt::format("{:.2f} GB/s", bw) : std::string("inf (no size term)");
}

/// One fit's table: every measured size with the fit and its error, then the fit's pieces.
void print_fit(const sim::CommFit& f) {
  std::printf("\n# %s %s over %d GPUs\n", std::string(to_string(f.collective)).c_str(),
              std::string(to_string(f.dtype)).c_str(), f.gpus);
  std::printf("%s\n", fmt::format("#{:>13} {:>12} {:>10} {:>10} {:>9} {:>9} {:>10} {:>7}", "size",
                                  "count", "mean", "p99", "algbw", "busbw", "fit", "error")
                          .c_str());
  std::printf("%s\n", fmt::format("#{:>13} {:>12} {:>10} {:>10} {:>9} {:>9} {:>10} {:>7}", "(B)",
                                  "(elements)", "(us)", "(us)", "(GB/s)", "(GB/s)", "(us)", "(%)")
                          .c_str());
  for (const auto& t : f.points) {
    double error_pct = 100 * sim::fit_error(f.curve, t);
    if (std::abs(error_pct) < 0.05)
      error_pct = 0;  // no "-0.0" for a rounding residue
    std::printf(
        "%s\n",
        fmt::format("{:>14} {:>12} {:>10.2f} {:>10.2f} {:>9.2f} {:>9.2f} {:>10.2f} {:>+7.1f}",
                    t.bytes, t.count, t.mean_us, t.p99_us, t.algbw_gb_s(), t.busbw_gb_s(),
                    f.curve.time_us(static_cast<double>(t.bytes)), error_pct)
            .c_str());
  }
  std::printf("# one line: %.2f us + S / %s, within %.1f %% of every size\n", f.line.latency_us,
              bandwidth_text(f.line).c_str(), 100 * f.line.max_error);
  std::printf("# curve (simulator): %zu segment%s, within %.1f %% of every size\n",
              f.curve.pieces.size(), f.curve.pieces.size() == 1 ? "" : "s",
              100 * f.curve.max_error());
  for (const auto& p : f.curve.pieces) {
    std::printf("#   %lld..%lld B: %.2f us + S / %s (within %.1f %%)\n",
                static_cast<long long>(p.min_bytes), static_cast<long long>(p.max_bytes),
                p.latency_us, bandwidth_text(p).c_str(), 100 * p.max_error);
  }
}

int execute_probe_comm(const ProbeCommFlags& f) {
  const telemetry::CommProbeOptions o = resolve_probe_options(f);
  const sim::CommFitOptions fit{.tolerance = f.fit_tolerance, .max_pieces = f.max_segments};
  if (!f.calibration_out.empty())
    sim::check_comm_calibration_output(f.calibration_out);  // before anything is measured
  const auto probe = telemetry::CommProbe::open(o);
  print_setup(probe->setup(), probe->gpu_counts(), o);
  std::fflush(stdout);
  const auto result = probe->run([](std::span<const CollectiveTiming> group) {
    if (!group.empty()) {
      log::info("measured {} {} over {} GPUs: {} sizes", to_string(group.front().collective),
                to_string(group.front().dtype), group.front().gpus, group.size());
    }
  });
  const sim::CommModel model = app::comm_model(result, o, fit);
  for (const auto& fitted : model.fits) print_fit(fitted);
  for (const auto& note : result.notes) std::printf("# note: %s\n", note.c_str());
  if (!f.calibration_out.empty() && !model.fits.empty())
    app::write_comm_section(f.calibration_out, model);
  if (!result.error.empty()) {
    std::fprintf(stderr,
                 "llmbench: error: probe comm stopped early: %s (the %zu sizes measured before "
                 "are printed above%s)\n",
                 result.error.c_str(), result.timings.size(),
                 f.calibration_out.empty() ? "" : " and written");
    return 1;
  }
  return 0;
}

}  // namespace

Command add_probe_command(CLI::App& app) {
  auto* probe = app.add_subcommand("probe", "Measure this machine for the simulator (probe comm)");
  probe->require_subcommand(1);
  auto* sub = probe->add_subcommand(
      "comm",
      "Time NCCL all-reduce, all-gather, reduce-scatter and all-to-all across the GPUs (as "
      "nccl-tests does), fit latency + size/bandwidth, write a calibration file's comm section");
  auto f = std::make_shared<ProbeCommFlags>();
  sub->add_option("--gpu-devices", f->gpu_devices,
                  "CUDA devices to use, e.g. 0,1,2,3 (default: all)");
  sub->add_option("--gpu-counts", f->gpu_counts,
                  "Sweep the first k devices for each k, e.g. 2,4,8 (default: 2, 4, ... and all)");
  sub->add_option("--collectives", f->collectives,
                  "Comma list of " + collective_names() + " (default: all)");
  sub->add_option("--dtypes", f->dtypes,
                  "Comma list of " + comm_dtype_names() +
                      " (FP8 needs NCCL 2.24+ and compute capability 9.0+)")
      ->capture_default_str();
  sub->add_option("--min-bytes", f->min_bytes, "Smallest size S (nccl-tests -b; K, M, G = 1024^n)")
      ->capture_default_str();
  sub->add_option("--max-bytes", f->max_bytes, "Largest size S (nccl-tests -e); sizes double")
      ->capture_default_str();
  sub->add_option("--iters", f->iters, "Timed iterations per size (nccl-tests -n)")
      ->capture_default_str();
  sub->add_option("--warmup-iters", f->warmup_iters, "Untimed iterations first (nccl-tests -w)")
      ->capture_default_str();
  sub->add_option("--fit-tolerance", f->fit_tolerance,
                  "Largest relative error of the fitted curve wanted at any size")
      ->capture_default_str();
  sub->add_option("--max-segments", f->max_segments,
                  "Most latency + size/bandwidth segments of a fitted curve")
      ->capture_default_str();
  sub->add_option("--calibration-out", f->calibration_out,
                  "Write the fits as the comm section of this calibration file (an existing "
                  "calibration file keeps its other sections)");
  sub->add_option("--cudart-library", f->cudart_library,
                  "CUDA runtime to dlopen (repeatable; default: libcudart.so, .so.13, .so.12, "
                  ".so.11.0)");
  sub->add_option("--nccl-library", f->nccl_library,
                  "NCCL to dlopen (repeatable; default: libnccl.so.2, libnccl.so)");
  return [f] { return execute_probe_comm(*f); };
}

}  // namespace llmbench::cli
