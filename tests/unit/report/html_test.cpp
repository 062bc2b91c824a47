#include "llmbench/report/html.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/report/report_data.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace llmbench::report {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

/// Occurrences of `needle` in `text`.
std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

WebAssets fake_assets() {
  return WebAssets{.chart_js = "var uPlot = function () { return 1 < 2; };",
                   .chart_css = ".u-legend{}",
                   .chart_license = "MIT <c> & co",
                   .chart_version = "1.6.32",
                   .report_js = "console.log(0);",
                   .report_css = "body{}"};
}

/// The text of the data element of `html`.
std::string payload_of(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"llmbench-data\">";
  const auto start = html.find(open);
  EXPECT_NE(start, std::string::npos);
  const auto end = html.find("</script>", start);
  return html.substr(start + open.size(), end - start - open.size());
}

TEST(EscapeScriptJson, RemovesEveryWayOutOfTheScriptElementAndKeepsTheValue) {
  const json value = {{"model", "</script><script>alert(1)</script>"},
                      {"note", "<!-- a comment --> & \xE2\x80\xA8 line \xE2\x80\xA9 para"},
                      {"n", 3}};
  const std::string escaped = escape_script_json(value.dump(-1, ' ', false));
  EXPECT_EQ(escaped.find('<'), std::string::npos) << escaped;
  EXPECT_EQ(escaped.find('>'), std::string::npos);
  EXPECT_EQ(escaped.find('&'), std::string::npos);
  EXPECT_EQ(escaped.find("\xE2\x80\xA8"), std::string::npos);
  EXPECT_EQ(escaped.find("\xE2\x80\xA9"), std::string::npos);
  EXPECT_THAT(escaped, HasSubstr("\\u003c/script\\u003e"));
  EXPECT_THAT(escaped, HasSubstr("\\u2028 line \\u2029"));
  EXPECT_EQ(json::parse(escaped), value);  // the same value once parsed
}

TEST(EscapeScriptJson, LeavesOtherUtf8Alone) {
  EXPECT_EQ(escape_script_json("\"caf\xC3\xA9 \xE2\x82\xAC \xE2\x80\xA7\""),
            "\"caf\xC3\xA9 \xE2\x82\xAC \xE2\x80\xA7\"");  // é, €, and U+2027 (not a terminator)
}

TEST(EscapeHtml, EscapesTheFiveCharacters) {
  EXPECT_EQ(escape_html("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
}

TEST(HtmlDocument, EmbedsDataThatCannotCloseItsElement) {
  const json data = {{"title", "A <b>run</b>"},
                     {"generator", {{"version", "0.1.0"}}},
                     {"runs", {{{"name", "</script><script>alert(1)//"}}}}};
  const std::string html = html_document(data, fake_assets());
  // Only the three script elements end: the data, the chart library, the report code.
  EXPECT_EQ(count(html, "</script"), 3U);
  EXPECT_EQ(count(html, "<script"), 3U);
  EXPECT_EQ(json::parse(payload_of(html)), data);
  EXPECT_THAT(html, HasSubstr("<title>A &lt;b&gt;run&lt;/b&gt;</title>"));
  EXPECT_THAT(html, HasSubstr("content=\"default-src 'none';"));
  EXPECT_THAT(html, HasSubstr("uPlot 1.6.32 (MIT License)"));
  EXPECT_THAT(html, HasSubstr("<pre>MIT &lt;c&gt; &amp; co</pre>"));
  EXPECT_THAT(html, HasSubstr("var uPlot = function () { return 1 < 2; };"));  // verbatim
  EXPECT_LT(html.find("var uPlot"), html.find("console.log(0);"));  // library before its user
}

TEST(HtmlDocument, InvalidUtf8InTheDataIsReplacedNotFatal) {
  const json data = {{"title", "t"}, {"error", std::string("bad \xFF byte")}};
  const std::string html = html_document(data, fake_assets());
  EXPECT_EQ(json::parse(payload_of(html)).at("error"), "bad \xEF\xBF\xBD byte");
}

TEST(HtmlDocument, RefusesWithoutTheChartLibraryOrWithAnUnsafeScript) {
  auto assets = fake_assets();
  assets.chart_js.clear();
  try {
    (void)html_document(json::object(), assets);
    FAIL() << "no exception";
  } catch (const Exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("npm ci"));
    EXPECT_THAT(e.what(), HasSubstr("scripts/setup.sh"));
  }
  assets = fake_assets();
  assets.report_js = "var s = '</SCRIPT>';";
  EXPECT_THROW((void)html_document(json::object(), assets), Exception);
}

TEST(WebAssets, TheBuildEmbedsThePinnedChartLibrary) {
  // The build of this test ran npm ci (src/llmbench/report/CMakeLists.txt); without npm it
  // cannot, and the report command then names how to install it (tested above).
  if (!chart_library_available())
    GTEST_SKIP() << kChartLibraryMissing;
  const WebAssets a = web_assets();
  EXPECT_EQ(a.chart_version, "1.6.32");
  EXPECT_THAT(a.chart_js, HasSubstr("uPlot"));
  EXPECT_EQ(a.chart_js.find("http"), std::string::npos);  // banner URL dropped
  EXPECT_THAT(a.chart_license, HasSubstr("MIT License"));
  EXPECT_THAT(a.report_js, HasSubstr("llmbench-data"));
  EXPECT_GT(a.chart_js.size(), 40000U);
}

}  // namespace
}  // namespace llmbench::report
