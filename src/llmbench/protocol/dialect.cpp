#include "llmbench/protocol/dialect.hpp"

#include "llmbench/protocol/detail/dialects.hpp"

#include <fmt/core.h>

#include <array>

/// @file
/// The dialect registry: one constexpr table of `--backend` names. It drives parsing, the
/// "valid names" message and the CLI help.

namespace llmbench::protocol {
namespace {

struct DialectEntry {
  std::string_view name;
  Backend backend;
  const Dialect& (*get)() noexcept;
  bool alias = false;  ///< another spelling of the backend listed before it
};

// Canonical names first, in help order; an alias follows its backend's canonical row. The names
// are those of `vllm bench serve` and SGLang's `bench_serving` (`--backend sglang` is SGLang's
// native /generate in both; `tgi` and `tensorrt-llm` are vLLM's names).
constexpr std::array<DialectEntry, 14> kDialects{{
    {.name = "openai", .backend = Backend::OpenAI, .get = &detail::openai_completions_dialect},
    {.name = "openai-chat", .backend = Backend::OpenAIChat, .get = &detail::openai_chat_dialect},
    {.name = "vllm", .backend = Backend::Vllm, .get = &detail::vllm_dialect},
    {.name = "vllm-chat", .backend = Backend::VllmChat, .get = &detail::vllm_chat_dialect},
    {.name = "sglang", .backend = Backend::SglangNative, .get = &detail::sglang_native_dialect},
    {.name = "sglang-oai", .backend = Backend::Sglang, .get = &detail::sglang_dialect},
    {.name = "sglang-oai-chat",
     .backend = Backend::SglangChat,
     .get = &detail::sglang_chat_dialect},
    {.name = "llamacpp", .backend = Backend::Llamacpp, .get = &detail::llamacpp_dialect},
    {.name = "llama.cpp",
     .backend = Backend::Llamacpp,
     .get = &detail::llamacpp_dialect,
     .alias = true},
    {.name = "deepseek", .backend = Backend::Deepseek, .get = &detail::deepseek_dialect},
    {.name = "tgi", .backend = Backend::Tgi, .get = &detail::tgi_dialect},
    {.name = "trt-llm", .backend = Backend::TrtLlm, .get = &detail::trtllm_dialect},
    {.name = "tensorrt-llm",
     .backend = Backend::TrtLlm,
     .get = &detail::trtllm_dialect,
     .alias = true},
    {.name = "triton", .backend = Backend::TrtLlm, .get = &detail::trtllm_dialect, .alias = true},
}};

const DialectEntry* find_entry(Backend backend) noexcept {
  for (const auto& entry : kDialects) {
    if (entry.backend == backend && !entry.alias) {
      return &entry;
    }
  }
  return nullptr;
}

}  // namespace

const Dialect& dialect(Backend backend) noexcept {
  const DialectEntry* entry = find_entry(backend);
  return entry != nullptr ? entry->get() : detail::openai_completions_dialect();
}

Backend parse_backend(std::string_view name) {
  for (const auto& entry : kDialects) {
    if (entry.name == name) {
      return entry.backend;
    }
  }
  throw Exception(Error{fmt::format("unknown backend '{}'; valid names: {}", name, backend_names()),
                        "--backend", -1});
}

std::string_view to_string(Backend backend) noexcept {
  const DialectEntry* entry = find_entry(backend);
  return entry != nullptr ? entry->name : "unknown";
}

std::string backend_names() {
  std::string out;
  bool after_alias = false;
  for (const auto& entry : kDialects) {
    if (entry.alias) {
      // "trt-llm (or tensorrt-llm, triton)": the aliases of one backend in one parenthesis.
      if (after_alias) {
        out.pop_back();
        out += fmt::format(", {})", entry.name);
      } else {
        out += fmt::format(" (or {})", entry.name);
      }
      after_alias = true;
      continue;
    }
    after_alias = false;
    out += out.empty() ? "" : ", ";
    out += entry.name;
  }
  return out;
}

std::string backend_name_note(std::string_view /*name*/) {
  // "sglang" was SGLang's OpenAI API here until the native /generate dialect came;
  // every name now means what it means in vLLM's and SGLang's benchmarks.
  return {};
}

std::string backend_help() {
  std::string out;
  for (const auto& entry : kDialects) {
    if (!entry.alias) {
      out += fmt::format("{}{}: {}", out.empty() ? "" : "\n", entry.name, entry.get().summary());
    }
  }
  return out;
}

bool is_chat_backend(Backend backend) noexcept {
  return dialect(backend).chat();
}

std::string_view default_endpoint(Backend backend, bool stream) noexcept {
  return dialect(backend).default_endpoint(stream);
}

std::string expand_endpoint(std::string_view endpoint, std::string_view model) {
  constexpr std::string_view kPlaceholder = "{model}";
  std::string encoded;
  for (const char c : model) {
    const auto u = static_cast<unsigned char>(c);
    const bool unreserved = (u >= 'A' && u <= 'Z') || (u >= 'a' && u <= 'z') ||
                            (u >= '0' && u <= '9') || c == '-' || c == '.' || c == '_' || c == '~';
    encoded += unreserved ? std::string(1, c) : fmt::format("%{:02X}", u);
  }
  std::string out;
  std::size_t from = 0;
  for (std::size_t at = endpoint.find(kPlaceholder); at != std::string_view::npos;
       at = endpoint.find(kPlaceholder, from)) {
    out += endpoint.substr(from, at - from);
    out += encoded;
    from = at + kPlaceholder.size();
  }
  out += endpoint.substr(from);
  return out;
}

std::string build_request_body(Backend backend, const GenRequest& request) {
  return dialect(backend).request_body(request);
}

std::vector<std::string_view> unhonoured_flags(Backend backend, const GenRequest& request) {
  return dialect(backend).unhonoured_flags(request);
}

}  // namespace llmbench::protocol
