#pragma once
/// @file
/// Hand-written matchers (internal) for the main Split regex of the DeepSeek-V3 family
/// (V3, R1, V3.1; docs/tokenizer.md, pre_tokenizer step 3):
///
///   [!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+|
///   ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
///
/// It returns the same matches as Oniguruma's leftmost-first backtracking search (each
/// alternative's backtracking worked out by hand in fast_split.cpp), and takes every character
/// class (\p{L} \p{M} \p{P} \p{S} \s) from Oniguruma's own Unicode tables, so the two agree
/// character for character. tokenizer_test checks it against the Oniguruma path.

#include "llmbench/tokenizer/pretokenize.hpp"

#include <cstddef>
#include <string_view>
#include <vector>

namespace llmbench::tokenizer::detail {

/// True when `pattern` is, byte for byte, the DeepSeek-V3 main regex above.
bool is_deepseek_v3_main_regex(std::string_view pattern);

/// Appends the matches of the DeepSeek-V3 main regex in `subject` (valid UTF-8), left to right,
/// non-overlapping (no alternative matches the empty string).
void find_deepseek_v3_main(std::string_view subject, std::vector<Span>& out);

/// 1 when `pattern` is, byte for byte, the Qwen2/Qwen3 main regex
///   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|
///   \s*[\r\n]+|\s+(?!\S)|\s+
/// 3 for the Llama-3 one (the same with \p{N}{1,3}), 0 otherwise.
std::size_t qwen_family_max_digits(std::string_view pattern);

/// Appends the matches of the Qwen/Llama-3 main regex (`max_digits` from
/// `qwen_family_max_digits`) in `subject`, as Oniguruma would find them.
void find_qwen_main(std::string_view subject, std::size_t max_digits, std::vector<Span>& out);

}  // namespace llmbench::tokenizer::detail
