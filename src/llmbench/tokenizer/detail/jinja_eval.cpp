#include "llmbench/tokenizer/detail/jinja_eval.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <unordered_map>

namespace llmbench::tokenizer::detail::jinja {
namespace {

/// One scope: the template, a loop or a macro call.
struct Frame {
  std::shared_ptr<Frame> parent;
  std::unordered_map<std::string, Value> vars;

  [[nodiscard]] const Value* find(const std::string& name) const {
    for (const Frame* f = this; f != nullptr; f = f->parent.get()) {
      const auto it = f->vars.find(name);
      if (it != f->vars.end())
        return &it->second;
    }
    return nullptr;
  }
};
using FramePtr = std::shared_ptr<Frame>;

FramePtr child_of(const FramePtr& parent) {
  auto f = std::make_shared<Frame>();
  f->parent = parent;
  return f;
}

enum class Flow { Normal, Break, Continue };

[[noreturn]] void type_error(const std::string& op, const Value& a, const Value& b, SourcePos pos) {
  throw JinjaError("unsupported operand type(s) for " + op + ": '" + a.type_name() + "' and '" +
                       b.type_name() + "'",
                   pos);
}

bool is_intlike(const Value& v) {
  return v.is_int() || v.is_bool();
}
std::int64_t int_of(const Value& v) {
  return v.is_bool() ? std::int64_t{v.as_bool()} : v.as_int();
}
bool is_numeric(const Value& v) {
  return v.is_number() || v.is_bool();
}

Value arithmetic(const std::string& op, const Value& a, const Value& b, SourcePos pos) {
  if (a.is_undefined())
    fail_undefined(a, pos);
  if (b.is_undefined())
    fail_undefined(b, pos);
  if (op == "+") {
    if (a.is_string() && b.is_string())
      return Value(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list()) {
      List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return Value(std::move(out));
    }
    if (a.is_string())
      throw JinjaError("can only concatenate str (not \"" + b.type_name() + "\") to str", pos);
  }
  if (op == "*" && ((a.is_string() && is_intlike(b)) || (is_intlike(a) && b.is_string()))) {
    const std::string& s = a.is_string() ? a.as_string() : b.as_string();
    const std::int64_t n = a.is_string() ? int_of(b) : int_of(a);
    std::string out;
    for (std::int64_t i = 0; i < n; ++i) out += s;
    return Value(std::move(out));
  }
  if (!is_numeric(a) || !is_numeric(b))
    type_error(op, a, b, pos);
  const bool ints = is_intlike(a) && is_intlike(b);
  if ((op == "/" || op == "//" || op == "%") && b.as_number() == 0.0)
    throw JinjaError(op == "/" ? "division by zero" : "integer division or modulo by zero", pos);
  if (ints && op != "/") {
    const std::int64_t x = int_of(a);
    const std::int64_t y = int_of(b);
    if (op == "+")
      return Value(x + y);
    if (op == "-")
      return Value(x - y);
    if (op == "*")
      return Value(x * y);
    if (op == "//" || op == "%") {  // Python floors toward negative infinity
      std::int64_t q = x / y;
      if ((x % y != 0) && ((x < 0) != (y < 0)))
        --q;
      return op == "//" ? Value(q) : Value(x - q * y);
    }
    if (op == "**" && y >= 0) {
      std::int64_t r = 1;
      for (std::int64_t i = 0; i < y; ++i) r *= x;
      return Value(r);
    }
  }
  const double x = a.as_number();
  const double y = b.as_number();
  if (op == "+")
    return Value(x + y);
  if (op == "-")
    return Value(x - y);
  if (op == "*")
    return Value(x * y);
  if (op == "/")
    return Value(x / y);
  if (op == "//")
    return Value(std::floor(x / y));
  if (op == "%") {
    const double m = std::fmod(x, y);
    return Value(m != 0.0 && ((m < 0) != (y < 0)) ? m + y : m);
  }
  return Value(std::pow(x, y));
}

bool contains(const Value& container, const Value& needle, SourcePos pos) {
  if (container.is_undefined())
    return false;
  if (container.is_string()) {
    if (!needle.is_string())
      throw JinjaError("'in <string>' requires string as left operand, not " + needle.type_name(),
                       pos);
    return container.as_string().find(needle.as_string()) != std::string::npos;
  }
  if (container.is_list()) {
    for (const auto& x : container.as_list()) {
      if (equals(x, needle))
        return true;
    }
    return false;
  }
  if (container.is_dict())
    return needle.is_string() && container.as_dict().find(needle.as_string()) != nullptr;
  if (container.is_namespace())
    return needle.is_string() &&
           container.as_namespace().attrs->find(needle.as_string()) != nullptr;
  throw JinjaError("argument of type '" + container.type_name() + "' is not iterable", pos);
}

bool compare(const std::string& op, const Value& a, const Value& b, SourcePos pos) {
  if (op == "==")
    return equals(a, b);
  if (op == "!=")
    return !equals(a, b);
  if (op == "in")
    return contains(b, a, pos);
  if (op == "not in")
    return !contains(b, a, pos);
  if (op == "<")
    return less_than(a, b, pos);
  if (op == ">")
    return less_than(b, a, pos);
  if (op == "<=")
    return !less_than(b, a, pos);
  return !less_than(a, b, pos);  // ">="
}

class Renderer {
 public:
  explicit Renderer(const Dict& context) : globals_(std::make_shared<Frame>()) {
    for (const auto& [k, v] : context.items) globals_->vars[k] = v;
  }

  std::string run(const Program& program) {
    std::string out;
    exec(program.body, child_of(globals_), out);
    return out;
  }

 private:
  Flow exec(const Body& body, const FramePtr& frame, std::string& out) {
    for (const auto& s : body) {
      const Flow flow = exec_one(*s, frame, out);
      if (flow != Flow::Normal)
        return flow;
    }
    return Flow::Normal;
  }

  Flow exec_one(const Stmt& s, const FramePtr& frame, std::string& out) {
    switch (s.kind) {
      case StmtKind::Text:
        out += s.text;
        return Flow::Normal;
      case StmtKind::Output:
        out += to_str(eval(*s.expr, frame));
        return Flow::Normal;
      case StmtKind::If:
        for (const auto& [cond, body] : s.branches) {
          if (!cond || eval(*cond, frame).truthy())
            return exec(body, frame, out);
        }
        return Flow::Normal;
      case StmtKind::For:
        exec_for(s, frame, out);
        return Flow::Normal;
      case StmtKind::Set:
        exec_set(s, frame);
        return Flow::Normal;
      case StmtKind::SetBlock: {
        std::string captured;
        exec(s.body, frame, captured);
        frame->vars[s.targets[0]] = Value(std::move(captured));
        return Flow::Normal;
      }
      case StmtKind::Macro:
        frame->vars[s.name] = make_macro(s, frame);
        return Flow::Normal;
      case StmtKind::Break:
        return Flow::Break;
      case StmtKind::Continue:
        return Flow::Continue;
      case StmtKind::Generation:
        return exec(s.body, frame, out);
    }
    return Flow::Normal;
  }

  static void bind_targets(Frame& frame, const std::vector<std::string>& targets,
                           const Value& value, SourcePos pos) {
    if (targets.size() == 1) {
      frame.vars[targets[0]] = value;
      return;
    }
    const List items = iterate(value, pos);
    if (items.size() != targets.size()) {
      throw JinjaError(
          items.size() < targets.size()
              ? "not enough values to unpack (expected " + std::to_string(targets.size()) + ")"
              : "too many values to unpack (expected " + std::to_string(targets.size()) + ")",
          pos);
    }
    for (std::size_t i = 0; i < targets.size(); ++i) frame.vars[targets[i]] = items[i];
  }

  /// Jinja2 gives every iteration a fresh scope under the enclosing one (its compiler enters the
  /// loop frame inside the loop body), so a `set` in one iteration is not seen by the next.
  void exec_for(const Stmt& s, const FramePtr& frame, std::string& out) {
    List items = iterate(eval(*s.expr, frame), s.expr->pos);
    if (s.cond) {  // `for x in xs if cond`: filtered before the loop (loop.length counts them)
      List kept;
      for (auto& item : items) {
        const FramePtr test_scope = child_of(frame);
        bind_targets(*test_scope, s.targets, item, s.pos);
        if (eval(*s.cond, test_scope).truthy())
          kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    const auto n = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < n; ++i) {
      const FramePtr scope = child_of(frame);
      bind_targets(*scope, s.targets, items[static_cast<std::size_t>(i)], s.pos);
      scope->vars["loop"] = loop_object(items, i);
      if (exec(s.body, scope, out) == Flow::Break)
        break;
    }
    if (n == 0)
      exec(s.else_body, child_of(frame), out);
  }

  static Value loop_object(const List& items, std::int64_t i) {
    const auto n = static_cast<std::int64_t>(items.size());
    const auto at = static_cast<std::size_t>(i);
    Dict loop;
    loop.items = {
        {"index", Value(i + 1)},
        {"index0", Value(i)},
        {"revindex", Value(n - i)},
        {"revindex0", Value(n - i - 1)},
        {"first", Value(i == 0)},
        {"last", Value(i == n - 1)},
        {"length", Value(n)},
        {"depth", Value(1)},
        {"depth0", Value(0)},
        {"previtem", i > 0 ? items[at - 1] : Value::undefined("there is no previous item")},
        {"nextitem", i + 1 < n ? items[at + 1] : Value::undefined("there is no next item")},
    };
    loop.items.emplace_back(
        "cycle", Value(Callable{.name = "loop.cycle", .fn = [i](CallArgs& args, SourcePos pos) {
                                  if (args.positional.empty())
                                    throw JinjaError("no items for cycling given", pos);
                                  const auto k =
                                      static_cast<std::size_t>(i) % args.positional.size();
                                  return args.positional[k];
                                }}));
    return Value(std::move(loop));
  }

  void exec_set(const Stmt& s, const FramePtr& frame) {
    Value value = eval(*s.expr, frame);
    if (s.attr.empty()) {
      bind_targets(*frame, s.targets, value, s.pos);
      return;
    }
    const Value* target = frame->find(s.targets[0]);
    if (target == nullptr || !target->is_namespace())
      throw JinjaError("cannot assign attribute on non-namespace object", s.pos);
    target->as_namespace().attrs->set(s.attr, std::move(value));
  }

  Value make_macro(const Stmt& s, const FramePtr& frame) {
    // The macro holds its scope weakly: the scope holds the macro, and a strong reference would
    // keep both alive after the render.
    const Stmt* def = &s;
    const std::weak_ptr<Frame> weak = frame;
    return Value(Callable{.name = s.name, .fn = [this, def, weak](CallArgs& args, SourcePos pos) {
                            const FramePtr defined_in = weak.lock();
                            if (!defined_in)
                              throw JinjaError(
                                  "macro '" + def->name + "' called after its scope ended", pos);
                            return call_macro(*def, defined_in, args, pos);
                          }});
  }

  Value call_macro(const Stmt& def, const FramePtr& defined_in, CallArgs& args, SourcePos pos) {
    const FramePtr scope = child_of(defined_in);
    if (args.positional.size() > def.params.size())
      throw JinjaError("macro '" + def.name + "' takes not more than " +
                           std::to_string(def.params.size()) + " argument(s)",
                       pos);
    for (std::size_t i = 0; i < def.params.size(); ++i) {
      const auto& [name, fallback] = def.params[i];
      const Value* given = nullptr;
      for (const auto& [k, v] : args.keyword) {
        if (k == name)
          given = &v;
      }
      if (i < args.positional.size())
        scope->vars[name] = args.positional[i];
      else if (given != nullptr)
        scope->vars[name] = *given;
      else if (fallback)
        scope->vars[name] = eval(*fallback, scope);
      else
        scope->vars[name] = Value::undefined("'" + name + "' is undefined");
    }
    for (const auto& keyword : args.keyword) {
      const std::string& k = keyword.first;
      const bool known = std::any_of(def.params.begin(), def.params.end(),
                                     [&](const auto& p) { return p.first == k; });
      if (!known)
        throw JinjaError("macro '" + def.name + "' takes no keyword argument '" + k + "'", pos);
    }
    std::string out;
    exec(def.body, scope, out);
    return Value(std::move(out));
  }

  // ---- expressions ----

  Value eval(const Expr& e, const FramePtr& frame) {
    switch (e.kind) {
      case ExprKind::Literal:
        return e.value;
      case ExprKind::Name:
        return lookup(e.name, frame);
      case ExprKind::ListLit: {
        List list;
        for (const auto& c : e.children) list.push_back(eval(*c, frame));
        return Value(std::move(list));
      }
      case ExprKind::DictLit:
        return eval_dict(e, frame);
      case ExprKind::Attr:
        return get_attr(eval(*e.children[0], frame), e.name, e.pos);
      case ExprKind::Item:
        return get_item(eval(*e.children[0], frame), eval(*e.children[1], frame), e.pos);
      case ExprKind::Slice:
        return slice_value(eval(*e.children[0], frame), optional(e.children[1], frame),
                           optional(e.children[2], frame), optional(e.children[3], frame), e.pos);
      case ExprKind::Call:
        return eval_call(e, frame);
      case ExprKind::Filter: {
        CallArgs args = eval_args(e, frame);
        return apply_filter(e.name, eval(*e.children[0], frame), args, e.pos);
      }
      case ExprKind::Test: {
        CallArgs args = eval_args(e, frame);
        return Value(apply_test(e.name, eval(*e.children[0], frame), args, e.pos) != e.negated);
      }
      case ExprKind::Unary:
        return eval_unary(e, frame);
      case ExprKind::Binary:
        return eval_binary(e, frame);
      case ExprKind::Compare:
        return eval_compare(e, frame);
      case ExprKind::Cond:
        if (eval(*e.children[0], frame).truthy())
          return eval(*e.children[1], frame);
        return e.children[2] ? eval(*e.children[2], frame)
                             : Value::undefined("the inline if expression's else part");
    }
    return {};
  }

  Value optional(const ExprPtr& e, const FramePtr& frame) {
    return e ? eval(*e, frame) : Value(None{});
  }

  Value lookup(const std::string& name, const FramePtr& frame) {
    if (const Value* v = frame->find(name))
      return *v;
    Value g = global_function(name);
    if (!g.is_undefined())
      return g;
    return Value::undefined("'" + name + "' is undefined");
  }

  Value eval_dict(const Expr& e, const FramePtr& frame) {
    Dict dict;
    for (std::size_t i = 0; i + 1 < e.children.size(); i += 2) {
      const Value key = eval(*e.children[i], frame);
      if (!key.is_string())
        throw JinjaError("only string keys are supported in dict literals", e.children[i]->pos);
      dict.set(key.as_string(), eval(*e.children[i + 1], frame));
    }
    return Value(std::move(dict));
  }

  CallArgs eval_args(const Expr& e, const FramePtr& frame) {
    CallArgs args;
    for (std::size_t i = 1; i < e.children.size(); ++i)
      args.positional.push_back(eval(*e.children[i], frame));
    for (const auto& [k, v] : e.keyword) args.keyword.emplace_back(k, eval(*v, frame));
    return args;
  }

  Value eval_call(const Expr& e, const FramePtr& frame) {
    const Value callee = eval(*e.children[0], frame);
    if (callee.is_undefined())
      fail_undefined(callee, e.pos);
    if (!callee.is_callable())
      throw JinjaError("'" + callee.type_name() + "' object is not callable", e.pos);
    CallArgs args = eval_args(e, frame);
    return callee.as_callable().fn(args, e.pos);
  }

  Value eval_unary(const Expr& e, const FramePtr& frame) {
    const Value v = eval(*e.children[0], frame);
    if (e.name == "not")
      return Value(!v.truthy());
    if (v.is_undefined())
      fail_undefined(v, e.pos);
    if (!is_numeric(v))
      throw JinjaError("bad operand type for unary " + e.name + ": '" + v.type_name() + "'", e.pos);
    if (e.name == "+")
      return v.is_bool() ? Value(int_of(v)) : v;
    return v.is_float() ? Value(-v.as_float()) : Value(-int_of(v));
  }

  Value eval_binary(const Expr& e, const FramePtr& frame) {
    const std::string& op = e.name;
    Value left = eval(*e.children[0], frame);
    if (op == "and")
      return left.truthy() ? eval(*e.children[1], frame) : left;
    if (op == "or")
      return left.truthy() ? left : eval(*e.children[1], frame);
    const Value right = eval(*e.children[1], frame);
    if (op == "~")
      return Value(to_str(left) + to_str(right));
    return arithmetic(op, left, right, e.pos);
  }

  Value eval_compare(const Expr& e, const FramePtr& frame) {
    Value left = eval(*e.children[0], frame);
    for (std::size_t i = 0; i < e.ops.size(); ++i) {
      Value right = eval(*e.children[i + 1], frame);
      if (!compare(e.ops[i], left, right, e.children[i + 1]->pos))
        return Value(false);
      left = std::move(right);
    }
    return Value(true);
  }

  FramePtr globals_;
};

}  // namespace

std::string render_program(const Program& program, const Dict& context) {
  return Renderer(context).run(program);
}

}  // namespace llmbench::tokenizer::detail::jinja
