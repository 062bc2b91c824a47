// Encode speed of llmbench::tokenizer on DeepSeek-V3 (MB/s of UTF-8 input and tokens/s) over five
// corpus parts built from ../shared/data:
//   english:      long_context/gutenberg/08_alice_in_wonderland.txt (150 KB)
//   code:         prompts/code_alpaca/python_code_alpaca_subset.jsonl(.zst), "expected_output"
//                 fields concatenated up to 150 KB
//   chinese:      long_context/chinese_classics/mengzi.json, paragraphs joined by newlines
//   multilingual: multilingual/flores200_devtest/{deu,fra,spa,rus,hin,ben,tam,urd}, the first
//                 ~20 KB (whole lines) of each language
//   mixed:        the four above interleaved, in documents of about 4 KB (split at line ends)
//
// Modes:
//   tokenizer_bench [Google Benchmark flags]   single-thread encode per part (rates per CPU s)
//   tokenizer_bench --write-corpus=DIR         writes DIR/<part>.jsonl, one {"text": ...} per
//                                              document (for hf_bench.mjs), and exits
//   tokenizer_bench --figures [--seconds=S] [--threads=1,2]
//       one JSON object per line on stdout (bench/tokenizer/report.mjs tabulates them):
//       {"kind":"memory"}: Tokenizer::memory_bytes() and the RSS growth of loading (VmRSS of
//         /proc/self/status before and after `Tokenizer::load`, freed heap given back with
//         malloc_trim first); {"kind":"single"} per part: `Tokenizer::encode` (ids only) of each
//         document in turn on one thread with one Scratch, after one warm-up pass, repeated for
//         at least S seconds (default 1); {"kind":"batch"} per thread count:
//         `Tokenizer::encode_batch` of the mixed documents. Rates are per wall-clock second;
//         "cpu_mb_s" is per CPU second of the process.
//
// Environment: LLMBENCH_SHARED_DATA (default ../shared/data from the source tree),
// LLMBENCH_TOKENIZER (default <shared>/tokenizers/deepseek-v3, .zst unpacked to /tmp).

#include "llmbench/tokenizer/tokenizer.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <malloc.h>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

namespace fs = std::filesystem;
using llmbench::tokenizer::Tokenizer;

fs::path shared_data() {
  if (const char* env = std::getenv("LLMBENCH_SHARED_DATA")) {
    return env;
  }
  return fs::path(LLMBENCH_BENCH_SOURCE_DIR) / ".." / "shared" / "data";
}

// Reads `rel` under the shared data, decompressing `rel.zst` with zstd when only that exists.
std::string read_data(const std::string& rel) {
  const fs::path p = shared_data() / rel;
  std::error_code ec;
  if (fs::exists(p, ec)) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  const std::string cmd = "zstd -dc '" + p.string() + ".zst'";
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[1 << 16];
    std::size_t n = 0;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) {
      out.append(buf, n);
    }
    pclose(f);
  }
  if (out.empty()) {
    std::fprintf(stderr, "tokenizer_bench: cannot read %s(.zst)\n", p.c_str());
    std::exit(1);
  }
  return out;
}

// Splits text into documents of about `target` bytes at line ends.
std::vector<std::string> chunk(const std::string& text, std::size_t target) {
  std::vector<std::string> docs;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = std::min(text.size(), pos + target);
    const auto nl = text.find('\n', end);
    end = nl == std::string::npos ? text.size() : nl + 1;
    docs.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  return docs;
}

struct Corpus {
  std::vector<std::string> english;
  std::vector<std::string> code;
  std::vector<std::string> chinese;
  std::vector<std::string> multilingual;
  std::vector<std::string> mixed;
};

// The first whole lines of `text` up to about `cap` bytes.
std::string head_lines(const std::string& text, std::size_t cap) {
  if (text.size() <= cap) {
    return text;
  }
  const auto nl = text.find('\n', cap);
  return text.substr(0, nl == std::string::npos ? text.size() : nl + 1);
}

const Corpus& corpus() {
  static const Corpus c = [] {
    Corpus out;
    const std::string english = read_data("long_context/gutenberg/08_alice_in_wonderland.txt");
    std::string code;
    std::istringstream lines(read_data("prompts/code_alpaca/python_code_alpaca_subset.jsonl"));
    std::string line;
    while (code.size() < 150000 && std::getline(lines, line)) {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_object() && j.contains("expected_output") && j["expected_output"].is_string()) {
        code += j["expected_output"].get<std::string>();
        code += "\n\n";
      }
    }
    std::string chinese;
    for (const auto& chapter :
         nlohmann::json::parse(read_data("long_context/chinese_classics/mengzi.json"))) {
      for (const auto& para : chapter.at("paragraphs")) {
        chinese += para.get<std::string>();
        chinese += "\n";
      }
    }
    for (const char* lang : {"deu_Latn", "fra_Latn", "spa_Latn", "rus_Cyrl", "hin_Deva", "ben_Beng",
                             "tam_Taml", "urd_Arab"}) {
      const auto docs = chunk(
          head_lines(read_data(std::string("multilingual/flores200_devtest/") + lang + ".devtest"),
                     20000),
          4096);
      out.multilingual.insert(out.multilingual.end(), docs.begin(), docs.end());
    }
    out.english = chunk(english, 4096);
    out.code = chunk(code, 4096);
    out.chinese = chunk(chinese, 4096);
    const std::size_t most = std::max(
        {out.english.size(), out.code.size(), out.chinese.size(), out.multilingual.size()});
    for (std::size_t i = 0; i < most; ++i) {
      for (const auto* part : {&out.english, &out.code, &out.chinese, &out.multilingual}) {
        if (i < part->size()) {
          out.mixed.push_back((*part)[i]);
        }
      }
    }
    return out;
  }();
  return c;
}

// The tokenizer to load: $LLMBENCH_TOKENIZER, else DeepSeek-V3 unpacked into a temp folder.
fs::path tokenizer_path() {
  if (const char* env = std::getenv("LLMBENCH_TOKENIZER")) {
    return env;
  }
  const fs::path dir = fs::temp_directory_path() / "llmbench_tok_bench";
  fs::create_directories(dir);
  std::ofstream(dir / "tokenizer.json", std::ios::binary)
      << read_data("tokenizers/deepseek-v3/tokenizer.json");
  std::ofstream(dir / "tokenizer_config.json", std::ios::binary)
      << read_data("tokenizers/deepseek-v3/tokenizer_config.json");
  return dir;
}

const Tokenizer& tokenizer() {
  static const Tokenizer t = [] {
    auto r = Tokenizer::load(tokenizer_path());
    if (!r) {
      std::fprintf(stderr, "tokenizer_bench: %s\n", r.error().what().c_str());
      std::exit(1);
    }
    return std::move(*r);
  }();
  return t;
}

void encode_docs(benchmark::State& state, const std::vector<std::string>& docs) {
  const Tokenizer& tok = tokenizer();
  llmbench::tokenizer::Scratch scratch;
  std::size_t bytes = 0;
  std::size_t tokens = 0;
  for (auto _ : state) {
    for (const auto& d : docs) {
      auto n = tok.count(d, false, scratch);
      benchmark::DoNotOptimize(n);
      bytes += d.size();
      tokens += n ? *n : 0;
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
  state.counters["bytes/token"] =
      tokens == 0 ? 0.0 : static_cast<double>(bytes) / static_cast<double>(tokens);
}

void BM_EncodeMixed(benchmark::State& s) {
  encode_docs(s, corpus().mixed);
}
void BM_EncodeEnglish(benchmark::State& s) {
  encode_docs(s, corpus().english);
}
void BM_EncodeCode(benchmark::State& s) {
  encode_docs(s, corpus().code);
}
void BM_EncodeChinese(benchmark::State& s) {
  encode_docs(s, corpus().chinese);
}
void BM_EncodeMultilingual(benchmark::State& s) {
  encode_docs(s, corpus().multilingual);
}

// Cold cache: a fresh Scratch per document (no word cache reuse across documents).
void BM_EncodeMixedColdCache(benchmark::State& state) {
  const Tokenizer& tok = tokenizer();
  std::size_t bytes = 0;
  std::size_t tokens = 0;
  for (auto _ : state) {
    for (const auto& d : corpus().mixed) {
      llmbench::tokenizer::Scratch scratch;
      auto n = tok.count(d, false, scratch);
      bytes += d.size();
      tokens += n ? *n : 0;
    }
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes));
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}

BENCHMARK(BM_EncodeMixed)->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_EncodeEnglish)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_EncodeCode)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_EncodeChinese)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_EncodeMultilingual)->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_EncodeMixedColdCache)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// ---- --figures mode ------------------------------------------------------------------------

// Resident set size of this process in bytes (VmRSS of /proc/self/status), 0 when unreadable.
std::size_t rss_bytes() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return static_cast<std::size_t>(std::strtoull(line.c_str() + 6, nullptr, 10)) * 1024U;
    }
  }
  return 0;
}

double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double wall_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// Totals of one timed measurement.
struct Run {
  std::size_t bytes_per_pass = 0;
  std::size_t tokens_per_pass = 0;
  std::size_t passes = 0;
  double wall_s = 0;
  double cpu_s = 0;
};

// Calls `pass` (returning the tokens of one pass over the documents) once to warm up, then until
// at least `seconds` of wall-clock time have passed.
template <typename Pass>
Run timed(const std::vector<std::string>& docs, double seconds, Pass&& pass) {
  Run r;
  for (const auto& d : docs) {
    r.bytes_per_pass += d.size();
  }
  r.tokens_per_pass = pass();
  const double w0 = wall_seconds();
  const double c0 = cpu_seconds();
  do {
    if (pass() != r.tokens_per_pass) {
      std::fprintf(stderr, "tokenizer_bench: token count changed between passes\n");
      std::exit(1);
    }
    ++r.passes;
    r.wall_s = wall_seconds() - w0;
  } while (r.wall_s < seconds);
  r.cpu_s = cpu_seconds() - c0;
  return r;
}

void print_run(const char* kind, const char* part, int threads, std::size_t docs, const Run& r) {
  const auto total_bytes = static_cast<double>(r.bytes_per_pass * r.passes);
  const auto total_tokens = static_cast<double>(r.tokens_per_pass * r.passes);
  nlohmann::json j{{"impl", "llmbench"},
                   {"kind", kind},
                   {"part", part},
                   {"threads", threads},
                   {"docs", docs},
                   {"bytes", r.bytes_per_pass},
                   {"tokens", r.tokens_per_pass},
                   {"passes", r.passes},
                   {"wall_s", r.wall_s},
                   {"cpu_s", r.cpu_s},
                   {"mb_s", total_bytes / r.wall_s / 1e6},
                   {"tok_s", total_tokens / r.wall_s},
                   {"cpu_mb_s", total_bytes / r.cpu_s / 1e6}};
  std::printf("%s\n", j.dump().c_str());
  std::fflush(stdout);
}

int run_figures(double seconds, const std::vector<int>& threads) {
  const fs::path path = tokenizer_path();
  malloc_trim(0);
  const std::size_t rss0 = rss_bytes();
  const double t0 = wall_seconds();
  auto loaded = Tokenizer::load(path);
  const double load_s = wall_seconds() - t0;
  if (!loaded) {
    std::fprintf(stderr, "tokenizer_bench: %s\n", loaded.error().what().c_str());
    return 1;
  }
  malloc_trim(0);
  const std::size_t rss1 = rss_bytes();
  const Tokenizer tok = std::move(*loaded);
  std::printf("%s\n", nlohmann::json{{"impl", "llmbench"},
                                     {"kind", "memory"},
                                     {"memory_bytes", tok.memory_bytes()},
                                     {"rss_delta_bytes", rss1 > rss0 ? rss1 - rss0 : 0},
                                     {"load_s", load_s}}
                          .dump()
                          .c_str());
  const Corpus& c = corpus();
  const std::pair<const char*, const std::vector<std::string>*> parts[] = {
      {"english", &c.english},
      {"code", &c.code},
      {"chinese", &c.chinese},
      {"multilingual", &c.multilingual},
      {"mixed", &c.mixed}};
  const llmbench::tokenizer::EncodeOptions options;  // ids only, no special tokens
  for (const auto& [name, docs] : parts) {
    llmbench::tokenizer::Scratch scratch;
    const Run r = timed(*docs, seconds, [&] {
      std::size_t tokens = 0;
      for (const auto& d : *docs) {
        auto enc = tok.encode(d, options, scratch);
        tokens += enc ? enc->ids.size() : 0;
      }
      return tokens;
    });
    print_run("single", name, 1, docs->size(), r);
  }
  const std::vector<std::string_view> views(c.mixed.begin(), c.mixed.end());
  for (const int n : threads) {
    const Run r = timed(c.mixed, seconds, [&] {
      auto encs = tok.encode_batch(views, options, n);
      std::size_t tokens = 0;
      if (encs) {
        for (const auto& e : *encs) {
          tokens += e.ids.size();
        }
      }
      return tokens;
    });
    print_run("batch", "mixed", n, c.mixed.size(), r);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string corpus_flag = "--write-corpus=";
  const std::string seconds_flag = "--seconds=";
  const std::string threads_flag = "--threads=";
  bool figures = false;
  double seconds = 1.0;
  std::vector<int> threads{1, 2};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(corpus_flag, 0) == 0) {
      const fs::path dir = arg.substr(corpus_flag.size());
      fs::create_directories(dir);
      const Corpus& c = corpus();
      const std::pair<const char*, const std::vector<std::string>*> parts[] = {
          {"english", &c.english},
          {"code", &c.code},
          {"chinese", &c.chinese},
          {"multilingual", &c.multilingual},
          {"mixed", &c.mixed}};
      for (const auto& [name, docs] : parts) {
        std::ofstream out(dir / (std::string(name) + ".jsonl"), std::ios::binary);
        for (const auto& d : *docs) {
          out << nlohmann::json{{"text", d}}.dump() << "\n";
        }
        if (!out) {
          return 1;
        }
      }
      return 0;
    }
    if (arg == "--figures") {
      figures = true;
    } else if (arg.rfind(seconds_flag, 0) == 0) {
      seconds = std::strtod(arg.c_str() + seconds_flag.size(), nullptr);
    } else if (arg.rfind(threads_flag, 0) == 0) {
      threads.clear();
      std::istringstream list(arg.substr(threads_flag.size()));
      std::string item;
      while (std::getline(list, item, ',')) {
        threads.push_back(std::max(1, std::atoi(item.c_str())));
      }
    }
  }
  if (figures) {
    return run_figures(seconds, threads);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
