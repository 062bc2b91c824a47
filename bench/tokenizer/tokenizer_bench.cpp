// Single-thread encode speed of llmbench::tokenizer on DeepSeek-V3 (MB/s of UTF-8 input and
// tokens/s) over English prose, Python code and Chinese, from ../shared/data:
//   English: long_context/gutenberg/08_alice_in_wonderland.txt (150 KB)
//   code:    prompts/code_alpaca/python_code_alpaca_subset.jsonl(.zst), "expected_output"
//            fields concatenated up to 150 KB
//   Chinese: long_context/chinese_classics/mengzi.json, paragraphs joined by newlines
//   mixed:   the three interleaved in documents of about 4 KB (split at line ends)
// Each benchmark encodes its documents one after another with one Scratch (warm word cache, as a
// long-running client would). `--write-corpus=PATH` writes the mixed documents as JSONL
// {"text": ...} (for bench/tokenizer/hf_bench.mjs, the HF reference) and exits.
//
// Environment: LLMBENCH_SHARED_DATA (default ../shared/data from the source tree),
// LLMBENCH_TOKENIZER (default <shared>/tokenizers/deepseek-v3, .zst unpacked to /tmp).

#include "llmbench/tokenizer/tokenizer.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
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
  std::vector<std::string> mixed;
};

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
    out.english = chunk(english, 4096);
    out.code = chunk(code, 4096);
    out.chinese = chunk(chinese, 4096);
    for (std::size_t i = 0; i < std::max({out.english.size(), out.code.size(), out.chinese.size()});
         ++i) {
      for (const auto* part : {&out.english, &out.code, &out.chinese}) {
        if (i < part->size()) {
          out.mixed.push_back((*part)[i]);
        }
      }
    }
    return out;
  }();
  return c;
}

const Tokenizer& tokenizer() {
  static const Tokenizer t = [] {
    fs::path path;
    if (const char* env = std::getenv("LLMBENCH_TOKENIZER")) {
      path = env;
    } else {
      const fs::path dir = fs::temp_directory_path() / "llmbench_tok_bench";
      fs::create_directories(dir);
      std::ofstream(dir / "tokenizer.json", std::ios::binary)
          << read_data("tokenizers/deepseek-v3/tokenizer.json");
      std::ofstream(dir / "tokenizer_config.json", std::ios::binary)
          << read_data("tokenizers/deepseek-v3/tokenizer_config.json");
      path = dir;
    }
    auto r = Tokenizer::load(path);
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
BENCHMARK(BM_EncodeMixedColdCache)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

int main(int argc, char** argv) {
  const std::string flag = "--write-corpus=";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind(flag, 0) == 0) {
      std::ofstream out(arg.substr(flag.size()), std::ios::binary);
      for (const auto& d : corpus().mixed) {
        out << nlohmann::json{{"text", d}}.dump() << "\n";
      }
      return out ? 0 : 1;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
