#include "llmbench/report/html.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/report/report.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cctype>

namespace llmbench::report {

namespace {

/// Every fetch, script source, stylesheet, image, font, frame or connection from anywhere but
/// the page itself is refused by the browser (CSP Level 3 `default-src 'none'`); the inline
/// scripts and styles are the page. A refused load is a console error, which the browser test
/// fails on.
constexpr std::string_view kContentSecurityPolicy =
    "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:";

bool contains_script_end(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("</script") != std::string::npos;
}

}  // namespace

std::string escape_script_json(std::string_view json_text) {
  std::string out;
  out.reserve(json_text.size() + json_text.size() / 32);
  for (std::size_t i = 0; i < json_text.size(); ++i) {
    const char c = json_text[i];
    if (c == '<') {
      out += "\\u003c";
    } else if (c == '>') {
      out += "\\u003e";
    } else if (c == '&') {
      out += "\\u0026";
    } else if (c == '\xE2' && i + 2 < json_text.size() && json_text[i + 1] == '\x80' &&
               (json_text[i + 2] == '\xA8' || json_text[i + 2] == '\xA9')) {
      // U+2028 LINE SEPARATOR / U+2029 PARAGRAPH SEPARATOR, UTF-8 E2 80 A8 / E2 80 A9.
      out += json_text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string html_document(const nlohmann::json& data, const WebAssets& assets) {
  if (assets.chart_js.empty())
    throw Exception(Error{std::string(kChartLibraryMissing), "report", -1});
  if (contains_script_end(assets.chart_js) || contains_script_end(assets.report_js))
    throw Exception(Error{"an embedded script contains \"</script\"", "report", -1});
  const std::string title = data.value("title", "llmbench report");
  const std::string payload =
      escape_script_json(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  std::string html;
  html.reserve(payload.size() + assets.chart_js.size() + assets.report_js.size() + 8192);
  html += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  html += fmt::format("<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n",
                      kContentSecurityPolicy);
  html += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  html += fmt::format("<meta name=\"generator\" content=\"llmbench {}\">\n",
                      escape_html(data.value("/generator/version"_json_pointer, "")));
  html += "<title>" + escape_html(title) + "</title>\n";
  html += "<style>\n" + assets.chart_css + "\n</style>\n";
  html += "<style>\n" + assets.report_css + "\n</style>\n</head>\n<body>\n";
  html += "<header><h1>" + escape_html(title) + "</h1><p id=\"subtitle\"></p></header>\n";
  html += "<main id=\"report\"></main>\n";
  html +=
      "<noscript><p>This report draws its charts with JavaScript; the data is in the "
      "llmbench-data element of this file.</p></noscript>\n";
  html += fmt::format(
      "<footer><details><summary>Third-party notice: uPlot {} (MIT License), inlined</summary>"
      "<pre>{}</pre></details></footer>\n",
      escape_html(assets.chart_version), escape_html(assets.chart_license));
  html += "<script type=\"application/json\" id=\"llmbench-data\">" + payload + "</script>\n";
  html += "<script>\n" + assets.chart_js + "\n</script>\n";
  html += "<script>\n" + assets.report_js + "\n</script>\n";
  html += "</body>\n</html>\n";
  return html;
}

void write_html_report(const ReportInputs& inputs, const ReportOptions& options,
                       const std::string& path) {
  if (!chart_library_available())
    throw Exception(Error{std::string(kChartLibraryMissing), path, -1});
  write_text_file(path, html_document(report_data(inputs, options), web_assets()), "report");
}

}  // namespace llmbench::report
