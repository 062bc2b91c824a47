// Measured communication in the simulator: the fit of latency + size / bandwidth (exact on
// exact data, pieces where NCCL changes regime, the tolerance and the hand-over between pieces),
// the calibration file's comm section (round trip, other sections kept, errors that name the
// field), the cost model's hook (measured terms replace exactly the datasheet's, nothing else
// moves), and TPOT moving by exactly the communication difference the fit predicts.

#include "llmbench/sim/comm_model.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/sim/calibration_file.hpp"
#include "llmbench/sim/comm_calibration.hpp"
#include "llmbench/sim/comm_traffic.hpp"
#include "llmbench/sim/cost_model.hpp"
#include "llmbench/sim/engine.hpp"
#include "llmbench/sim/engine_spec.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace llmbench::sim {
namespace {

const std::string kData = std::string(LLMBENCH_TEST_SOURCE_DIR) + "/data";

/// Timings t(S) = f(S) at S = 4 KB … 2^max_log2 B, as the probe would report them.
template <class F>
std::vector<CollectiveTiming> timings(Collective c, CommDtype d, int gpus, F f, int max_log2 = 30) {
  std::vector<CollectiveTiming> out;
  for (int e = 12; e <= max_log2; ++e) {
    const std::int64_t s = std::int64_t{1} << e;
    const double t = f(static_cast<double>(s));
    out.push_back(CollectiveTiming{.collective = c,
                                   .dtype = d,
                                   .gpus = gpus,
                                   .bytes = s,
                                   .count = s / 2,
                                   .iters = 50,
                                   .mean_us = t,
                                   .p99_us = 1.1 * t,
                                   .min_us = t,
                                   .max_us = 1.2 * t});
  }
  return out;
}

double line_us(double latency_us, double gb_s, double bytes) {
  return latency_us + bytes / (gb_s * 1e3);
}

TEST(CommFit, OneLineIsRecoveredExactly) {
  const auto pts = timings(Collective::AllReduce, CommDtype::Bf16, 8,
                           [](double s) { return line_us(20, 100, s); });
  const CommPiece p = fit_line(pts);
  EXPECT_NEAR(p.latency_us, 20, 1e-9);
  EXPECT_NEAR(p.bandwidth_gb_s(), 100, 1e-9);
  EXPECT_LT(p.max_error, 1e-12);
  EXPECT_EQ(p.min_bytes, 4096);
  EXPECT_EQ(p.max_bytes, std::int64_t{1} << 30);
  const CommCurve c = fit_curve(pts, CommFitOptions{});
  ASSERT_EQ(c.pieces.size(), 1U);
  EXPECT_NEAR(c.time_us(3e6), line_us(20, 100, 3e6), 1e-9);
}

TEST(CommFit, NegativeInterceptsAndSlopesAreClamped) {
  // Pure bandwidth with a tiny negative bias: the intercept would go below 0.
  auto pts = timings(Collective::AllGather, CommDtype::Bf16, 2, [](double s) { return s / 1e5; });
  pts.front().mean_us *= 0.9;
  const CommPiece a = fit_line(pts);
  EXPECT_EQ(a.latency_us, 0);
  EXPECT_GT(a.us_per_byte, 0);
  // Constant time that falls with the size: no negative slope, a pure latency.
  auto flat = timings(
      Collective::AllGather, CommDtype::Bf16, 2, [](double s) { return 30 - s * 1e-9; }, 16);
  const CommPiece b = fit_line(flat);
  EXPECT_EQ(b.us_per_byte, 0);
  EXPECT_NEAR(b.latency_us, 30, 0.01);
  EXPECT_TRUE(std::isinf(b.bandwidth_gb_s()));
}

/// Two regimes, as NCCL's protocols give: 10 µs + S/50 GB/s up to 64 KB, then 40 µs + S/200.
double two_regimes(double s) {
  return s <= 65536 ? line_us(10, 50, s) : line_us(40, 200, s);
}

TEST(CommFit, TwoRegimesGiveTwoExactPiecesWhereOneLineMisses) {
  const auto pts = timings(Collective::AllReduce, CommDtype::Bf16, 8, two_regimes);
  const CommPiece one = fit_line(pts);
  EXPECT_GT(one.max_error, 0.15);  // why the simulator uses pieces
  const CommCurve c = fit_curve(pts, CommFitOptions{.tolerance = 0.10, .max_pieces = 4});
  ASSERT_EQ(c.pieces.size(), 2U);
  EXPECT_EQ(c.pieces[0].min_bytes, 4096);
  EXPECT_EQ(c.pieces[0].max_bytes, 65536);
  EXPECT_EQ(c.pieces[1].min_bytes, 131072);
  EXPECT_NEAR(c.pieces[0].latency_us, 10, 1e-6);
  EXPECT_NEAR(c.pieces[0].bandwidth_gb_s(), 50, 1e-6);
  EXPECT_NEAR(c.pieces[1].latency_us, 40, 1e-6);
  EXPECT_NEAR(c.pieces[1].bandwidth_gb_s(), 200, 1e-6);
  EXPECT_LT(c.max_error(), 1e-9);
  for (const auto& t : pts) EXPECT_LT(std::abs(fit_error(c, t)), 1e-9);
  // The hand-over is at the geometric mean of 64 KB and 128 KB (92,682 B).
  EXPECT_NEAR(c.time_us(92000), line_us(10, 50, 92000), 1e-9);
  EXPECT_NEAR(c.time_us(93000), line_us(40, 200, 93000), 1e-9);
  // Outside the measured sizes the end pieces extrapolate.
  EXPECT_NEAR(c.time_us(1024), line_us(10, 50, 1024), 1e-9);
  EXPECT_NEAR(c.time_us(4e9), line_us(40, 200, 4e9), 1e-6);
}

TEST(CommFit, ToleranceAndPieceLimitDecide) {
  const auto pts = timings(Collective::AllReduce, CommDtype::Bf16, 8, two_regimes);
  // One piece allowed: the best single line (the same as fit_line).
  const CommCurve one = fit_curve(pts, CommFitOptions{.tolerance = 0.10, .max_pieces = 1});
  ASSERT_EQ(one.pieces.size(), 1U);
  EXPECT_NEAR(one.max_error(), fit_line(pts).max_error, 1e-12);
  // A loose tolerance is met by one line: the fewest pieces win.
  const CommCurve loose = fit_curve(pts, CommFitOptions{.tolerance = 10.0, .max_pieces = 4});
  EXPECT_EQ(loose.pieces.size(), 1U);
  // Noise of ±3 % alternating: the tolerance of 10 % holds at every size.
  auto noisy = pts;
  for (std::size_t i = 0; i < noisy.size(); ++i) noisy[i].mean_us *= i % 2 == 0 ? 1.03 : 0.97;
  const CommCurve c = fit_curve(noisy, CommFitOptions{});
  EXPECT_LE(c.max_error(), 0.10);
  for (const auto& t : noisy) EXPECT_LE(std::abs(fit_error(c, t)), 0.10 + 1e-12);
}

TEST(CommFit, GroupsByGpusCollectiveAndDtype) {
  std::vector<CollectiveTiming> all = timings(
      Collective::AllReduce, CommDtype::Bf16, 2, [](double s) { return line_us(8, 80, s); }, 20);
  const auto a2a = timings(
      Collective::AllToAll, CommDtype::Fp8E4M3, 8, [](double s) { return line_us(25, 60, s); }, 20);
  all.insert(all.end(), a2a.rbegin(), a2a.rend());  // out of order: sorted by the fit
  all.push_back(CollectiveTiming{.collective = Collective::AllGather,
                                 .gpus = 4,
                                 .bytes = 4096,
                                 .mean_us = 9});  // one size: no fit
  const auto fits = fit_comm(all, CommFitOptions{});
  ASSERT_EQ(fits.size(), 2U);
  EXPECT_EQ(fits[1].collective, Collective::AllToAll);
  EXPECT_EQ(fits[1].dtype, CommDtype::Fp8E4M3);
  EXPECT_EQ(fits[1].points.front().bytes, 4096);
  EXPECT_NEAR(fits[1].line.latency_us, 25, 1e-9);
  const CommModel m{.fits = fits};
  EXPECT_NE(m.find(Collective::AllReduce, 2, kAllReduceDtypes), nullptr);
  EXPECT_EQ(m.find(Collective::AllReduce, 8, kAllReduceDtypes), nullptr);
  EXPECT_EQ(m.find(Collective::AllToAll, 8, kAllReduceDtypes), nullptr);  // FP8 is not BF16
  const CommTerms t8 = comm_terms(m, 8, 8);
  EXPECT_FALSE(t8.all_reduce.has_value());
  ASSERT_TRUE(t8.all_to_all.has_value());  // bytes are bytes for the all-to-all
  EXPECT_TRUE(comm_terms(m, 2, 1).all_reduce.has_value());
  EXPECT_FALSE(comm_terms(m, 1, 1).all_reduce.has_value());
  EXPECT_EQ(m.gpu_counts(Collective::AllReduce), (std::vector<int>{2}));
}

CommModel sample_model() {
  auto pts = timings(Collective::AllReduce, CommDtype::Bf16, 8, two_regimes);
  const auto a2a = timings(Collective::AllToAll, CommDtype::Bf16, 8,
                           [](double s) { return line_us(30, 80, s); });
  pts.insert(pts.end(), a2a.begin(), a2a.end());
  CommModel m;
  m.measurement = CommMeasurement{.tool = "llmbench test",
                                  .date = "2026-12-01 12:00:00",
                                  .nccl_version = "2.24.3",
                                  .cuda_runtime_version = 12040,
                                  .cuda_driver_version = 12080,
                                  .devices = {"0: Fake H100 (compute capability 9.0)"},
                                  .nccl_env = {{"NCCL_NVLS_ENABLE", "0"}},
                                  .iters = 50,
                                  .warmup_iters = 5};
  m.fits = fit_comm(pts, m.measurement.fit);
  return m;
}

TEST(CommCalibration, RoundTripsEveryFitAndPoint) {
  const CommModel m = sample_model();
  const std::string text = write_comm_calibration(m, "", "out.json");
  const auto j = nlohmann::json::parse(text);
  EXPECT_EQ(j["format"], "llmbench-calibration");
  EXPECT_EQ(j["format_version"], 1);
  EXPECT_TRUE(j["target"].is_object());
  EXPECT_EQ(j["comm"]["nccl_env"]["NCCL_NVLS_ENABLE"], "0");
  EXPECT_EQ(j["comm"]["fits"][0]["segments"].size(), 2U);
  EXPECT_NEAR(j["comm"]["fits"][0]["points"][0]["busbw_gb_s"].get<double>(),
              4096 / (line_us(10, 50, 4096) * 1e3) * 2 * 7 / 8, 1e-12);
  const auto back = parse_calibration(text, "out.json").comm;
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->origin, "out.json");
  EXPECT_EQ(back->measurement.nccl_version, "2.24.3");
  EXPECT_EQ(back->measurement.devices, m.measurement.devices);
  ASSERT_EQ(back->fits.size(), m.fits.size());
  for (std::size_t i = 0; i < m.fits.size(); ++i) {
    const CommFit& a = m.fits[i];
    const CommFit& b = back->fits[i];
    EXPECT_EQ(a.collective, b.collective);
    EXPECT_EQ(a.gpus, b.gpus);
    ASSERT_EQ(a.curve.pieces.size(), b.curve.pieces.size());
    ASSERT_EQ(a.points.size(), b.points.size());
    for (const auto& t : a.points) {
      const double s = static_cast<double>(t.bytes);
      EXPECT_NEAR(a.curve.time_us(s), b.curve.time_us(s), 1e-9 * a.curve.time_us(s));
    }
    EXPECT_EQ(a.points[3].bytes, b.points[3].bytes);
    EXPECT_DOUBLE_EQ(a.points[3].p99_us, b.points[3].p99_us);
  }
}

TEST(CommCalibration, WritingIntoACalibrationFileKeepsItsOtherSections) {
  const std::string existing = R"({"format": "llmbench-calibration", "format_version": 1,
    "target": {"gpu": "h200", "tp": 8}, "cost_model": {"memory": 0.62},
    "comm": {"fits": []}})";
  const auto j = nlohmann::json::parse(write_comm_calibration(sample_model(), existing, "c.json"));
  EXPECT_EQ(j["target"]["gpu"], "h200");
  EXPECT_EQ(j["cost_model"]["memory"], 0.62);
  EXPECT_EQ(j["comm"]["fits"].size(), 2U);
  EXPECT_THROW((void)write_comm_calibration(sample_model(), R"({"format": "other"})", "c.json"),
               Exception);
}

std::string parse_error(const std::string& text) {
  try {
    (void)parse_calibration(text, "cal.json");
  } catch (const Exception& e) {
    return e.what();
  }
  return "";
}

TEST(CommCalibration, ErrorsNameTheFileAndTheField) {
  const std::string head = R"({"format": "llmbench-calibration", "format_version": 1, )";
  EXPECT_EQ(parse_error(R"({"format": "x"})"),
            "cal.json: format: not a calibration file (expected \"format\": "
            "\"llmbench-calibration\")");
  EXPECT_EQ(parse_error(R"({"format": "llmbench-calibration", "format_version": 2})"),
            "cal.json: format_version: this llmbench reads version 1");
  EXPECT_EQ(parse_error(head + R"("comm": {"fits": [{"collective": "all_reduce", "dtype": "bf16",
      "gpus": 8, "segments": [{"latency_us": -1, "bandwidth_gb_s": 100}]}]}})"),
            "cal.json: comm.fits[0].segments[0].latency_us: must be a number ≥ 0");
  EXPECT_EQ(parse_error(head + R"("comm": {"fits": [{"collective": "allreduce", "dtype": "bf16",
      "gpus": 8, "latency_us": 1}]}})"),
            "cal.json: comm.fits[0].collective: \"allreduce\" is not one of all_reduce, "
            "all_gather, reduce_scatter, all_to_all");
  EXPECT_EQ(parse_error(head + R"("comm": {"fits": [{"collective": "all_reduce", "dtype": "bf16",
      "gpus": 1, "latency_us": 1}]}})"),
            "cal.json: comm.fits[0].gpus: must be an integer ≥ 2");
  EXPECT_NE(parse_error("{oops").find("cal.json: invalid JSON"), std::string::npos);
  // A file without a comm section is a calibration file with nothing for the comm terms.
  EXPECT_FALSE(parse_calibration(head + R"("target": {}})", "cal.json").comm.has_value());
}

TEST(CommCalibration, OneFileCarriesTheEngineTermsAndTheCommSection) {
  // `calibrate` writes the engine terms, `probe comm` adds its section to the same file, and
  // the one reader gives both to the engine spec.
  const std::string engine_terms = R"({"format": "llmbench-calibration", "format_version": 1,
    "target": {"engine": "sglang", "gpu": "h200", "model_profile": "deepseek-r1", "tp": 8},
    "engine": {"max_num_seqs": 256}, "cost_model": {"compute": 0.15, "memory": 0.81},
    "serving": {"api_overhead_us": 91000}, "fit": {"summary": "conc fit"}})";
  const std::string both = write_comm_calibration(sample_model(), engine_terms, "cal.json");
  const Calibration c = parse_calibration(both, "cal.json");
  EXPECT_EQ(c.target.gpu, "h200");
  EXPECT_EQ(c.engine.max_num_seqs.value_or(0), 256);
  EXPECT_TRUE(c.has_cost_model);
  EXPECT_DOUBLE_EQ(c.cost_model.memory, 0.81);
  EXPECT_DOUBLE_EQ(c.serving.api_overhead_us, 91000);
  EXPECT_EQ(c.fit_summary, "conc fit");
  ASSERT_TRUE(c.comm.has_value());
  EXPECT_EQ(c.comm->fits.size(), 2U);
  EXPECT_EQ(c.comm->origin, "cal.json");
}

TEST(CommCalibration, AHandWrittenFitNeedsOnlyLatencyAndBandwidth) {
  const auto m = parse_calibration(
                     R"({"format": "llmbench-calibration", "format_version": 1, "comm": {"fits": [
        {"collective": "all_reduce", "dtype": "bf16", "gpus": 8, "latency_us": 25,
         "bandwidth_gb_s": 150},
        {"collective": "all_to_all", "dtype": "fp8_e4m3", "gpus": 8, "latency_us": 12,
         "bandwidth_gb_s": null}]}})",
                     "hand.json")
                     .comm;
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->fits.size(), 2U);
  EXPECT_NEAR(m->fits[0].curve.time_us(1.5e6), 25 + 1.5e6 / 150e3, 1e-9);
  EXPECT_EQ(m->fits[1].curve.time_us(1e9), 12);  // null bandwidth: no size term
}

/// DeepSeek-R1 FP8 on H200 at TP8 (and EP8 where asked), with or without a measured model.
ExecModelParams r1(int tp, int ep, int dp, const CommModel* comm) {
  ExecModelParams p;
  p.model = load_model_profile(kData, "deepseek-r1");
  p.gpu = load_hardware_profile(kData, "h200");
  p.tp = tp;
  p.ep = ep;
  p.dp = dp;
  p.efficiency = p.gpu.efficiency;
  if (comm != nullptr)
    p.comm = comm_terms(*comm, tp, ep);
  return p;
}

TEST(CommHook, MeasuredTermsReplaceExactlyTheDatasheetOnes) {
  const CommModel m = sample_model();
  BatchSums sums;
  sums.add_decodes(64, 64 * 2000);
  const StepCost ds = RooflineModel(r1(8, 8, 1, nullptr)).step_cost_of_sums(sums);
  const StepCost me = RooflineModel(r1(8, 8, 1, &m)).step_cost_of_sums(sums);
  const double h = 7168;
  // Datasheet: 2·61·(10 µs + 2·7/8·64·h·2 / 450 GB/s); measured: 2·61·t(64·h·2).
  EXPECT_NEAR(ds.allreduce_s, 122 * (10e-6 + 1.75 * 64 * h * 2 / 450e9), 1e-12);
  EXPECT_NEAR(me.allreduce_s, 122 * two_regimes(64 * h * 2) * 1e-6, 1e-12);
  // All-to-all per MoE layer: dispatch FP8 (1 B) and combine BF16 of 64/8 tokens × 8 experts.
  const double per_gpu = 64.0 / 8 * h * 8;
  EXPECT_NEAR(me.alltoall_s, 58 * (line_us(30, 80, per_gpu) + line_us(30, 80, 2 * per_gpu)) * 1e-6,
              1e-12);
  EXPECT_NEAR(ds.alltoall_s, 58 * (20e-6 + per_gpu * 3 * 7 / 8 / 450e9), 1e-12);
  // Nothing else moves.
  EXPECT_EQ(ds.fixed_s, me.fixed_s);
  EXPECT_EQ(ds.dense_linear_s, me.dense_linear_s);
  EXPECT_EQ(ds.moe_s, me.moe_s);
  EXPECT_EQ(ds.attention_decode_s, me.attention_decode_s);
  EXPECT_EQ(ds.lm_head_s, me.lm_head_s);
}

TEST(CommHook, DescribesWhichTermsWereMeasured) {
  const CommModel m = sample_model();
  const auto gpu = load_hardware_profile(kData, "h200");
  const auto measured = describe_comm_terms(&m, "comm.json", 8, 1, gpu, gpu.efficiency);
  ASSERT_EQ(measured.size(), 2U);
  EXPECT_TRUE(measured[0].measured);
  EXPECT_EQ(measured[0].detail,
            "measured: all_reduce bf16 on 8 GPUs, 2 segments, within 0.0 % of every measured size "
            "(comm.json; NCCL 2.24.3; 0: Fake H100 (compute capability 9.0))");
  EXPECT_FALSE(measured[1].used);
  EXPECT_EQ(measured[1].detail, "none (EP1)");
  const auto other = describe_comm_terms(&m, "comm.json", 4, 8, gpu, gpu.efficiency);
  EXPECT_FALSE(other[0].measured);
  EXPECT_EQ(other[0].detail,
            "datasheet: ring of 2(t-1)/t bytes, 10 µs + bytes / 450 GB/s link (comm.json has "
            "all_reduce for 8 GPUs, not 4)");
  EXPECT_TRUE(other[1].measured);
  const auto none = describe_comm_terms(nullptr, "", 8, 1, gpu, gpu.efficiency);
  EXPECT_NE(none[0].detail.find("(no --calibration)"), std::string::npos);
  const auto empty = describe_comm_terms(nullptr, "x.json", 8, 1, gpu, gpu.efficiency);
  EXPECT_NE(empty[0].detail.find("(x.json has no comm section)"), std::string::npos);
}

TEST(CommTraffic, TpAgainstDpEpPerForwardPass) {
  const auto model = load_model_profile(kData, "deepseek-r1");
  const auto gpu = load_hardware_profile(kData, "h200");
  const auto rows = forward_pass_traffic(model, gpu, gpu.efficiency, nullptr, 8, 1, 1, 256);
  ASSERT_EQ(rows.size(), 2U);
  const LayoutTraffic& tp = rows[0];
  EXPECT_EQ(tp.layout, "TP8");
  EXPECT_TRUE(tp.configured);
  EXPECT_EQ(tp.tokens, 256);
  EXPECT_EQ(tp.all_reduce_bytes, 256.0 * 7168 * 2);  // 3,670,016 B per all-reduce
  EXPECT_EQ(tp.all_reduces, 122);
  EXPECT_NEAR(tp.wire_bytes_per_gpu, 122 * 1.75 * 256 * 7168 * 2, 1e-3);
  EXPECT_NEAR(tp.all_reduce_s, 122 * (10e-6 + 1.75 * 256 * 7168 * 2 / 450e9), 1e-12);
  EXPECT_EQ(tp.all_to_alls, 0);
  const LayoutTraffic& ep = rows[1];
  EXPECT_EQ(ep.layout, "DP8+EP8");
  EXPECT_FALSE(ep.configured);
  EXPECT_EQ(ep.all_reduces, 0);
  EXPECT_EQ(ep.all_to_alls, 58);
  EXPECT_EQ(ep.dispatch_bytes, 32.0 * 8 * 7168);  // 32 tokens per GPU × top-8, FP8
  EXPECT_EQ(ep.combine_bytes, 2 * 32.0 * 8 * 7168);
  EXPECT_NEAR(ep.wire_bytes_per_gpu, 58 * 0.875 * 3 * 32 * 8 * 7168, 1e-3);
  EXPECT_NEAR(ep.all_to_all_s, 58 * (20e-6 + 0.875 * 3 * 32 * 8 * 7168 / 450e9), 1e-12);
  // A measured model prices the configured layout's all-reduce and the EP8 all-to-all.
  const CommModel m = sample_model();
  const auto measured = forward_pass_traffic(model, gpu, gpu.efficiency, &m, 8, 1, 1, 256);
  EXPECT_TRUE(measured[0].all_reduce_measured);
  EXPECT_NEAR(measured[0].all_reduce_s, 122 * two_regimes(256 * 7168 * 2) * 1e-6, 1e-12);
  EXPECT_TRUE(measured[1].all_to_all_measured);
  // A dense model's alternative is DP alone, which moves nothing.
  const auto dense = load_model_profile(kData, "deepseek-r1-distill-llama-70b");
  const auto d = forward_pass_traffic(dense, gpu, gpu.efficiency, nullptr, 4, 1, 1, 512);
  ASSERT_EQ(d.size(), 2U);
  EXPECT_EQ(d[1].layout, "DP4");
  EXPECT_EQ(d[1].wire_bytes_per_gpu, 0);
  EXPECT_EQ(d[1].comm_s(), 0);
}

/// Mean TPOT (s) of one request alone: decode steps of one token each.
double lone_tpot_s(const EngineSpec& spec) {
  SimOptions o;
  o.engine = spec.engine;
  Simulation sim(o, spec.make_exec_model());
  SimRequest request;
  request.prompt_len = 128;
  request.output_len = 33;
  const SimResult r = sim.run({request});
  const auto& chunks = r.records.at(0).chunks;
  return static_cast<double>(chunks.back().time_ns - chunks.front().time_ns) / 32 / 1e9;
}

TEST(CommHook, Tp8TpotMovesByTheCommunicationTheFitPredicts) {
  const CommModel m = sample_model();
  const auto path = std::filesystem::temp_directory_path() /
                    ("llmbench_comm_" + std::to_string(getpid()) + ".json");
  std::ofstream(path) << write_comm_calibration(m, "", path.string());
  EngineOverrides o;  // DeepSeek-R1 on 8 × H200, TP8
  const EngineSpec plain = load_engine_spec(kData, o);
  o.calibration = path.string();
  const EngineSpec measured = load_engine_spec(kData, o);
  std::filesystem::remove(path);
  ASSERT_TRUE(measured.comm.has_value());
  EXPECT_TRUE(measured.exec_params().comm.all_reduce.has_value());
  // Each decode step all-reduces h·2 = 14,336 B twice per layer: the TPOT moves by
  // 2·61·(t_measured − t_datasheet) at that size, to within the nanosecond rounding of steps.
  const double s = 7168 * 2;
  const double predicted = 122 * (two_regimes(s) - (10 + 1.75 * s / 450e3)) * 1e-6;
  EXPECT_NEAR(lone_tpot_s(measured) - lone_tpot_s(plain), predicted, 2e-9);
  EXPECT_GT(predicted, 2e-5);  // 28 µs: ten thousand times the rounding allowed
}

}  // namespace
}  // namespace llmbench::sim
