#pragma once
/// @file
/// The self-contained HTML report (docs/report.md): one file holding the report data as JSON
/// (`report_data`), the chart library and llmbench's chart code, with a Content-Security-Policy
/// that forbids every network request, so it opens from disk with the network off.

#include "llmbench/report/inputs.hpp"
#include "llmbench/report/report_data.hpp"
#include "llmbench/report/web_assets.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace llmbench::report {

/// `json_text` made safe as the content of an HTML `<script>` element (HTML Living Standard
/// §4.12.1.3, "Restrictions for contents of script elements"): every '<', '>' and '&' becomes its
/// JSON escape \u003c, \u003e, \u0026 (so no "</script" and no "<!--" can occur), and U+2028 and
/// U+2029 become \u2028 and \u2029 (line terminators in JavaScript before ES2019). Valid JSON
/// stays valid JSON with the same value: those characters only occur inside JSON strings.
std::string escape_script_json(std::string_view json_text);

/// `text` with &, <, >, " and ' replaced by character references, for HTML text and attributes.
std::string escape_html(std::string_view text);

/// The HTML document: `data` embedded (as `escape_script_json` of its dump; invalid UTF-8 in its
/// strings replaced by U+FFFD) in a `<script type="application/json" id="llmbench-data">`, the
/// assets inlined, the chart library's license in a "Third-party notice" section. Throws
/// `Exception` when `assets` has no chart library (`kChartLibraryMissing`) or a script asset
/// contains "</script" (it would end its element early).
std::string html_document(const nlohmann::json& data, const WebAssets& assets);

/// `html_document(report_data(inputs, options), web_assets())` written to `path` atomically
/// (a temporary file beside it renamed over it). Throws `Exception` naming the path on failure.
void write_html_report(const ReportInputs& inputs, const ReportOptions& options,
                       const std::string& path);

}  // namespace llmbench::report
