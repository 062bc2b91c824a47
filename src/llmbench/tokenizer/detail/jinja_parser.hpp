#pragma once
/// @file
/// Parser of the chat-template interpreter: lexed pieces → `Program`. Operator precedence is
/// Jinja2's (Template Designer Documentation, "Expressions"), loosest first: `x if c else y`,
/// `or`, `and`, `not`, comparisons (`== != < > <= >= in`, `not in`, chained), `+ -`, `~`,
/// `* / // %`, `**`, unary `- +`; filters (`|f`) and tests (`is t`) bind to the unary operand,
/// so `messages|length - 1` is `(messages|length) - 1` and `'a' + x|tojson` is
/// `'a' + (x|tojson)`. Throws `JinjaError` at the offending token.

#include "llmbench/tokenizer/detail/jinja_ast.hpp"
#include "llmbench/tokenizer/detail/jinja_lexer.hpp"

#include <vector>

namespace llmbench::tokenizer::detail::jinja {

/// Parses the pieces of one template.
Program parse_program(std::vector<Piece> pieces);

}  // namespace llmbench::tokenizer::detail::jinja
