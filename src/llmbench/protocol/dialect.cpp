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

// Canonical names first, in help order; an alias follows its backend's canonical row.
constexpr std::array<DialectEntry, 10> kDialects{{
    {.name = "openai", .backend = Backend::OpenAI, .get = &detail::openai_completions_dialect},
    {.name = "openai-chat", .backend = Backend::OpenAIChat, .get = &detail::openai_chat_dialect},
    {.name = "vllm", .backend = Backend::Vllm, .get = &detail::vllm_dialect},
    {.name = "vllm-chat", .backend = Backend::VllmChat, .get = &detail::vllm_chat_dialect},
    {.name = "sglang-oai", .backend = Backend::Sglang, .get = &detail::sglang_dialect},
    // SGLang's bench_serving means its native /generate by "sglang"; until that dialect exists
    // the name is SGLang's OpenAI API, with a warning (`backend_name_note`).
    {.name = "sglang", .backend = Backend::Sglang, .get = &detail::sglang_dialect, .alias = true},
    {.name = "sglang-oai-chat",
     .backend = Backend::SglangChat,
     .get = &detail::sglang_chat_dialect},
    {.name = "llamacpp", .backend = Backend::Llamacpp, .get = &detail::llamacpp_dialect},
    {.name = "llama.cpp",
     .backend = Backend::Llamacpp,
     .get = &detail::llamacpp_dialect,
     .alias = true},
    {.name = "deepseek", .backend = Backend::Deepseek, .get = &detail::deepseek_dialect},
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
  for (const auto& entry : kDialects) {
    if (entry.alias) {
      out += fmt::format(" (or {})", entry.name);
      continue;
    }
    out += out.empty() ? "" : ", ";
    out += entry.name;
  }
  return out;
}

std::string backend_name_note(std::string_view name) {
  if (name == "sglang") {
    return "--backend sglang: SGLang's bench_serving sends this name to its native /generate; "
           "llmbench does not speak /generate yet and posts to SGLang's /v1/completions "
           "(sglang-oai)";
  }
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

std::string_view default_endpoint(Backend backend) noexcept {
  return dialect(backend).default_endpoint();
}

std::string build_request_body(Backend backend, const GenRequest& request) {
  return dialect(backend).request_body(request);
}

std::vector<std::string_view> unhonoured_flags(Backend backend, const GenRequest& request) {
  return dialect(backend).unhonoured_flags(request);
}

}  // namespace llmbench::protocol
