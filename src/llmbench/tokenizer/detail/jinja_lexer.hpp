#pragma once
/// @file
/// Lexer of the chat-template interpreter: template source → text pieces and tags, each tag cut
/// into expression tokens. Whitespace control follows the Jinja2 "Whitespace Control" rules with
/// the settings transformers renders with (`trim_blocks=True`, `lstrip_blocks=True`,
/// `keep_trailing_newline=False`; transformers `utils/chat_template_utils.py`):
/// - one trailing newline of the source is dropped;
/// - `trim_blocks`: the first newline after a `%}` or `#}` is removed (not after `}}`);
///   `+%}` keeps it;
/// - `lstrip_blocks`: spaces and tabs from the start of a line up to a `{%` or `{#` are removed;
///   `{%+` keeps them;
/// - `{%-` / `{{-` / `{#-` remove all whitespace before the tag (newlines included), `-%}` /
///   `-}}` / `-#}` all whitespace after it;
/// - newlines in text (`\r\n`, `\r`) become `\n`.
/// `{% raw %}...{% endraw %}` content is text. Never throws except `JinjaError` with the
/// position of an unterminated tag, comment or string, or a character no token starts with.

#include "llmbench/tokenizer/detail/jinja_value.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::tokenizer::detail::jinja {

/// Kinds of expression tokens.
enum class TokenKind { Name, String, Int, Float, Op, End };

/// One expression token. `text` is the name, operator or decoded string value.
struct Token {
  TokenKind kind = TokenKind::End;
  std::string text;
  std::int64_t int_value = 0;
  double float_value = 0.0;
  SourcePos pos;
};

/// Kinds of template pieces.
enum class PieceKind { Text, Output, Statement };

/// A text run, a `{{ ... }}` output tag or a `{% ... %}` statement tag (comments are dropped
/// once their whitespace control has been applied).
struct Piece {
  PieceKind kind = PieceKind::Text;
  std::string text;           ///< Text: the (whitespace-controlled) text
  std::vector<Token> tokens;  ///< Output/Statement: the tokens, ending with an End token
  SourcePos pos;              ///< where the piece starts
};

/// Cuts `source` into pieces (see the file comment for the whitespace rules).
std::vector<Piece> lex_template(std::string_view source);

}  // namespace llmbench::tokenizer::detail::jinja
