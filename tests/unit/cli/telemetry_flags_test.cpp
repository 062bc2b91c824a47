// `run`'s telemetry flags (cli/telemetry_flags.hpp): the optional values and the device list.

#include "llmbench/cli/telemetry_flags.hpp"

#include "llmbench/core/error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>

namespace llmbench::cli {
namespace {

TelemetryFlags parse(std::vector<std::string> args) {
  CLI::App app;
  TelemetryFlags f;
  add_telemetry_flags(app, f);
  std::reverse(args.begin(), args.end());  // CLI11 takes the arguments reversed
  app.parse(args);
  return f;
}

TEST(TelemetryFlags, OptionalValues) {
  EXPECT_FALSE(parse({}).gpu_telemetry_ms.has_value());
  EXPECT_FALSE(parse({}).scrape_metrics.has_value());
  EXPECT_EQ(parse({"--gpu-telemetry"}).gpu_telemetry_ms, 100);
  EXPECT_EQ(parse({"--gpu-telemetry=25"}).gpu_telemetry_ms, 25);
  EXPECT_EQ(parse({"--scrape-metrics"}).scrape_metrics, "");
  EXPECT_EQ(parse({"--scrape-metrics=http://h:1/m"}).scrape_metrics, "http://h:1/m");
  EXPECT_EQ(parse({"--scrape-metrics", "--gpu-telemetry"}).scrape_metrics, "");
  EXPECT_THROW(parse({"--gpu-telemetry=0"}), CLI::ValidationError);
  const auto j = telemetry_flags_json(parse({"--gpu-telemetry=25", "--gpu-devices", "1"}));
  EXPECT_EQ(j.at("gpu_telemetry"), 25);
  EXPECT_EQ(j.at("gpu_devices"), "1");
  EXPECT_TRUE(j.at("scrape_metrics").is_null());
  EXPECT_EQ(j.at("scrape_interval_ms"), 500);
}

TEST(TelemetryFlags, DeviceList) {
  EXPECT_EQ(parse_gpu_devices("0"), (std::vector<unsigned int>{0}));
  EXPECT_EQ(parse_gpu_devices("0, 2,7"), (std::vector<unsigned int>{0, 2, 7}));
  try {
    static_cast<void>(parse_gpu_devices("0,x1,2"));
    FAIL() << "no error";
  } catch (const Exception& e) {
    EXPECT_STREQ(e.what(), "--gpu-devices: 'x1' is not a GPU index (valid: 0,1,...) (at byte 2)");
  }
  EXPECT_THROW(static_cast<void>(parse_gpu_devices("1,")), Exception);
  EXPECT_THROW(static_cast<void>(parse_gpu_devices("-1")), Exception);
}

}  // namespace
}  // namespace llmbench::cli
