#include "llmbench/tokenizer/detail/jinja_parser.hpp"

#include <algorithm>
#include <initializer_list>
#include <string_view>

namespace llmbench::tokenizer::detail::jinja {
namespace {

ExprPtr make(ExprKind kind, SourcePos pos) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->pos = pos;
  return e;
}

class Parser {
 public:
  explicit Parser(std::vector<Piece> pieces) : pieces_(std::move(pieces)) {}

  Program run() {
    Program program;
    parse_body(program.body, {});
    return program;
  }

 private:
  // ---- statements ----

  /// Appends statements to `body` until a statement tag whose keyword is in `stops`; returns
  /// that keyword (the cursor is after it) or "" at the end of the template.
  std::string parse_body(Body& body, std::initializer_list<std::string_view> stops) {
    while (index_ < pieces_.size()) {
      Piece& piece = pieces_[index_++];
      if (piece.kind == PieceKind::Text) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Text;
        s->pos = piece.pos;
        s->text = std::move(piece.text);
        body.push_back(std::move(s));
        continue;
      }
      tokens_ = &piece.tokens;
      at_ = 0;
      if (piece.kind == PieceKind::Output) {
        auto s = std::make_unique<Stmt>();
        s->kind = StmtKind::Output;
        s->pos = piece.pos;
        s->expr = parse_tuple();
        expect_end();
        body.push_back(std::move(s));
        continue;
      }
      const Token& kw = cur();
      if (kw.kind != TokenKind::Name)
        fail("expected a statement name", kw.pos);
      if (std::find(stops.begin(), stops.end(), kw.text) != stops.end()) {
        ++at_;
        return kw.text;
      }
      body.push_back(parse_statement());
    }
    if (stops.size() > 0) {
      std::string names;
      for (const auto s : stops) names += (names.empty() ? "'" : " or '") + std::string(s) + "'";
      fail("unexpected end of template, expected " + names, end_pos());
    }
    return {};
  }

  StmtPtr parse_statement() {
    const Token kw = cur();
    ++at_;
    auto s = std::make_unique<Stmt>();
    s->pos = kw.pos;
    if (kw.text == "if") {
      parse_if(*s);
    } else if (kw.text == "for") {
      parse_for(*s);
    } else if (kw.text == "set") {
      parse_set(*s);
    } else if (kw.text == "macro") {
      parse_macro(*s);
    } else if (kw.text == "break" || kw.text == "continue") {
      s->kind = kw.text == "break" ? StmtKind::Break : StmtKind::Continue;
      expect_end();
    } else if (kw.text == "generation") {
      s->kind = StmtKind::Generation;
      expect_end();
      parse_body(s->body, {"endgeneration"});
      expect_end();
    } else {
      fail("unknown or unexpected tag '" + kw.text + "'", kw.pos);
    }
    return s;
  }

  void parse_if(Stmt& s) {
    s.kind = StmtKind::If;
    ExprPtr cond = parse_expression();
    while (true) {
      expect_end();
      Body body;
      const std::string stop = parse_body(body, {"elif", "else", "endif"});
      s.branches.emplace_back(std::move(cond), std::move(body));
      if (stop == "endif")
        break;
      if (stop == "else") {
        expect_end();
        Body else_body;
        parse_body(else_body, {"endif"});
        s.branches.emplace_back(nullptr, std::move(else_body));
        break;
      }
      cond = parse_expression();
    }
    expect_end();
  }

  void parse_for(Stmt& s) {
    s.kind = StmtKind::For;
    s.targets = parse_targets();
    expect_name("in");
    s.expr = parse_tuple(/*with_cond=*/false);
    if (accept_name("if"))
      s.cond = parse_expression();
    if (cur().kind == TokenKind::Name && cur().text == "recursive")
      fail("recursive loops are not supported", cur().pos);
    expect_end();
    if (parse_body(s.body, {"else", "endfor"}) == "else") {
      expect_end();
      parse_body(s.else_body, {"endfor"});
    }
    expect_end();
  }

  void parse_set(Stmt& s) {
    s.kind = StmtKind::Set;
    s.targets = parse_targets();
    if (s.targets.size() == 1 && accept_op(".")) {
      s.attr = expect_kind(TokenKind::Name, "an attribute name").text;
    }
    if (cur().kind == TokenKind::End && s.attr.empty() && s.targets.size() == 1) {
      s.kind = StmtKind::SetBlock;
      expect_end();
      parse_body(s.body, {"endset"});
      expect_end();
      return;
    }
    expect_op("=");
    s.expr = parse_tuple();
    expect_end();
  }

  void parse_macro(Stmt& s) {
    s.kind = StmtKind::Macro;
    s.name = expect_kind(TokenKind::Name, "a macro name").text;
    expect_op("(");
    while (!accept_op(")")) {
      if (!s.params.empty())
        expect_op(",");
      if (accept_op(")"))
        break;
      std::string param = expect_kind(TokenKind::Name, "a parameter name").text;
      ExprPtr def = accept_op("=") ? parse_expression() : nullptr;
      s.params.emplace_back(std::move(param), std::move(def));
    }
    expect_end();
    parse_body(s.body, {"endmacro"});
    if (cur().kind == TokenKind::Name)
      ++at_;  // {% endmacro name %}
    expect_end();
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    const bool paren = accept_op("(");
    do {
      names.push_back(expect_kind(TokenKind::Name, "a variable name").text);
    } while (accept_op(","));
    if (paren)
      expect_op(")");
    return names;
  }

  // ---- expressions ----

  /// An expression, or several separated by commas (an implicit tuple, as a list).
  ExprPtr parse_tuple(bool with_cond = true) {
    const SourcePos pos = cur().pos;
    ExprPtr first = with_cond ? parse_expression() : parse_or();
    if (!is_op(","))
      return first;
    auto list = make(ExprKind::ListLit, pos);
    list->children.push_back(std::move(first));
    while (accept_op(",")) {
      if (cur().kind == TokenKind::End || is_op(")"))
        break;
      list->children.push_back(with_cond ? parse_expression() : parse_or());
    }
    return list;
  }

  ExprPtr parse_expression() {
    ExprPtr e = parse_or();
    while (is_name("if")) {
      const SourcePos pos = cur().pos;
      ++at_;
      auto cond = make(ExprKind::Cond, pos);
      cond->children.push_back(parse_or());
      cond->children.push_back(std::move(e));
      cond->children.push_back(accept_name("else") ? parse_expression() : nullptr);
      e = std::move(cond);
    }
    return e;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, SourcePos pos) {
    auto e = make(ExprKind::Binary, pos);
    e->name = std::move(op);
    e->children.push_back(std::move(left));
    e->children.push_back(std::move(right));
    return e;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (is_name("or")) {
      const SourcePos pos = cur().pos;
      ++at_;
      left = binary("or", std::move(left), parse_and(), pos);
    }
    return left;
  }
  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (is_name("and")) {
      const SourcePos pos = cur().pos;
      ++at_;
      left = binary("and", std::move(left), parse_not(), pos);
    }
    return left;
  }
  ExprPtr parse_not() {
    if (is_name("not")) {
      auto e = make(ExprKind::Unary, cur().pos);
      ++at_;
      e->name = "not";
      e->children.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }
  ExprPtr parse_compare() {
    const SourcePos pos = cur().pos;
    ExprPtr first = parse_math1();
    ExprPtr cmp;
    while (true) {
      std::string op;
      if (cur().kind == TokenKind::Op &&
          (is_op("==") || is_op("!=") || is_op("<") || is_op(">") || is_op("<=") || is_op(">="))) {
        op = cur().text;
        ++at_;
      } else if (is_name("in")) {
        op = "in";
        ++at_;
      } else if (is_name("not") && at_ + 1 < tokens_->size() &&
                 (*tokens_)[at_ + 1].kind == TokenKind::Name && (*tokens_)[at_ + 1].text == "in") {
        op = "not in";
        at_ += 2;
      } else {
        break;
      }
      if (!cmp) {
        cmp = make(ExprKind::Compare, pos);
        cmp->children.push_back(std::move(first));
      }
      cmp->ops.push_back(op);
      cmp->children.push_back(parse_math1());
    }
    return cmp ? std::move(cmp) : std::move(first);
  }
  template <class Next>
  ExprPtr parse_left_assoc(std::initializer_list<std::string_view> ops, Next next) {
    ExprPtr left = (this->*next)();
    while (cur().kind == TokenKind::Op &&
           std::find(ops.begin(), ops.end(), cur().text) != ops.end()) {
      const Token op = cur();
      ++at_;
      left = binary(op.text, std::move(left), (this->*next)(), op.pos);
    }
    return left;
  }
  ExprPtr parse_math1() { return parse_left_assoc({"+", "-"}, &Parser::parse_concat); }
  ExprPtr parse_concat() { return parse_left_assoc({"~"}, &Parser::parse_math2); }
  ExprPtr parse_math2() { return parse_left_assoc({"*", "/", "//", "%"}, &Parser::parse_pow); }
  ExprPtr parse_pow() { return parse_left_assoc({"**"}, &Parser::parse_unary_filtered); }
  // The analyzer loses the unique_ptr's ownership through parse_left_assoc's member pointer
  // and reports a leak of the node parse_unary returns; ownership passes to the caller.
  // NOLINTNEXTLINE(clang-analyzer-cplusplus.NewDeleteLeaks)
  ExprPtr parse_unary_filtered() { return parse_unary(true); }

  ExprPtr parse_unary(bool with_filter) {
    ExprPtr node;
    if (is_op("-") || is_op("+")) {
      node = make(ExprKind::Unary, cur().pos);
      node->name = cur().text;
      ++at_;
      node->children.push_back(parse_unary(false));
    } else {
      node = parse_primary();
    }
    node = parse_postfix(std::move(node));
    return with_filter ? parse_filters(std::move(node)) : std::move(node);
  }

  ExprPtr parse_primary() {
    const Token& t = cur();
    const SourcePos pos = t.pos;
    if (t.kind == TokenKind::Name) {
      ++at_;
      auto e = make(ExprKind::Literal, pos);
      if (t.text == "true" || t.text == "True") {
        e->value = Value(true);
      } else if (t.text == "false" || t.text == "False") {
        e->value = Value(false);
      } else if (t.text == "none" || t.text == "None") {
        e->value = Value(None{});
      } else {
        e->kind = ExprKind::Name;
        e->name = t.text;
      }
      return e;
    }
    if (t.kind == TokenKind::String) {
      std::string s;
      while (cur().kind == TokenKind::String)  // adjacent literals concatenate
        s += (*tokens_)[at_++].text;
      auto e = make(ExprKind::Literal, pos);
      e->value = Value(std::move(s));
      return e;
    }
    if (t.kind == TokenKind::Int || t.kind == TokenKind::Float) {
      ++at_;
      auto e = make(ExprKind::Literal, pos);
      e->value = t.kind == TokenKind::Int ? Value(t.int_value) : Value(t.float_value);
      return e;
    }
    if (accept_op("(")) {
      if (accept_op(")"))
        return make(ExprKind::ListLit, pos);
      ExprPtr inner = parse_tuple();
      expect_op(")");
      return inner;
    }
    if (accept_op("["))
      return parse_sequence(ExprKind::ListLit, "]", pos);
    if (accept_op("{"))
      return parse_sequence(ExprKind::DictLit, "}", pos);
    fail(t.kind == TokenKind::End ? "expected an expression" : "unexpected '" + t.text + "'", pos);
  }

  ExprPtr parse_sequence(ExprKind kind, std::string_view close, SourcePos pos) {
    auto e = make(kind, pos);
    while (!accept_op(close)) {
      if (!e->children.empty()) {
        expect_op(",");
        if (accept_op(close))
          break;
      }
      e->children.push_back(parse_expression());
      if (kind == ExprKind::DictLit) {
        expect_op(":");
        e->children.push_back(parse_expression());
      }
    }
    return e;
  }

  ExprPtr parse_postfix(ExprPtr node) {
    while (true) {
      const SourcePos pos = cur().pos;
      if (accept_op(".")) {
        if (cur().kind == TokenKind::Int) {  // x.0 is x[0]
          auto e = make(ExprKind::Item, pos);
          e->children.push_back(std::move(node));
          e->children.push_back(parse_primary());
          node = std::move(e);
          continue;
        }
        auto e = make(ExprKind::Attr, pos);
        e->name = expect_kind(TokenKind::Name, "an attribute name").text;
        e->children.push_back(std::move(node));
        node = std::move(e);
      } else if (accept_op("[")) {
        node = parse_subscript(std::move(node), pos);
      } else if (accept_op("(")) {
        auto e = make(ExprKind::Call, pos);
        e->children.push_back(std::move(node));
        parse_call_args(*e);
        node = std::move(e);
      } else {
        return node;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr obj, SourcePos pos) {
    ExprPtr start = is_op(":") ? nullptr : parse_expression();
    if (accept_op("]")) {
      auto e = make(ExprKind::Item, pos);
      e->children.push_back(std::move(obj));
      e->children.push_back(std::move(start));
      return e;
    }
    expect_op(":");
    auto e = make(ExprKind::Slice, pos);
    e->children.push_back(std::move(obj));
    e->children.push_back(std::move(start));
    e->children.push_back(is_op(":") || is_op("]") ? nullptr : parse_expression());
    ExprPtr step;
    if (accept_op(":") && !is_op("]"))
      step = parse_expression();
    e->children.push_back(std::move(step));
    expect_op("]");
    return e;
  }

  /// After "(": arguments up to ")"; `name=value` ones are keyword arguments.
  void parse_call_args(Expr& call) {
    while (!accept_op(")")) {
      if (call.children.size() > 1 || !call.keyword.empty()) {
        expect_op(",");
        if (accept_op(")"))
          break;
      }
      if (cur().kind == TokenKind::Name && at_ + 1 < tokens_->size() &&
          (*tokens_)[at_ + 1].kind == TokenKind::Op && (*tokens_)[at_ + 1].text == "=") {
        std::string key = cur().text;
        at_ += 2;
        call.keyword.emplace_back(std::move(key), parse_expression());
      } else {
        if (!call.keyword.empty())
          fail("positional argument follows keyword argument", cur().pos);
        call.children.push_back(parse_expression());
      }
    }
  }

  ExprPtr parse_filters(ExprPtr node) {
    while (true) {
      const SourcePos pos = cur().pos;
      if (accept_op("|")) {
        auto e = make(ExprKind::Filter, pos);
        e->name = expect_kind(TokenKind::Name, "a filter name").text;
        e->children.push_back(std::move(node));
        if (accept_op("("))
          parse_call_args(*e);
        node = std::move(e);
      } else if (accept_name("is")) {
        auto e = make(ExprKind::Test, pos);
        e->negated = accept_name("not");
        e->name = expect_kind(TokenKind::Name, "a test name").text;
        e->children.push_back(std::move(node));
        if (accept_op("(")) {
          parse_call_args(*e);
        } else if (test_arg_follows()) {  // `is divisibleby 3`, `is equalto 'x'`
          e->children.push_back(parse_postfix(parse_primary()));
        }
        node = std::move(e);
      } else if (accept_op("(")) {
        auto e = make(ExprKind::Call, pos);
        e->children.push_back(std::move(node));
        parse_call_args(*e);
        node = std::move(e);
      } else {
        return node;
      }
    }
  }

  [[nodiscard]] bool test_arg_follows() const {
    const Token& t = cur();
    if (t.kind == TokenKind::Name)
      return t.text != "else" && t.text != "or" && t.text != "and" && t.text != "if" &&
             t.text != "is" && t.text != "in" && t.text != "not";
    return t.kind == TokenKind::String || t.kind == TokenKind::Int || t.kind == TokenKind::Float ||
           is_op("[") || is_op("{");
  }

  // ---- token cursor ----

  [[nodiscard]] const Token& cur() const { return (*tokens_)[at_]; }
  [[nodiscard]] bool is_op(std::string_view op) const {
    return cur().kind == TokenKind::Op && cur().text == op;
  }
  [[nodiscard]] bool is_name(std::string_view name) const {
    return cur().kind == TokenKind::Name && cur().text == name;
  }
  bool accept_op(std::string_view op) {
    if (!is_op(op))
      return false;
    ++at_;
    return true;
  }
  bool accept_name(std::string_view name) {
    if (!is_name(name))
      return false;
    ++at_;
    return true;
  }
  void expect_op(std::string_view op) {
    if (!accept_op(op))
      fail("expected '" + std::string(op) + "'" + found(), cur().pos);
  }
  void expect_name(std::string_view name) {
    if (!accept_name(name))
      fail("expected '" + std::string(name) + "'" + found(), cur().pos);
  }
  const Token& expect_kind(TokenKind kind, const std::string& what) {
    if (cur().kind != kind)
      fail("expected " + what + found(), cur().pos);
    return (*tokens_)[at_++];
  }
  void expect_end() {
    if (cur().kind != TokenKind::End)
      fail("expected the end of the tag" + found(), cur().pos);
  }
  [[nodiscard]] std::string found() const {
    return cur().kind == TokenKind::End ? ", found the end of the tag"
                                        : ", found '" + cur().text + "'";
  }
  [[nodiscard]] SourcePos end_pos() const {
    if (pieces_.empty())
      return {};
    const Piece& last = pieces_.back();
    return last.tokens.empty() ? last.pos : last.tokens.back().pos;
  }
  [[noreturn]] static void fail(const std::string& message, SourcePos pos) {
    throw JinjaError(message, pos);
  }

  std::vector<Piece> pieces_;
  std::size_t index_ = 0;
  const std::vector<Token>* tokens_ = nullptr;
  std::size_t at_ = 0;
};

}  // namespace

Program parse_program(std::vector<Piece> pieces) {
  return Parser(std::move(pieces)).run();
}

}  // namespace llmbench::tokenizer::detail::jinja
