// The HTML report in a real browser (issue 16 item 2; docs/report.md "Browser test"): a real
// `llmbench run` against the built-in simulated server, a `sweep --simulate` (a ladder with its
// knee, and an SLO search), and a report of three runs, each opened in Debian's headless
// Chromium with the network off. Each page must load with no console message at all, report
// every chart drawn (report.js sets data-status, data-points and data-ink, the canvas pixels in
// a series colour, on each chart), and give a screenshot. Without Chromium the tests skip, and
// fail under LLMBENCH_REQUIRE_SHARED_DATA=1 (CI, where .ci/run installs it).

#include "llmbench/core/file.hpp"

#include <gtest/gtest.h>

#include "process.hpp"
#include "shared_data.hpp"
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace llmbench::e2e {
namespace {

namespace fs = std::filesystem;

/// The Chromium binary: $LLMBENCH_CHROMIUM, else the first of the usual names on $PATH; "".
std::string find_chromium() {
  if (const char* env = std::getenv("LLMBENCH_CHROMIUM"); env != nullptr && *env != '\0')
    return env;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/bin";
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"}) {
    std::size_t start = 0;
    while (start <= dirs.size()) {
      const std::size_t end = std::min(dirs.find(':', start), dirs.size());
      const fs::path candidate = fs::path(dirs.substr(start, end - start)) / name;
      std::error_code ec;
      if (fs::is_regular_file(candidate, ec))
        return candidate.string();
      start = end + 1;
    }
  }
  return "";
}

/// One chart element of the dumped DOM: its data-* attributes.
using Chart = std::map<std::string, std::string>;

/// The `class="chart"` elements of `dom` by their data-chart id.
std::map<std::string, Chart> charts_of(const std::string& dom) {
  std::map<std::string, Chart> out;
  const std::regex tag(R"(<div class="chart[^"]*"([^>]*)>)");
  const std::regex attr(R"re(data-([a-z-]+)="([^"]*)")re");
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), tag); it != std::sregex_iterator();
       ++it) {
    Chart chart;
    const std::string attrs = (*it)[1];
    for (auto a = std::sregex_iterator(attrs.begin(), attrs.end(), attr);
         a != std::sregex_iterator(); ++a)
      chart[(*a)[1]] = (*a)[2];
    out[chart["chart"]] = chart;
  }
  return out;
}

/// The value of `data-NAME` on <body> in `dom` ("" when absent).
std::string body_attr(const std::string& dom, const std::string& name) {
  std::smatch m;
  const std::regex body("<body([^>]*)>");
  if (!std::regex_search(dom, m, body))
    return "";
  const std::string attrs = m[1];
  std::smatch a;
  if (std::regex_search(attrs, a, std::regex("data-" + name + "=\"([^\"]*)\"")))
    return a[1];
  return "";
}

class ReportBrowserTest : public ScratchDirTest {
 protected:
  ReportBrowserTest() : ScratchDirTest("browser") {}

  void SetUp() override {
    ScratchDirTest::SetUp();
    chromium_ = find_chromium();
  }

  /// Runs `llmbench ARGS` with its output in <dir>/<name>.log; returns the exit code.
  int llmbench(const std::string& name, std::vector<std::string> args) {
    args.insert(args.begin(), binary());
    Process p(args, (dir_ / (name + ".log")).string());
    return p.wait(std::chrono::seconds(180));
  }
  std::string log(const std::string& name) const {
    return read_file((dir_ / (name + ".log")).string());
  }

  /// Headless Chromium on `html` with the network off: `mode` "--dump-dom" (the DOM after the
  /// page's scripts ran, into <html>.dom) or "--screenshot=<png>". Its stderr (console messages
  /// with --enable-logging=stderr) goes to <html>.<what>.log. Returns the exit code.
  int chromium(const fs::path& html, const std::string& mode, const std::string& what) {
    const std::string out = html.string() + "." + what;
    const std::vector<std::string> argv{
        "/bin/sh",
        "-c",
        "exec \"$0\" --headless --no-sandbox --disable-gpu --hide-scrollbars "
        "--no-first-run --disable-extensions --disable-background-networking "
        "--host-resolver-rules='MAP * ~NOTFOUND' --proxy-server=127.0.0.1:9 "
        "--enable-logging=stderr --v=0 --window-size=1400,3600 --virtual-time-budget=10000 "
        "--user-data-dir=\"$1\" \"$2\" \"file://$3\" >\"$4\" 2>\"$5\"",
        chromium_,
        (dir_ / ("profile-" + what)).string(),
        mode,
        fs::absolute(html).string(),
        out,
        out + ".log"};
    Process p(argv, (dir_ / "chromium.log").string());
    return p.wait(std::chrono::seconds(120));
  }

  /// Opens `html` in Chromium and checks what the issue's acceptance asks: no network URL in
  /// the page outside its data, no console message, every chart of `expected` drawn (and no
  /// other chart empty or failed), a PNG screenshot. Returns the charts for further checks.
  std::map<std::string, Chart> check_page(const fs::path& html,
                                          const std::vector<std::string>& expected) {
    const std::string page = read_file(html.string());
    EXPECT_GT(page.size(), 40000U) << "chart library not inlined?";
    // The data is user text (a base URL, a model name); everything else is ours and must name
    // no network resource.
    const auto data_start = page.find("<script type=\"application/json\" id=\"llmbench-data\">");
    const auto data_end = page.find("</script>", data_start);
    EXPECT_NE(data_start, std::string::npos);
    const std::string code = page.substr(0, data_start) + page.substr(data_end);
    EXPECT_EQ(code.find("http://"), std::string::npos);
    EXPECT_EQ(code.find("https://"), std::string::npos);
    EXPECT_NE(page.find("default-src 'none'"), std::string::npos);

    EXPECT_EQ(chromium(html, "--dump-dom", "dom"), 0) << read_file(html.string() + ".dom.log");
    const std::string dom = read_file(html.string() + ".dom");
    const std::string console = read_file(html.string() + ".dom.log");
    EXPECT_EQ(console.find("CONSOLE"), std::string::npos) << console;
    EXPECT_EQ(body_attr(dom, "report-status"), "ready") << console;
    EXPECT_EQ(body_attr(dom, "errors"), "0") << body_attr(dom, "error-text");
    const auto charts = charts_of(dom);
    for (const auto& id : expected) {
      const auto it = charts.find(id);
      if (it == charts.end()) {
        ADD_FAILURE() << html << ": no chart " << id;
        continue;
      }
      const Chart& c = it->second;
      EXPECT_EQ(c.count("status") ? c.at("status") : "", "drawn") << html << " " << id;
      EXPECT_GT(std::atol(c.count("points") ? c.at("points").c_str() : "0"), 0) << id;
      EXPECT_GT(std::atol(c.count("ink") ? c.at("ink").c_str() : "0"), 50) << id;
    }
    for (const auto& [id, c] : charts) {
      EXPECT_EQ(c.count("status") ? c.at("status") : "", "drawn") << html << " " << id;
    }
    const fs::path png = html.string() + ".png";
    EXPECT_EQ(chromium(html, "--screenshot=" + png.string(), "shot"), 0);
    const std::string image = read_file(png.string());
    EXPECT_GT(image.size(), 10000U) << png;
    EXPECT_EQ(image.substr(0, 4), "\x89PNG");
    return charts;
  }

  /// The charts of a report of runs with records.
  static std::vector<std::string> run_charts() {
    return {"ttft-cdf",        "ttft-hist",     "tpot-cdf",  "tpot-hist",      "itl-cdf",
            "itl-hist",        "e2el-cdf",      "e2el-hist", "input-len-hist", "output-len-hist",
            "throughput-time", "inflight-time", "ttft-time", "itl-time",       "request-timeline"};
  }

  std::string chromium_;
};

#define LLMBENCH_NEED_CHROMIUM()                                                 \
  if (chromium_.empty())                                                         \
  return ::testing::internal::AssertHelper(                                      \
             ::llmbench::test::shared_data_missing_result(), __FILE__, __LINE__, \
             "needs chromium (.ci/run installs it)") = ::testing::Message()

/// The common load flags: a short run (about 2.5 s, so it has a few time windows) against the
/// built-in server with fixed timing.
std::vector<std::string> load_flags(const std::string& concurrency) {
  std::vector<std::string> args{"--max-concurrency", concurrency};
  std::istringstream words(
      "--num-prompts 60 --dataset-name random --random-input-len 96 --random-output-len 24 "
      "--random-range-ratio 0.5 --server-timing fixed --server-ttft-ms 15 --server-itl-ms 3 "
      "--request-rate 25 --quiet");
  for (std::string w; words >> w;) args.push_back(w);
  return args;
}

TEST_F(ReportBrowserTest, RunReportRendersEveryChart) {
  LLMBENCH_NEED_CHROMIUM() << "set LLMBENCH_CHROMIUM or install chromium";
  auto args = load_flags("8");
  args.insert(args.end(), {"--result-dir", (dir_ / "out").string(), "--save-result", "--report",
                           (dir_ / "run.html").string()});
  args.insert(args.begin(), "run");
  ASSERT_EQ(llmbench("run", args), 0) << log("run");
  check_page(dir_ / "run.html", run_charts());
}

TEST_F(ReportBrowserTest, SweepReportsRenderKneeSloAndEngineCharts) {
  LLMBENCH_NEED_CHROMIUM() << "set LLMBENCH_CHROMIUM or install chromium";
  const std::vector<std::string> sim{"--simulate",
                                     "--num-prompts",
                                     "200",
                                     "--dataset-name",
                                     "random",
                                     "--random-input-len",
                                     "512",
                                     "--random-output-len",
                                     "128",
                                     "--result-dir",
                                     (dir_ / "out").string()};
  auto ladder = sim;
  for (const char* a :
       {"--sweep", "max-concurrency=1,2,4,8,16,32,64,128", "--result-filename", "ladder.json"})
    ladder.emplace_back(a);
  ladder.push_back("--report");
  ladder.push_back((dir_ / "ladder.html").string());
  ladder.insert(ladder.begin(), "sweep");
  ASSERT_EQ(llmbench("ladder", ladder), 0) << log("ladder");
  auto expected = run_charts();
  for (const char* id : {"sweep-throughput", "sweep-p99_ttft_ms", "sweep-p99_tpot_ms", "sim-kv",
                         "sim-queue", "sim-preempt", "sim-prefix"})
    expected.emplace_back(id);
  check_page(dir_ / "ladder.html", expected);

  auto search = sim;
  for (const char* a : {"--sweep", "max-concurrency=1:64", "--slo", "p99_tpot_ms<=40",
                        "--result-filename", "search.json"})
    search.emplace_back(a);
  search.insert(search.begin(), "sweep");
  ASSERT_EQ(llmbench("search", search), 0) << log("search");
  ASSERT_EQ(llmbench("search-report", {"report", (dir_ / "out" / "search.sweep.json").string(),
                                       "-o", (dir_ / "search.html").string()}),
            0)
      << log("search-report");
  check_page(dir_ / "search.html", {"sweep-throughput", "sweep-p99_tpot_ms"});
}

TEST_F(ReportBrowserTest, ReportOfThreeRunsOverlaysThem) {
  LLMBENCH_NEED_CHROMIUM() << "set LLMBENCH_CHROMIUM or install chromium";
  std::vector<std::string> report{"report"};
  for (const std::string c : {"1", "4", "16"}) {
    auto args = load_flags(c);
    args.insert(args.end(), {"--result-dir", (dir_ / "out").string(), "--save-result",
                             "--result-filename", "c" + c + ".json"});
    args.insert(args.begin(), "run");
    ASSERT_EQ(llmbench("run" + c, args), 0) << log("run" + c);
    report.push_back((dir_ / "out" / ("c" + c + ".json")).string());
  }
  report.push_back("-o");
  report.push_back((dir_ / "three.html").string());
  ASSERT_EQ(llmbench("report", report), 0) << log("report");
  const auto charts = check_page(dir_ / "three.html", run_charts());
  // One series per run in every overlay (the timeline shows one run at a time).
  for (const char* id : {"ttft-cdf", "tpot-cdf", "itl-cdf", "e2el-cdf", "throughput-time"}) {
    ASSERT_TRUE(charts.count(id)) << id;
    EXPECT_EQ(charts.at(id).at("series"), "3") << id;
  }
  const std::string dom = read_file((dir_ / "three.html.dom").string());
  EXPECT_NE(dom.find("data-rows=\"3\""), std::string::npos);
}

}  // namespace
}  // namespace llmbench::e2e
