// A property over every dialect of the registry (protocol/dialect.hpp): each generation field a
// `run` flag can set either changes the request body the dialect builds, or is reported by the
// dialect as not honoured (`unhonoured_flags`, which `run` prints as a warning), never both and
// never neither. A flag that changed nothing and warned of nothing would be silently dropped; one
// that warned but was sent anyway would mislead.

#include "llmbench/protocol/dialect.hpp"
#include "llmbench/protocol/request.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::protocol {
namespace {

/// Every backend of the registry, in enumerator order.
constexpr std::array<Backend, 11> kBackends{
    Backend::OpenAI,       Backend::OpenAIChat, Backend::Vllm,     Backend::Sglang,
    Backend::Llamacpp,     Backend::Deepseek,   Backend::VllmChat, Backend::SglangChat,
    Backend::SglangNative, Backend::Tgi,        Backend::TrtLlm};

/// One field of `GenRequest` that a flag of `run` sets, with a value other than the default.
struct FlagField {
  std::string_view flag;
  std::function<void(GenRequest&)> set;
};

const std::vector<FlagField>& flag_fields() {
  static const std::vector<FlagField> fields{
      {"--ignore-eos", [](GenRequest& r) { r.ignore_eos = true; }},
      {"--min-tokens", [](GenRequest& r) { r.min_tokens = 3; }},
      {"--temperature", [](GenRequest& r) { r.temperature = 0.25; }},
      {"--top-p", [](GenRequest& r) { r.top_p = 0.75; }},
      {"--top-k", [](GenRequest& r) { r.top_k = 7; }},
      {"--min-p", [](GenRequest& r) { r.min_p = 0.05; }},
      {"--presence-penalty", [](GenRequest& r) { r.presence_penalty = 0.5; }},
      {"--frequency-penalty", [](GenRequest& r) { r.frequency_penalty = 0.5; }},
      {"--repetition-penalty", [](GenRequest& r) { r.repetition_penalty = 1.2; }},
      {"--extra-body", [](GenRequest& r) { r.extra_body_json = R"({"llmbench_probe": 1})"; }},
      {"--no-stream", [](GenRequest& r) { r.stream = false; }},
  };
  return fields;
}

/// The request `run` builds for one sample, before any flag of `flag_fields` is set.
GenRequest base_request(Backend backend) {
  GenRequest r;
  r.model = "m";
  r.chat = is_chat_backend(backend);
  r.prompt = "Why is the sky blue?";
  r.max_tokens = 16;
  r.stream = true;
  return r;
}

TEST(DialectFields, EveryFlagChangesTheBodyOrIsReportedNotHonoured) {
  std::size_t sent = 0;
  std::size_t reported = 0;
  for (const Backend backend : kBackends) {
    const GenRequest base = base_request(backend);
    const std::string base_body = build_request_body(backend, base);
    ASSERT_TRUE(unhonoured_flags(backend, base).empty()) << to_string(backend);
    for (const auto& field : flag_fields()) {
      GenRequest request = base;
      field.set(request);
      const bool changed = build_request_body(backend, request) != base_body;
      const auto flags = unhonoured_flags(backend, request);
      const bool warned = std::find(flags.begin(), flags.end(), field.flag) != flags.end();
      EXPECT_NE(changed, warned) << to_string(backend) << " " << field.flag << ": "
                                 << (changed ? "sent and reported as not honoured"
                                             : "neither sent nor reported");
      // Only the flag that was set is reported.
      EXPECT_LE(flags.size(), 1U) << to_string(backend) << " " << field.flag;
      sent += changed ? 1 : 0;
      reported += warned ? 1 : 0;
    }
  }
  // The property holds over a real mix: most fields are sent, some dialects refuse some.
  EXPECT_EQ(sent + reported, kBackends.size() * flag_fields().size());
  EXPECT_GT(reported, 5U);
  EXPECT_GT(sent, reported);
}

// `--continuous-usage` asks for usage on every streamed event, a property of the response rather
// than of generation: SGLang's native /generate and TGI's /generate_stream carry the token count
// on every event whatever is asked (dialects/sglang_native.cpp, dialects/tgi.cpp), so there the
// flag is honoured without a field. Everywhere else the same property holds.
TEST(DialectFields, ContinuousUsageIsSentReportedOrInEveryEventAlready) {
  for (const Backend backend : kBackends) {
    GenRequest request = base_request(backend);
    const std::string base_body = build_request_body(backend, request);
    request.continuous_usage = true;
    const bool changed = build_request_body(backend, request) != base_body;
    const auto flags = unhonoured_flags(backend, request);
    const bool warned = std::find(flags.begin(), flags.end(), "--continuous-usage") != flags.end();
    const bool in_every_event = backend == Backend::SglangNative || backend == Backend::Tgi;
    EXPECT_EQ(
        static_cast<int>(changed) + static_cast<int>(warned) + static_cast<int>(in_every_event), 1)
        << to_string(backend);
  }
}

}  // namespace
}  // namespace llmbench::protocol
