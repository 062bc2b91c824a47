#pragma once
/// @file
/// The dialect singletons the registry (dialect.cpp) lists, one per file under dialects/.

#include "llmbench/protocol/dialect.hpp"

namespace llmbench::protocol::detail {

/// The dialect singletons, one per file under dialects/.
const Dialect& openai_completions_dialect() noexcept;
const Dialect& openai_chat_dialect() noexcept;
const Dialect& vllm_dialect() noexcept;
const Dialect& vllm_chat_dialect() noexcept;
const Dialect& sglang_dialect() noexcept;
const Dialect& sglang_chat_dialect() noexcept;
const Dialect& llamacpp_dialect() noexcept;
const Dialect& deepseek_dialect() noexcept;
const Dialect& sglang_native_dialect() noexcept;
const Dialect& tgi_dialect() noexcept;
const Dialect& trtllm_dialect() noexcept;

}  // namespace llmbench::protocol::detail
