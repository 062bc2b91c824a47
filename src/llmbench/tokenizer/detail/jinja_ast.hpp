#pragma once
/// @file
/// Syntax tree of the chat-template interpreter (docs/chat-templates.md lists the constructs).
/// Expressions and statements are each one node type with a kind and children, which keeps the
/// parser and the evaluator short; every node carries its source position for errors.

#include "llmbench/tokenizer/detail/jinja_value.hpp"

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace llmbench::tokenizer::detail::jinja {

/// Expression kinds. The meaning of `name` and `children` per kind:
/// - Literal: `value`; Name: `name`; ListLit: children; DictLit: children = k0, v0, k1, v1, ...
/// - Attr: children[0] . name; Item: children[0] [ children[1] ];
/// - Slice: children[0] [ children[1] : children[2] : children[3] ] (null = omitted);
/// - Call: children[0] ( children[1..], keyword ); Filter: children[0] | name(children[1..],
///   keyword); Test: children[0] is [not] name(children[1..]);
/// - Unary: name ("-", "+", "not") children[0]; Binary: children[0] name children[1] for
///   "+ - * / // % ** ~ and or"; Compare: children[0] ops[0] children[1] ops[1] ... (chained);
/// - Cond: children[1] if children[0] else children[2] (children[2] null: undefined).
enum class ExprKind {
  Literal,
  Name,
  ListLit,
  DictLit,
  Attr,
  Item,
  Slice,
  Call,
  Filter,
  Test,
  Unary,
  Binary,
  Compare,
  Cond
};

struct Expr;
/// Owning pointer to an expression.
using ExprPtr = std::unique_ptr<Expr>;

/// One expression node.
struct Expr {
  ExprKind kind = ExprKind::Literal;
  SourcePos pos;
  Value value;           ///< Literal
  std::string name;      ///< Name, Attr, Filter, Test, Unary/Binary operator
  bool negated = false;  ///< Test: `is not`
  std::vector<ExprPtr> children;
  std::vector<std::pair<std::string, ExprPtr>> keyword;  ///< Call/Filter keyword arguments
  std::vector<std::string> ops;                          ///< Compare operators
};

/// Statement kinds.
/// - Text: `text`; Output: `expr`;
/// - If: `branches` (condition, body), the else branch with a null condition;
/// - For: `targets` in `expr` [if `cond`], `body`, `else_body`;
/// - Set: `targets` (one name, or several to unpack) = `expr`; with `attr`: targets[0].attr =
///   `expr` (a namespace); SetBlock: targets[0] = rendered `body`;
/// - Macro: `name`(`params` with default expressions or null) `body`;
/// - Break / Continue (the loopcontrols extension transformers loads);
/// - Generation: `body` (transformers' `{% generation %}` block; renders its body).
enum class StmtKind { Text, Output, If, For, Set, SetBlock, Macro, Break, Continue, Generation };

struct Stmt;
/// Owning pointer to a statement.
using StmtPtr = std::unique_ptr<Stmt>;
/// A statement list.
using Body = std::vector<StmtPtr>;

/// One statement node.
struct Stmt {
  StmtKind kind = StmtKind::Text;
  SourcePos pos;
  std::string text;
  ExprPtr expr;
  ExprPtr cond;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::string> targets;
  std::string attr;
  std::string name;
  std::vector<std::pair<std::string, ExprPtr>> params;
  Body body;
  Body else_body;
};

/// A parsed template.
struct Program {
  Body body;
};

}  // namespace llmbench::tokenizer::detail::jinja
