#pragma once
/// @file
/// Evaluator of the chat-template interpreter, and the built-in filters, tests, globals and
/// methods it calls (jinja_builtins.cpp). Semantics are Jinja2 3.1's as transformers configures
/// it (`ImmutableSandboxedEnvironment`, default `Undefined`, transformers' own `tojson`,
/// `raise_exception` and `strftime_now` globals, the `loopcontrols` extension); the list of what
/// is supported and the known differences is docs/chat-templates.md.
///
/// Scoping follows Jinja2: `set` writes the innermost scope (the template, one iteration of a
/// `for` loop, a macro call); a loop's assignments are gone after the iteration; namespaces are
/// shared objects, so `{% set ns.x = ... %}` inside a loop is seen after it.

#include "llmbench/tokenizer/detail/jinja_ast.hpp"
#include "llmbench/tokenizer/detail/jinja_value.hpp"

#include <string>

namespace llmbench::tokenizer::detail::jinja {

/// Renders `program` with the template variables `context` (messages, tools,
/// add_generation_prompt, special tokens, kwargs). Throws `JinjaError` with the position of
/// the failing node (including `raise_exception` calls, whose message is the template's).
std::string render_program(const Program& program, const Dict& context);

// ---- built-ins (jinja_builtins.cpp) ----

/// Applies filter `name` to `value` (`value|name(args)`); unknown filters are an error
/// ("no filter named 'x'"), as Jinja2 raises.
Value apply_filter(const std::string& name, const Value& value, const CallArgs& args,
                   SourcePos pos);
/// Applies test `name` (`value is name(args)`); unknown tests are an error.
bool apply_test(const std::string& name, const Value& value, const CallArgs& args, SourcePos pos);
/// `obj.name`: Python attribute first (str and dict methods), then item; Undefined when
/// neither exists (Jinja2's `Environment.getattr`).
Value get_attr(const Value& obj, const std::string& name, SourcePos pos);
/// `obj[key]`: item first, then attribute for a string key; Undefined when missing (index out
/// of range included), as Jinja2's `Environment.getitem`.
Value get_item(const Value& obj, const Value& key, SourcePos pos);
/// `obj[start:stop:step]` of a list or string (null Values are omitted bounds).
Value slice_value(const Value& obj, const Value& start, const Value& stop, const Value& step,
                  SourcePos pos);
/// A global function by name (range, namespace, dict, raise_exception, strftime_now), or
/// undefined.
Value global_function(const std::string& name);
/// Throws the UndefinedError Jinja2 raises when an undefined value is used as a value.
[[noreturn]] void fail_undefined(const Value& v, SourcePos pos);
/// Python iteration: list items, dict keys, string characters; undefined is empty; others are
/// an error ("'int' object is not iterable").
List iterate(const Value& v, SourcePos pos);
/// Python `len()`: string code points, list items, dict keys; undefined is 0.
std::int64_t length_of(const Value& v, SourcePos pos);

}  // namespace llmbench::tokenizer::detail::jinja
