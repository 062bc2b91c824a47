#include "llmbench/tokenizer/detail/jinja_lexer.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <optional>

namespace llmbench::tokenizer::detail::jinja {
namespace {

/// A tag as found in the source, before whitespace control is applied to its neighbours.
struct RawTag {
  char open = '{';           ///< second delimiter char: '{' output, '%' statement, '#' comment
  bool left_minus = false;   ///< `{%-`
  bool left_plus = false;    ///< `{%+`
  bool right_minus = false;  ///< `-%}`
  bool right_plus = false;   ///< `+%}`
  std::size_t begin = 0;     ///< offset of the opening `{`
};

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {
    line_starts_.push_back(0);
    for (std::size_t i = 0; i < src_.size(); ++i) {
      if (src_[i] == '\n')
        line_starts_.push_back(i + 1);
    }
  }

  std::vector<Piece> run() {
    std::size_t i = 0;
    while (i <= src_.size()) {
      const std::size_t open = find_tag(i);
      add_text(i, open);
      if (open == std::string_view::npos)
        break;
      i = lex_tag(open);
    }
    apply_whitespace_control();
    std::vector<Piece> out;
    for (auto& p : pieces_) {
      if (p.kind != PieceKind::Text || !p.text.empty())
        out.push_back(std::move(p));
    }
    return out;
  }

 private:
  [[nodiscard]] SourcePos pos_of(std::size_t offset) const {
    const auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
    const auto line = static_cast<std::size_t>(it - line_starts_.begin());
    return {.line = static_cast<int>(line),
            .column = static_cast<int>(offset - line_starts_[line - 1] + 1)};
  }
  [[noreturn]] void fail(const std::string& message, std::size_t offset) const {
    throw JinjaError(message, pos_of(offset));
  }

  [[nodiscard]] std::size_t find_tag(std::size_t from) const {
    for (std::size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    }
    return std::string_view::npos;
  }

  void add_text(std::size_t begin, std::size_t end) {
    const std::size_t stop = end == std::string_view::npos ? src_.size() : end;
    Piece p{.kind = PieceKind::Text,
            .text = std::string(src_.substr(begin, stop - begin)),
            .tokens = {},
            .pos = pos_of(begin)};
    text_begin_.push_back(begin);
    pieces_.push_back(std::move(p));
    tags_.emplace_back(std::nullopt);
  }

  /// Lexes the tag at `open`; returns the offset after it.
  std::size_t lex_tag(std::size_t open) {
    RawTag tag{.open = src_[open + 1], .begin = open};
    std::size_t i = open + 2;
    if (i < src_.size() && src_[i] == '-') {
      tag.left_minus = true;
      ++i;
    } else if (i < src_.size() && src_[i] == '+') {
      tag.left_plus = true;
      ++i;
    }
    if (tag.open == '#') {
      const std::size_t close = src_.find("#}", i);
      if (close == std::string_view::npos)
        fail("unterminated comment (missing '#}')", open);
      tag.right_minus = close > i && src_[close - 1] == '-';
      push_tag(tag, Piece{.kind = PieceKind::Text, .text = {}, .tokens = {}, .pos = pos_of(open)});
      return close + 2;
    }
    Piece piece{.kind = tag.open == '{' ? PieceKind::Output : PieceKind::Statement,
                .text = {},
                .tokens = {},
                .pos = pos_of(open)};
    i = lex_tokens(i, tag, piece.tokens);
    const bool is_raw = piece.kind == PieceKind::Statement && piece.tokens.size() == 2 &&
                        piece.tokens[0].kind == TokenKind::Name && piece.tokens[0].text == "raw";
    if (!is_raw) {
      push_tag(tag, std::move(piece));
      return i;
    }
    // {% raw %}: everything up to {% endraw %} is text; both tags keep their whitespace control.
    push_tag(tag, Piece{.kind = PieceKind::Text, .text = {}, .tokens = {}, .pos = pos_of(open)});
    for (std::size_t at = src_.find("{%", i); at != std::string_view::npos;
         at = src_.find("{%", at + 2)) {
      std::size_t k = at + 2;
      RawTag end{.open = '%', .begin = at};
      if (k < src_.size() && (src_[k] == '-' || src_[k] == '+')) {
        (src_[k] == '-' ? end.left_minus : end.left_plus) = true;
        ++k;
      }
      while (k < src_.size() && std::isspace(static_cast<unsigned char>(src_[k])) != 0) ++k;
      if (src_.substr(k, 6) != "endraw")
        continue;
      add_text(i, at);
      std::vector<Token> ignored;
      const std::size_t after = lex_tokens(k, end, ignored);
      push_tag(end, Piece{.kind = PieceKind::Text, .text = {}, .tokens = {}, .pos = pos_of(at)});
      return after;
    }
    fail("missing '{% endraw %}' for this raw block", open);
  }

  void push_tag(const RawTag& tag, Piece piece) {
    text_begin_.push_back(tag.begin);
    pieces_.push_back(std::move(piece));
    tags_.emplace_back(tag);
  }

  /// Tokens from `i` up to the tag's end delimiter; returns the offset after the delimiter.
  std::size_t lex_tokens(std::size_t i, RawTag& tag, std::vector<Token>& out) {
    const char close = tag.open == '{' ? '}' : '%';
    int depth = 0;  // open ( [ { inside the tag: `}}` closes only at depth 0
    while (true) {
      while (i < src_.size() && std::isspace(static_cast<unsigned char>(src_[i])) != 0) ++i;
      if (i >= src_.size())
        fail(std::string("unterminated tag (missing '") + close + "}')", tag.begin);
      const auto at_end = [&](std::size_t k) {
        return k + 1 < src_.size() && src_[k] == close && src_[k + 1] == '}' &&
               (close == '%' || depth == 0);
      };
      if ((src_[i] == '-' || src_[i] == '+') && at_end(i + 1)) {
        (src_[i] == '-' ? tag.right_minus : tag.right_plus) = true;
        out.push_back(Token{.kind = TokenKind::End, .text = {}, .pos = pos_of(i)});
        return i + 3;
      }
      if (at_end(i)) {
        out.push_back(Token{.kind = TokenKind::End, .text = {}, .pos = pos_of(i)});
        return i + 2;
      }
      i = lex_token(i, out, depth);
    }
  }

  std::size_t lex_token(std::size_t i, std::vector<Token>& out, int& depth) {
    const char c = src_[i];
    Token t{.kind = TokenKind::Op, .text = {}, .pos = pos_of(i)};
    if (std::isalpha(static_cast<unsigned char>(c)) != 0 || c == '_') {
      std::size_t k = i;
      while (k < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[k])) != 0 || src_[k] == '_'))
        ++k;
      t.kind = TokenKind::Name;
      t.text = std::string(src_.substr(i, k - i));
      out.push_back(std::move(t));
      return k;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) != 0)
      return lex_number(i, std::move(t), out);
    if (c == '\'' || c == '"')
      return lex_string(i, std::move(t), out);
    static constexpr std::array<std::string_view, 6> kTwo = {"**", "//", "==", "!=", "<=", ">="};
    for (const auto op : kTwo) {
      if (src_.substr(i, 2) == op) {
        t.text = std::string(op);
        out.push_back(std::move(t));
        return i + 2;
      }
    }
    static constexpr std::string_view kOne = "+-*/%~<>=()[]{},.:|";
    if (kOne.find(c) == std::string_view::npos)
      fail(std::string("unexpected character '") + c + "' in tag", i);
    if (c == '(' || c == '[' || c == '{')
      ++depth;
    if (c == ')' || c == ']' || c == '}')
      --depth;
    t.text = std::string(1, c);
    out.push_back(std::move(t));
    return i + 1;
  }

  std::size_t lex_number(std::size_t i, Token t, std::vector<Token>& out) {
    std::size_t k = i;
    std::string digits;
    const auto take_digits = [&] {
      while (k < src_.size() &&
             (std::isdigit(static_cast<unsigned char>(src_[k])) != 0 || src_[k] == '_')) {
        if (src_[k] != '_')
          digits.push_back(src_[k]);
        ++k;
      }
    };
    take_digits();
    bool is_float = false;
    // "1.5" is a float; "x.0" (attribute 0 of x) was lexed as Name, Op('.'), then here "0".
    const bool after_dot =
        !out.empty() && out.back().kind == TokenKind::Op && out.back().text == ".";
    if (!after_dot && k + 1 < src_.size() && src_[k] == '.' &&
        std::isdigit(static_cast<unsigned char>(src_[k + 1])) != 0) {
      is_float = true;
      digits.push_back('.');
      ++k;
      take_digits();
    }
    if (!after_dot && k < src_.size() && (src_[k] == 'e' || src_[k] == 'E')) {
      std::size_t e = k + 1;
      if (e < src_.size() && (src_[e] == '+' || src_[e] == '-'))
        ++e;
      if (e < src_.size() && std::isdigit(static_cast<unsigned char>(src_[e])) != 0) {
        is_float = true;
        digits += src_.substr(k, e - k);
        k = e;
        take_digits();
      }
    }
    t.text = digits;
    try {
      if (is_float) {
        t.kind = TokenKind::Float;
        t.float_value = std::stod(digits);
      } else {
        t.kind = TokenKind::Int;
        t.int_value = std::stoll(digits);
      }
    } catch (const std::exception&) {
      fail("number out of range: " + digits, i);
    }
    out.push_back(std::move(t));
    return k;
  }

  /// A string literal with Python's backslash escapes (Jinja2 decodes literals that way).
  std::size_t lex_string(std::size_t i, Token t, std::vector<Token>& out) {
    const char quote = src_[i];
    std::string value;
    std::size_t k = i + 1;
    while (true) {
      if (k >= src_.size())
        fail("unterminated string literal", i);
      const char c = src_[k];
      if (c == quote)
        break;
      if (c != '\\' || k + 1 >= src_.size()) {
        value.push_back(c);
        ++k;
        continue;
      }
      k = decode_escape(k, value);
    }
    t.kind = TokenKind::String;
    t.text = std::move(value);
    out.push_back(std::move(t));
    return k + 1;
  }

  std::size_t decode_escape(std::size_t k, std::string& value) const {
    const char e = src_[k + 1];
    static constexpr std::string_view kFrom = "nrtabfv0\\'\"\n";
    static constexpr std::string_view kTo = "\n\r\t\a\b\f\v";
    const auto simple = kFrom.find(e);
    if (simple != std::string_view::npos) {
      if (simple < kTo.size())
        value.push_back(kTo[simple]);
      else if (e == '0')
        value.push_back('\0');
      else if (e != '\n')  // backslash-newline continues the line
        value.push_back(e);
      return k + 2;
    }
    const std::size_t hex_len = e == 'x' ? 2 : e == 'u' ? 4 : e == 'U' ? 8 : 0;
    if (hex_len > 0 && k + 2 + hex_len <= src_.size()) {
      const std::string hex(src_.substr(k + 2, hex_len));
      if (std::all_of(hex.begin(), hex.end(),
                      [](char h) { return std::isxdigit(static_cast<unsigned char>(h)) != 0; })) {
        value += from_code_points(
            std::u32string(1, static_cast<char32_t>(std::stoul(hex, nullptr, 16))));
        return k + 2 + hex_len;
      }
    }
    value.push_back('\\');  // unknown escapes stay as written, as in Python
    return k + 1;
  }

  // ---- whitespace control ----

  void apply_whitespace_control() {
    for (std::size_t k = 0; k < pieces_.size(); ++k) {
      if (tags_[k].has_value() || pieces_[k].kind != PieceKind::Text)
        continue;
      std::string& text = pieces_[k].text;
      if (k > 0 && tags_[k - 1].has_value()) {
        const RawTag& prev = *tags_[k - 1];
        if (prev.right_minus) {
          text.erase(0, leading_space(text));
        } else if (prev.open != '{' && !prev.right_plus && !text.empty() && text[0] == '\n') {
          text.erase(0, 1);  // trim_blocks
        }
      }
      if (k + 1 < pieces_.size() && tags_[k + 1].has_value()) {
        const RawTag& next = *tags_[k + 1];
        if (next.left_minus) {
          text.erase(text.size() - trailing_space(text));
        } else if (next.open != '{' && !next.left_plus) {
          lstrip_block(text, text_begin_[k], next.begin);
        }
      }
      normalize_newlines(text);
    }
  }

  /// lstrip_blocks: drops the spaces and tabs between a line start and the tag at `tag_begin`.
  void lstrip_block(std::string& text, std::size_t text_begin, std::size_t tag_begin) const {
    std::size_t run = 0;
    while (tag_begin - run > text_begin &&
           (src_[tag_begin - run - 1] == ' ' || src_[tag_begin - run - 1] == '\t'))
      ++run;
    const std::size_t start = tag_begin - run;
    const bool line_start = start == 0 || src_[start - 1] == '\n';
    if (!line_start)
      return;
    std::size_t have = 0;
    while (have < text.size() && have < run &&
           (text[text.size() - have - 1] == ' ' || text[text.size() - have - 1] == '\t'))
      ++have;
    text.erase(text.size() - have);
  }

  static std::size_t leading_space(const std::string& text) {
    const std::u32string cps = code_points(text);
    std::size_t n = 0;
    while (n < cps.size() && is_py_space(cps[n])) ++n;
    return from_code_points(cps.substr(0, n)).size();
  }
  static std::size_t trailing_space(const std::string& text) {
    const std::u32string cps = code_points(text);
    std::size_t n = 0;
    while (n < cps.size() && is_py_space(cps[cps.size() - n - 1])) ++n;
    return from_code_points(cps.substr(cps.size() - n)).size();
  }
  static void normalize_newlines(std::string& text) {
    if (text.find('\r') == std::string::npos)
      return;
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\r') {
        out.push_back('\n');
        if (i + 1 < text.size() && text[i + 1] == '\n')
          ++i;
      } else {
        out.push_back(text[i]);
      }
    }
    text = std::move(out);
  }

  std::string_view src_;
  std::vector<std::size_t> line_starts_;
  std::vector<Piece> pieces_;
  std::vector<std::optional<RawTag>> tags_;  ///< per piece: the tag it came from, if any
  std::vector<std::size_t> text_begin_;      ///< per piece: source offset where it starts
};

}  // namespace

std::vector<Piece> lex_template(std::string_view source) {
  // keep_trailing_newline=False: one trailing newline of the source is not rendered.
  if (source.size() >= 2 && source.substr(source.size() - 2) == "\r\n") {
    source.remove_suffix(2);
  } else if (!source.empty() && (source.back() == '\n' || source.back() == '\r')) {
    source.remove_suffix(1);
  }
  return Lexer(source).run();
}

}  // namespace llmbench::tokenizer::detail::jinja
