// Decoding speed of one typical chat stream chunk (the per-event cost on the client hot path).

#include "llmbench/protocol/openai.hpp"

#include <benchmark/benchmark.h>

#include <string_view>

namespace {

// A vLLM chat.completion.chunk with one content token, about 250 bytes.
constexpr std::string_view kChatChunk =
    R"({"id":"chatcmpl-9f3c2a7e1b8d4c6f","object":"chat.completion.chunk","created":1718000001,)"
    R"("model":"deepseek-ai/DeepSeek-V3","choices":[{"index":0,"delta":{"content":" world"},)"
    R"("logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":20,"total_tokens":27,)"
    R"("completion_tokens":7}})";

// A reasoning chunk (DeepSeek-R1 on SGLang), with every delta field present.
constexpr std::string_view kReasoningChunk =
    R"({"id":"3e5f0c1a9b2d4e6f","object":"chat.completion.chunk","created":1718000002,)"
    R"("model":"deepseek-ai/DeepSeek-R1","choices":[{"index":0,"delta":{"role":null,)"
    R"("content":null,"reasoning_content":"Let me think","tool_calls":null},"logprobs":null,)"
    R"("finish_reason":null,"matched_stop":null}],"usage":null})";

void decode(benchmark::State& state, std::string_view payload) {
  llmbench::protocol::Decoder decoder;
  for (auto _ : state) {
    auto result = decoder.decode_event(payload);
    benchmark::DoNotOptimize(result);
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(payload.size()));
  state.counters["payload_bytes"] = static_cast<double>(payload.size());
}

void BM_DecodeChatChunk(benchmark::State& state) {
  decode(state, kChatChunk);
}
void BM_DecodeReasoningChunk(benchmark::State& state) {
  decode(state, kReasoningChunk);
}
void BM_DecodeDone(benchmark::State& state) {
  decode(state, "[DONE]");
}

void BM_BuildChatBody(benchmark::State& state) {
  llmbench::protocol::GenRequest request;
  request.model = "deepseek-ai/DeepSeek-V3";
  request.chat = true;
  request.prompt = std::string(1000, 'x');
  request.max_tokens = 256;
  request.ignore_eos = true;
  for (auto _ : state) {
    auto body = llmbench::protocol::build_request_body(llmbench::protocol::Backend::Vllm, request);
    benchmark::DoNotOptimize(body);
  }
  state.SetItemsProcessed(state.iterations());
}

}  // namespace

BENCHMARK(BM_DecodeChatChunk);
BENCHMARK(BM_DecodeReasoningChunk);
BENCHMARK(BM_DecodeDone);
BENCHMARK(BM_BuildChatBody);

BENCHMARK_MAIN();
