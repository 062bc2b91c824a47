#pragma once
/// @file
/// The JavaScript and CSS the HTML report inlines (docs/report.md "Chart library"), compiled into
/// the binary at build time by cmake/EmbedWebAssets.cmake, never fetched at run time: the chart
/// library uPlot (npm `uplot`, the version pinned by src/llmbench/report/web/package-lock.json,
/// installed into build/npm-report by CMake's configure step) and llmbench's own chart code
/// (src/llmbench/report/web/report.js, report.css).

#include <string>
#include <string_view>

namespace llmbench::report {

/// The inlined files, as bytes. The chart fields are empty when the build found no installed
/// `uplot` package (`chart_library_available()` is then false).
struct WebAssets {
  std::string
      chart_js;  ///< uPlot's minified IIFE build (`dist/uPlot.iife.min.js`), banner line dropped
  std::string chart_css;      ///< `dist/uPlot.min.css`
  std::string chart_license;  ///< uPlot's LICENSE (MIT: the notice travels with every copy)
  std::string chart_version;  ///< the installed package's `version` ("" when absent)
  std::string report_js;      ///< report.js: reads the embedded data, draws every chart
  std::string report_css;     ///< report.css: page layout
};

/// True when the build embedded the chart library (npm `uplot` was installed at configure time).
bool chart_library_available() noexcept;

/// The embedded files (a copy: about 60 KB).
WebAssets web_assets();

/// Why the HTML report cannot be written without the chart library, and how to install it.
inline constexpr std::string_view kChartLibraryMissing =
    "this llmbench was built without the HTML report's chart library (npm package uplot, "
    "pinned in src/llmbench/report/web/package-lock.json): install node and npm "
    "(apt-get install nodejs npm), then run scripts/setup.sh, or `npm ci` in "
    "build/npm-report with that package.json and package-lock.json, and re-run cmake; "
    "--format csv and --format markdown work without it";

}  // namespace llmbench::report
