#include "llmbench/sim/comm_calibration.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/sim/calibration_file.hpp"
#include "llmbench/sim/detail/calibration_json.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>

namespace llmbench::sim {

namespace {

using nlohmann::json;

constexpr std::string_view kTiming =
    "per size: mean and p99 over the timed iterations after warm-up; an iteration's time is the "
    "mean over the GPUs of the CUDA-event time of that iteration on each GPU's stream";
constexpr std::string_view kFitMethod =
    "t(S) = latency + S / bandwidth by weighted least squares on the relative error (weights "
    "1/t^2, parameters >= 0); segments: the fewest contiguous size ranges (each >= 2 sizes, at "
    "most max_pieces) whose largest relative error is within fit_tolerance, else the smallest "
    "largest error (dynamic programming)";

/// A number JSON can hold: non-finite values become null.
json number(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json piece_json(const CommPiece& p) {
  return {{"min_bytes", p.min_bytes},
          {"max_bytes", p.max_bytes},
          {"latency_us", p.latency_us},
          {"bandwidth_gb_s", number(p.bandwidth_gb_s())},
          {"max_error", p.max_error}};
}

json fit_json(const CommFit& f) {
  json segments = json::array();
  for (const auto& p : f.curve.pieces) segments.push_back(piece_json(p));
  json points = json::array();
  for (const auto& t : f.points) {
    points.push_back({{"bytes", t.bytes},
                      {"count", t.count},
                      {"iters", t.iters},
                      {"mean_us", t.mean_us},
                      {"p99_us", number(t.p99_us)},
                      {"min_us", number(t.min_us)},
                      {"max_us", number(t.max_us)},
                      {"algbw_gb_s", t.algbw_gb_s()},
                      {"busbw_gb_s", t.busbw_gb_s()},
                      {"fit_us", f.curve.time_us(static_cast<double>(t.bytes))},
                      {"error", fit_error(f.curve, t)}});
  }
  return {{"collective", to_string(f.collective)},
          {"dtype", to_string(f.dtype)},
          {"gpus", f.gpus},
          {"latency_us", f.line.latency_us},
          {"bandwidth_gb_s", number(f.line.bandwidth_gb_s())},
          {"max_error", f.line.max_error},
          {"segments", std::move(segments)},
          {"points", std::move(points)}};
}

json comm_json(const CommModel& m) {
  const CommMeasurement& s = m.measurement;
  json env = json::object();
  for (const auto& [k, v] : s.nccl_env) env[k] = v;
  json fits = json::array();
  for (const auto& f : m.fits) fits.push_back(fit_json(f));
  return {{"tool", s.tool},
          {"date", s.date},
          {"nccl_version", s.nccl_version},
          {"cuda_runtime_version", s.cuda_runtime_version},
          {"cuda_driver_version", s.cuda_driver_version},
          {"devices", s.devices},
          {"nccl_env", std::move(env)},
          {"iters", s.iters},
          {"warmup_iters", s.warmup_iters},
          {"timing", kTiming},
          {"fit_method", kFitMethod},
          {"fit_tolerance", s.fit.tolerance},
          {"max_pieces", s.fit.max_pieces},
          {"fits", std::move(fits)}};
}

/// Field reads with errors that name the path ("comm.fits[0].gpus").
class Reader {
 public:
  explicit Reader(const std::string& origin) : origin_(origin) {}
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Exception(Error{fmt::format("{}: {}", where, what), origin_, -1});
  }
  const json* find(const json& obj, const char* key) const {
    const auto it = obj.find(key);
    return it == obj.end() || it->is_null() ? nullptr : &*it;
  }
  double number(const json& obj, const char* key, const std::string& where, double min_value,
                std::optional<double> fallback = std::nullopt) const {
    const json* v = find(obj, key);
    if (v == nullptr) {
      if (fallback)
        return *fallback;
      fail(where + "." + key, "missing");
    }
    if (!v->is_number() || !(v->get<double>() >= min_value))
      fail(where + "." + key, fmt::format("must be a number ≥ {}", min_value));
    return v->get<double>();
  }
  std::int64_t integer(const json& obj, const char* key, const std::string& where,
                       std::int64_t min_value) const {
    const json* v = find(obj, key);
    if (v == nullptr)
      fail(where + "." + key, "missing");
    if (!v->is_number_integer() || v->get<std::int64_t>() < min_value)
      fail(where + "." + key, fmt::format("must be an integer ≥ {}", min_value));
    return v->get<std::int64_t>();
  }
  std::string text(const json& obj, const char* key, const std::string& where) const {
    const json* v = find(obj, key);
    if (v == nullptr)
      return {};
    if (!v->is_string())
      fail(where + "." + key, "must be a string");
    return v->get<std::string>();
  }
  /// `bandwidth_gb_s` → µs per byte (null or absent: 0, no growth with the size).
  double us_per_byte(const json& obj, const std::string& where) const {
    const json* v = find(obj, "bandwidth_gb_s");
    if (v == nullptr)
      return 0;
    if (!v->is_number() || !(v->get<double>() > 0))
      fail(where + ".bandwidth_gb_s", "must be a number > 0 or null");
    return 1.0 / (v->get<double>() * 1e3);
  }

 private:
  std::string origin_;
};

CommPiece read_piece(const Reader& r, const json& j, const std::string& where,
                     std::int64_t min_bytes, std::int64_t max_bytes) {
  if (!j.is_object())
    r.fail(where, "must be an object");
  CommPiece p;
  p.min_bytes = j.contains("min_bytes") ? r.integer(j, "min_bytes", where, 0) : min_bytes;
  p.max_bytes = j.contains("max_bytes") ? r.integer(j, "max_bytes", where, 0) : max_bytes;
  if (p.max_bytes < p.min_bytes)
    r.fail(where + ".max_bytes", "must be ≥ min_bytes");
  p.latency_us = r.number(j, "latency_us", where, 0);
  p.us_per_byte = r.us_per_byte(j, where);
  p.max_error = r.number(j, "max_error", where, 0, 0.0);
  return p;
}

void read_points(const Reader& r, const json& j, const std::string& where, CommFit& f) {
  const json* pts = r.find(j, "points");
  if (pts == nullptr)
    return;
  if (!pts->is_array())
    r.fail(where + ".points", "must be an array");
  for (std::size_t i = 0; i < pts->size(); ++i) {
    const json& p = (*pts)[i];
    const std::string at = fmt::format("{}.points[{}]", where, i);
    if (!p.is_object())
      r.fail(at, "must be an object");
    const double nan = std::nan("");
    f.points.push_back(CollectiveTiming{
        .collective = f.collective,
        .dtype = f.dtype,
        .gpus = f.gpus,
        .bytes = r.integer(p, "bytes", at, 1),
        .count = p.contains("count") ? r.integer(p, "count", at, 0) : 0,
        .iters = static_cast<int>(p.contains("iters") ? r.integer(p, "iters", at, 0) : 0),
        .mean_us = r.number(p, "mean_us", at, 0),
        .p99_us = r.number(p, "p99_us", at, 0, nan),
        .min_us = r.number(p, "min_us", at, 0, nan),
        .max_us = r.number(p, "max_us", at, 0, nan)});
  }
}

CommFit read_fit(const Reader& r, const json& j, const std::string& where) {
  if (!j.is_object())
    r.fail(where, "must be an object");
  CommFit f;
  const std::string c = r.text(j, "collective", where);
  const auto collective = find_collective(c);
  if (!collective)
    r.fail(where + ".collective", fmt::format("\"{}\" is not one of {}", c, collective_names()));
  f.collective = *collective;
  const std::string d = r.text(j, "dtype", where);
  const auto dtype = find_comm_dtype(d);
  if (!dtype)
    r.fail(where + ".dtype", fmt::format("\"{}\" is not one of {}", d, comm_dtype_names()));
  f.dtype = *dtype;
  f.gpus = static_cast<int>(r.integer(j, "gpus", where, 2));
  read_points(r, j, where, f);
  const std::int64_t lo = f.points.empty() ? 0 : f.points.front().bytes;
  const std::int64_t hi = f.points.empty() ? 0 : f.points.back().bytes;
  const json* segs = r.find(j, "segments");
  if (segs != nullptr) {
    if (!segs->is_array() || segs->empty())
      r.fail(where + ".segments", "must be a non-empty array");
    for (std::size_t i = 0; i < segs->size(); ++i) {
      f.curve.pieces.push_back(
          read_piece(r, (*segs)[i], fmt::format("{}.segments[{}]", where, i), lo, hi));
      if (i > 0 && f.curve.pieces[i].min_bytes < f.curve.pieces[i - 1].max_bytes)
        r.fail(fmt::format("{}.segments[{}].min_bytes", where, i),
               "segments must follow each other in increasing size");
    }
  }
  if (j.contains("latency_us")) {
    f.line = read_piece(r, j, where, lo, hi);
  } else if (!f.curve.pieces.empty()) {
    f.line = f.curve.pieces.front();
  }
  if (f.curve.pieces.empty()) {
    if (!j.contains("latency_us"))
      r.fail(where, "needs segments, or latency_us and bandwidth_gb_s");
    f.curve.pieces.push_back(f.line);
  }
  return f;
}

}  // namespace

namespace detail {

std::optional<CommModel> read_comm_section(const json& root, const std::string& origin) {
  const Reader r(origin);
  const json* comm = r.find(root, "comm");
  if (comm == nullptr)
    return std::nullopt;
  if (!comm->is_object())
    r.fail("comm", "must be an object");
  CommModel m;
  m.origin = origin;
  CommMeasurement& s = m.measurement;
  s.tool = r.text(*comm, "tool", "comm");
  s.date = r.text(*comm, "date", "comm");
  s.nccl_version = r.text(*comm, "nccl_version", "comm");
  if (const json* devices = r.find(*comm, "devices"); devices != nullptr) {
    if (!devices->is_array())
      r.fail("comm.devices", "must be an array of strings");
    for (const auto& d : *devices) {
      if (!d.is_string())
        r.fail("comm.devices", "must be an array of strings");
      s.devices.push_back(d.get<std::string>());
    }
  }
  if (const json* env = r.find(*comm, "nccl_env"); env != nullptr && env->is_object()) {
    for (const auto& [k, v] : env->items())
      s.nccl_env.emplace_back(k, v.is_string() ? v.get<std::string>() : v.dump());
  }
  const json* fits = r.find(*comm, "fits");
  if (fits == nullptr || !fits->is_array())
    r.fail("comm.fits", "must be an array");
  for (std::size_t i = 0; i < fits->size(); ++i)
    m.fits.push_back(read_fit(r, (*fits)[i], fmt::format("comm.fits[{}]", i)));
  return m;
}

}  // namespace detail

std::string write_comm_calibration(const CommModel& model, std::string_view existing,
                                   const std::string& origin) {
  json root = existing.empty() ? json{{"format", kCalibrationFormat},
                                      {"format_version", kCalibrationFormatVersion},
                                      {"target", json::object()}}
                               : detail::parse_calibration_root(existing, origin);
  root["comm"] = comm_json(model);
  return root.dump(2) + "\n";
}

void check_comm_calibration_output(const std::string& path) {
  namespace fs = std::filesystem;
  if (!fs::exists(path))
    return;
  if (!fs::is_regular_file(path))
    throw Exception(Error{"is not a file", path, -1});
  (void)parse_calibration(read_file(path, std::uint64_t{64} << 20).value(), path);
}

}  // namespace llmbench::sim
