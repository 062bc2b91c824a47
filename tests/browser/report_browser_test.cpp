// The HTML report in a real browser (docs/report.md "Browser test"): the report of a real
// `llmbench run` against the built-in simulated server (with its /metrics scraped), of a
// `sweep --simulate` over two configurations and seven loads (and of an SLO search), and of two
// runs compared, each opened in Debian's headless Chromium with the network off. Each page must
// load with no console message at all, show what was run (a configuration card with its lines),
// the verdict badges and the answers as headlines, report every chart drawn (report.js sets
// data-status, data-points and data-ink, the canvas pixels in a series colour, on each chart),
// keep every sweep legend to its configurations, and give a screenshot. Without Chromium the
// tests skip, and fail under LLMBENCH_REQUIRE_SHARED_DATA=1 (CI, where .ci/run installs it).

#include "llmbench/core/file.hpp"

#include <gtest/gtest.h>

#include "process.hpp"
#include "shared_data.hpp"
#include <algorithm>
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

/// How many times `part` occurs in `text`.
std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + part.size()))
    ++n;
  return n;
}

/// The text of the first element with `attr` (e.g. `data-headline="knee"`) in `dom`: its
/// content up to the next '<' after the element's own text ("" when absent). The headline cards
/// hold a title div and a text div: the text is the second one's.
std::string headline_text(const std::string& dom, const std::string& key) {
  const auto card = dom.find("data-headline=\"" + key + "\"");
  if (card == std::string::npos)
    return "";
  const auto text = dom.find("class=\"headline-text\">", card);
  if (text == std::string::npos)
    return "";
  const auto start = text + std::string("class=\"headline-text\">").size();
  return dom.substr(start, dom.find("</div>", start) - start);
}

/// The text of the configuration line `key` (`<dd data-key="KEY">`) of the first card in `dom`.
std::string config_line(const std::string& dom, const std::string& key) {
  const std::string tag = "<dd data-key=\"" + key + "\">";
  const auto at = dom.find(tag);
  if (at == std::string::npos)
    return "";
  const auto start = at + tag.size();
  return dom.substr(start, dom.find("</dd>", start) - start);
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
        "--enable-logging=stderr --v=0 --window-size=1400,900 --virtual-time-budget=10000 "
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
    // What was run and what was found, above the charts: a configuration card with its lines,
    // verdict badges, and the answers as headlines.
    EXPECT_GE(count_of(dom, "class=\"config-card\""), 1U) << html;
    EXPECT_NE(config_line(dom, "model"), "") << html;
    EXPECT_NE(config_line(dom, "tool"), "") << html;
    EXPECT_GE(count_of(dom, "class=\"badge "), 1U) << html;
    EXPECT_GE(count_of(dom, "class=\"headline "), 1U) << html;
    const auto first_chart = dom.find("class=\"chart");
    EXPECT_LT(dom.find("class=\"config-card\""), first_chart);
    EXPECT_LT(dom.find("class=\"headline "), first_chart);
    // A legend never reads "--" (the live value of a chart without a cursor).
    EXPECT_EQ(dom.find("u-value\">--"), std::string::npos) << html;
    const fs::path png = html.string() + ".png";
    EXPECT_EQ(chromium(html, "--screenshot=" + png.string(), "shot"), 0);
    const std::string image = read_file(png.string());
    EXPECT_GT(image.size(), 10000U) << png;
    EXPECT_EQ(image.substr(0, 4), "\x89PNG");
    return charts;
  }
  std::string dom_of(const fs::path& html) const { return read_file(html.string() + ".dom"); }

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

TEST_F(ReportBrowserTest, RunReportShowsTheRunItsAnswersAndTheServerOverTime) {
  LLMBENCH_NEED_CHROMIUM() << "set LLMBENCH_CHROMIUM or install chromium";
  auto args = load_flags("8");
  args.insert(args.end(),
              {"--scrape-metrics", "--scrape-interval-ms", "200", "--result-dir",
               (dir_ / "out").string(), "--save-result", "--report", (dir_ / "run.html").string()});
  args.insert(args.begin(), "run");
  ASSERT_EQ(llmbench("run", args), 0) << log("run");
  auto expected = run_charts();
  // The scraped /metrics of the built-in server (fixed timing: vLLM's request and token
  // series), on the run's clock.
  for (const char* id : {"server-queue", "server-tokens"}) expected.emplace_back(id);
  check_page(dir_ / "run.html", expected);
  const std::string dom = dom_of(dir_ / "run.html");
  EXPECT_NE(config_line(dom, "load").find("60 prompts, 25 req/s (Poisson), max concurrency 8"),
            std::string::npos)
      << config_line(dom, "load");
  EXPECT_NE(config_line(dom, "engine").find("built-in simulated server, fixed timing: TTFT 15 ms"),
            std::string::npos)
      << config_line(dom, "engine");
  EXPECT_NE(config_line(dom, "host"), "not recorded");
  EXPECT_NE(headline_text(dom, "result").find("output tok/s at"), std::string::npos);
  EXPECT_NE(headline_text(dom, "stability"), "");
  EXPECT_NE(headline_text(dom, "spikes"), "");
}

TEST_F(ReportBrowserTest, SweepReportHasOneLinePerConfigurationAndAPointSelector) {
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
  // 14 points: two configurations × seven loads.
  auto ladder = sim;
  for (const char* a : {"--sweep", "max-num-seqs=32,256", "--sweep",
                        "max-concurrency=1,4,16,32,64,128,256", "--result-filename", "ladder.json"})
    ladder.emplace_back(a);
  ladder.push_back("--report");
  ladder.push_back((dir_ / "ladder.html").string());
  ladder.insert(ladder.begin(), "sweep");
  ASSERT_EQ(llmbench("ladder", ladder), 0) << log("ladder");
  const std::vector<std::string> sweep_charts{
      "sweep-throughput",         "sweep-ttft",  "sweep-tpot", "sweep-itl", "sweep-e2el",
      "sweep-latency-throughput", "sweep-pareto"};
  auto expected = sweep_charts;
  // The selected point's own charts, below the sweep (one point, not fourteen overlaid).
  for (const auto& id : run_charts()) expected.push_back("point-" + id);
  for (const char* id : {"point-sim-kv", "point-sim-queue"}) expected.emplace_back(id);
  const auto charts = check_page(dir_ / "ladder.html", expected);
  const std::string dom = dom_of(dir_ / "ladder.html");
  // No legend longer than the configurations: every sweep chart's legend has two entries.
  EXPECT_EQ(count_of(dom, "class=\"sweep-legend\""), sweep_charts.size());
  const auto legend = dom.find("class=\"sweep-legend\"");
  const std::string first = dom.substr(legend, dom.find("marker-key", legend) - legend);
  EXPECT_EQ(count_of(first, "class=\"chip\""), 2U) << first;
  EXPECT_NE(first.find("max_num_seqs 32"), std::string::npos) << first;
  // One line per configuration; two per latency chart (p50 and p99, the band between them).
  EXPECT_EQ(charts.at("sweep-throughput").at("series"), "2");
  for (const char* id : {"sweep-ttft", "sweep-tpot", "sweep-itl", "sweep-e2el"})
    EXPECT_EQ(charts.at(id).at("series"), "4") << id;
  EXPECT_EQ(count_of(dom, "class=\"point-select\""), 1U);
  EXPECT_EQ(count_of(dom, "<option value="), 14U) << "one option per point";
  // The knee per configuration, with what throughput did past it (docs/sweep.md "Knee").
  const std::string knee = headline_text(dom, "knee");
  EXPECT_NE(knee.find("max-num-seqs=32: knee at max-concurrency=32"), std::string::npos) << knee;
  EXPECT_NE(knee.find("throughput stops growing there"), std::string::npos) << knee;
  EXPECT_NE(knee.find("max-num-seqs=256: knee at max-concurrency=64"), std::string::npos) << knee;
  EXPECT_NE(headline_text(dom, "validity"), "");
  EXPECT_NE(headline_text(dom, "pareto"), "");
  EXPECT_NE(config_line(dom, "sweep")
                .find("14 points of max-num-seqs=32,256; "
                      "max-concurrency=1,4,16,32,64,128,256"),
            std::string::npos)
      << config_line(dom, "sweep");

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
  check_page(dir_ / "search.html", {"sweep-throughput", "sweep-tpot", "point-ttft-cdf"});
  const std::string sdom = dom_of(dir_ / "search.html");
  // (the DOM writes "<" as "&lt;")
  const std::string slo = headline_text(sdom, "slo");
  EXPECT_NE(slo.find("p99_tpot_ms&lt;=40: highest max-concurrency meeting it"), std::string::npos)
      << slo;
  EXPECT_NE(slo.find("binding: p99_tpot_ms&lt;=40"), std::string::npos) << slo;
}

TEST_F(ReportBrowserTest, ReportOfTwoRunsSaysWhatDiffersAndOverlaysThem) {
  LLMBENCH_NEED_CHROMIUM() << "set LLMBENCH_CHROMIUM or install chromium";
  std::vector<std::string> report{"report"};
  // The same load against two built-in server configurations; both results files are called
  // run.json, in two folders.
  for (const std::string itl : {"3", "6"}) {
    auto args = load_flags("8");
    const auto flag = std::find(args.begin(), args.end(), "--server-itl-ms");
    ASSERT_NE(flag, args.end());
    *(flag + 1) = itl;
    const fs::path out = dir_ / ("itl" + itl);
    args.insert(args.end(),
                {"--result-dir", out.string(), "--save-result", "--result-filename", "run.json"});
    args.insert(args.begin(), "run");
    ASSERT_EQ(llmbench("run" + itl, args), 0) << log("run" + itl);
    report.push_back((out / "run.json").string());
  }
  report.push_back("-o");
  report.push_back((dir_ / "two.html").string());
  ASSERT_EQ(llmbench("report", report), 0) << log("report");
  const auto charts = check_page(dir_ / "two.html", run_charts());
  // One series per run in every overlay (the timeline shows one run at a time).
  for (const char* id : {"ttft-cdf", "tpot-cdf", "itl-cdf", "e2el-cdf", "throughput-time"}) {
    ASSERT_TRUE(charts.count(id)) << id;
    EXPECT_EQ(charts.at(id).at("series"), "2") << id;
  }
  const std::string dom = dom_of(dir_ / "two.html");
  EXPECT_EQ(count_of(dom, "class=\"config-card\""), 2U);
  EXPECT_NE(dom.find("data-run=\"itl3/run\""), std::string::npos) << "distinct names";
  EXPECT_NE(dom.find("data-run=\"itl6/run\""), std::string::npos);
  EXPECT_NE(headline_text(dom, "differs").find("itl_ms 3 vs 6"), std::string::npos)
      << headline_text(dom, "differs");
  EXPECT_NE(dom.find("data-headline=\"change\""), std::string::npos);
  EXPECT_NE(dom.find("data-rows=\"2\""), std::string::npos);
}

}  // namespace
}  // namespace llmbench::e2e
