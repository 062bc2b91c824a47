// Throughput of llmbench::sse::Parser on a realistic in-memory OpenAI chat-completions stream.
// Run: build/<dir>/bench/sse/sse_bench [--benchmark_filter=...]

#include "llmbench/sse/parser.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace {

// `chunks` events shaped like OpenAI /v1/chat/completions streaming output (~230 bytes each,
// English and multi-byte text mixed), plus a usage chunk and `data: [DONE]`.
std::string make_openai_stream(int chunks, std::string_view eol) {
  static constexpr std::string_view kWords[] = {
      " the", " model", " 你好", " inference", "，", " 😀", " token", " latency", "ing", " is",
  };
  const std::string e(eol);
  std::string s;
  s += "data: "
       R"({"id":"chatcmpl-9Zq3xKb2","object":"chat.completion.chunk","created":1718000000,)"
       R"("model":"deepseek-ai/DeepSeek-V3","system_fingerprint":"fp_44709d6fcb","choices":)"
       R"([{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,)"
       R"("finish_reason":null}]})" +
       e + e;
  for (int i = 0; i < chunks; ++i) {
    s += "data: "
         R"({"id":"chatcmpl-9Zq3xKb2","object":"chat.completion.chunk","created":1718000000,)"
         R"("model":"deepseek-ai/DeepSeek-V3","system_fingerprint":"fp_44709d6fcb","choices":)"
         R"([{"index":0,"delta":{"content":")";
    s += kWords[static_cast<std::size_t>(i) % std::size(kWords)];
    s += R"("},"logprobs":null,"finish_reason":null}]})" + e + e;
  }
  s += "data: "
       R"({"id":"chatcmpl-9Zq3xKb2","object":"chat.completion.chunk","created":1718000000,)"
       R"("model":"deepseek-ai/DeepSeek-V3","choices":[],"usage":{"prompt_tokens":512,)"
       R"("completion_tokens":)" +
       std::to_string(chunks) + "}}" + e + e;
  s += "data: [DONE]" + e + e;
  return s;
}

// Feeds the stream in reads of `read_size` bytes, as a socket would hand them over.
void run(benchmark::State& state, std::string_view eol) {
  const int chunks = static_cast<int>(state.range(0));
  const auto read_size = static_cast<std::size_t>(state.range(1));
  const std::string stream = make_openai_stream(chunks, eol);
  const std::string_view bytes = stream;
  llmbench::sse::Parser parser;
  std::uint64_t events = 0;
  for (auto _ : state) {
    parser.reset();
    std::size_t data_bytes = 0;
    for (std::size_t at = 0; at < bytes.size(); at += read_size) {
      parser.feed(bytes.substr(at, read_size),
                  [&](const llmbench::sse::Event& e) { data_bytes += e.data.size(); });
    }
    benchmark::DoNotOptimize(data_bytes);
    events += parser.events_dispatched();
  }
  state.counters["events_per_s"] =
      benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
  state.counters["bytes_per_event"] =
      static_cast<double>(stream.size()) / static_cast<double>(chunks + 3);
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) *
                          static_cast<std::int64_t>(stream.size()));
}

void BM_OpenAiStreamLf(benchmark::State& state) {
  run(state, "\n");
}
void BM_OpenAiStreamCrlf(benchmark::State& state) {
  run(state, "\r\n");
}

}  // namespace

// Args: {chunks, read size in bytes}. 16 KiB reads are typical; 7-byte reads are the worst case
// (almost every line crosses a read boundary and is reassembled in the carry buffer).
BENCHMARK(BM_OpenAiStreamLf)->Args({10000, 16384})->Args({10000, 7})->Args({10000, 1500});
BENCHMARK(BM_OpenAiStreamCrlf)->Args({10000, 16384})->Args({10000, 7});

BENCHMARK_MAIN();
