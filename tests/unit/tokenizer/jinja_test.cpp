// The chat-template interpreter on small templates whose output follows from Jinja2's documented
// rules with transformers' settings (trim_blocks, lstrip_blocks; docs/chat-templates.md) and
// Python's str/json behaviour; and the positions its errors name.
#include "llmbench/tokenizer/chat_template.hpp"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace llmbench::tokenizer {
namespace {

/// Renders `src` with no messages, no generation prompt and `kwargs` as variables; an error
/// comes back as "ERROR: <what()>".
std::string render(std::string_view src, const std::string& kwargs = "{}") {
  auto t = ChatTemplate::parse(src, "t.jinja");
  if (!t)
    return "ERROR: " + t.error().what();
  ChatRenderOptions options;
  options.add_generation_prompt = false;
  options.kwargs_json = kwargs;
  auto out = t->render_json("[]", options);
  return out ? *out : "ERROR: " + out.error().what();
}

TEST(JinjaWhitespace, TrimBlocksAndLstripBlocks) {
  EXPECT_EQ(render("{% if true %}\n  x\n{% endif %}\n"), "  x\n");
  EXPECT_EQ(render("line\n    {% if true %}yes{% endif %}"), "line\nyes");
  EXPECT_EQ(render("line\n    {%+ if true %}yes{% endif %}"), "line\n    yes");
  EXPECT_EQ(render("{% if true +%}\nx{% endif %}"), "\nx");
  EXPECT_EQ(render("a\n  {{ 'x' }}\n"), "a\n  x");            // output tags are not lstripped
  EXPECT_EQ(render("a  {% if true %}b{% endif %}"), "a  b");  // not at a line start
  EXPECT_EQ(render("{# comment #}\nx"), "x");
  EXPECT_EQ(render("  {# comment #}x"), "x");
}

TEST(JinjaWhitespace, MinusStripsEverythingAndTrailingNewlineIsDropped) {
  EXPECT_EQ(render("a \n {%- if true -%} \n b \n {%- endif -%} \n c"), "abc");
  EXPECT_EQ(render("a\n{{- 'b' -}}\nc"), "abc");
  EXPECT_EQ(render("x\n"), "x");
  EXPECT_EQ(render("x\n\n"), "x\n");
  EXPECT_EQ(render("a\r\nb"), "a\nb");
  EXPECT_EQ(render("{% raw %}{{ not rendered }}{% endraw %}"), "{{ not rendered }}");
}

TEST(JinjaExpressions, PrecedenceAndArithmetic) {
  EXPECT_EQ(render("{{ 1 + 2 * 3 }}|{{ (1 + 2) * 3 }}|{{ 2 ** 10 }}"), "7|9|1024");
  EXPECT_EQ(render("{{ [1, 2, 3] | length - 1 }}"), "2");  // the filter binds first
  EXPECT_EQ(render("{{ 'n=' ~ 1 ~ none }}"), "n=1None");
  EXPECT_EQ(render("{{ 7 // 2 }}|{{ -7 // 2 }}|{{ 7 % -3 }}|{{ 7 / 2 }}|{{ 6 / 3 }}"),
            "3|-4|-2|3.5|2.0");
  EXPECT_EQ(render("{{ 1 < 2 < 3 }}|{{ 3 > 2 > 2 }}|{{ not 1 == 2 }}"), "True|False|True");
  EXPECT_EQ(render("{{ 'b' in 'abc' }}|{{ 2 not in [1, 2] }}|{{ 'k' in {'k': 1} }}"),
            "True|False|True");
  EXPECT_EQ(render("{{ '' or 'fallback' }}|{{ 'a' and 'b' }}|{{ 0 and 'b' }}"), "fallback|b|0");
  EXPECT_EQ(render("{{ 'y' if x is defined else 'n' }}|{{ 'z' if false }}"), "n|");
  EXPECT_EQ(render("{{ 'ab' * 2 }}|{{ [1] + [2] }}|{{ -(3) }}"), "abab|[1, 2]|-3");
}

TEST(JinjaExpressions, PrintsValuesAsPythonDoes) {
  EXPECT_EQ(render("{{ true }}|{{ none }}|{{ [1, 'a', none] }}|{{ {'k': 'v'} }}"),
            "True|None|[1, 'a', None]|{'k': 'v'}");
  EXPECT_EQ(render("{{ 1.0 }}|{{ 1e-7 }}|{{ 0.1 + 0.2 }}|{{ 1e16 }}|{{ 123456.5 }}"),
            "1.0|1e-07|0.30000000000000004|1e+16|123456.5");
  EXPECT_EQ(render("{{ [\"it's\"] }}|{{ ['a\\nb'] }}"), "[\"it's\"]|['a\\nb']");
  EXPECT_EQ(render("{{ 'a\\tb' }}|{{ '\\u00e9' }}|{{ \"x\" 'y' }}"), "a\tb|é|xy");
}

TEST(JinjaExpressions, SubscriptsSlicesAndUndefined) {
  EXPECT_EQ(render("{{ [1, 2, 3, 4][::-1] }}|{{ 'héllo'[1:3] }}|{{ [1, 2, 3][-1] }}"),
            "[4, 3, 2, 1]|él|3");
  EXPECT_EQ(render("{{ [1, 2, 3][1:] }}|{{ 'abc'[5] }}|{{ 'abc'[-1] }}"), "[2, 3]||c");
  EXPECT_EQ(render("{{ m.missing }}|{{ m['missing'] is defined }}|{{ [1][5] is defined }}",
                   R"({"m": {}})"),
            "|False|False");
  EXPECT_EQ(render("{{ (none).x is defined }}|{{ nothing | length }}|{{ nothing }}"), "False|0|");
  EXPECT_EQ(render("{% for x in nothing %}x{% endfor %}ok"), "ok");
}

TEST(JinjaStatements, LoopsAndLoopVariables) {
  EXPECT_EQ(render("{% for x in ['a', 'b', 'c'] %}{{ loop.index }}{{ x }}"
                   "{% if loop.first %}F{% endif %}{% if loop.last %}L{% endif %},{% endfor %}"),
            "1aF,2b,3cL,");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in [1, 2, 3, 4] if x is even %}{{ x }}{{ loop.length }}{% endfor %}"),
            "2242");
  EXPECT_EQ(render("{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}"),
            "a=1;b=2;");
  EXPECT_EQ(render("{% for k, v in {'x': 1} | items %}{{ k }}{{ v }}{% endfor %}"), "x1");
  EXPECT_EQ(render("{% for x in [1, 2, 3] %}{% if x == 2 %}{% continue %}{% endif %}{{ x }}"
                   "{% if x == 3 %}{% break %}{% endif %}{% endfor %}"),
            "13");
  EXPECT_EQ(render("{% for x in 'ab' %}{{ x }}{{ loop.revindex0 }}{% endfor %}"), "a1b0");
}

TEST(JinjaStatements, ScopingOfSetAndNamespaces) {
  // Each iteration starts from the enclosing scope; nothing leaks out of the loop.
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}"
                   "|{{ x }}"),
            "23|1");
  EXPECT_EQ(render("{% set ns = namespace(n=0) %}{% for i in [1, 2, 3] %}"
                   "{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}"),
            "6");
  EXPECT_EQ(render("{% if true %}{% set y = 'set in if' %}{% endif %}{{ y }}"), "set in if");
  EXPECT_EQ(render("{% set a, b = [1, 2] %}{{ b }}{{ a }}"), "21");
  EXPECT_EQ(render("{% set block %}x{{ 1 + 1 }}{% endset %}{{ block }}{{ block | length }}"),
            "x22");
}

TEST(JinjaStatements, Macros) {
  EXPECT_EQ(render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
                   "{{ greet('A') }} {{ greet('B', punct='?') }} {{ greet() }}"),
            "Hi A! Hi B? Hi !");
  EXPECT_EQ(render("{% set ns = namespace(done=false) %}{% macro flip() %}"
                   "{% set ns.done = true %}{% endmacro %}{{ flip() }}{{ ns.done }}"),
            "True");
}

TEST(JinjaFilters, TojsonIsJsonDumpsWithTransformersDefaults) {
  EXPECT_EQ(render("{{ {'a': [1, 2.5, none, true], 'b': 'é\"\\n'} | tojson }}"),
            R"({"a": [1, 2.5, null, true], "b": "é\"\n"})");
  EXPECT_EQ(render("{{ {'a': [1], 'e': {}} | tojson(indent=2) }}"),
            "{\n  \"a\": [\n    1\n  ],\n  \"e\": {}\n}");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | tojson(sort_keys=true) }}"), R"({"a": 2, "b": 1})");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2} | tojson(separators=(',', ':')) }}"), R"({"b":1,"a":2})");
  EXPECT_EQ(render("{{ 'é' | tojson(ensure_ascii=true) }}|{{ '\\x01' | tojson }}"),
            R"("\u00e9"|"\u0001")");
  EXPECT_EQ(render("{{ v | tojson }}", R"({"v": {"z": 1, "a": 1.5}})"), R"({"z": 1, "a": 1.5})");
}

TEST(JinjaFilters, StringAndListFilters) {
  EXPECT_EQ(render("{{ '  x \n' | trim }}|{{ 'xxhixx' | trim('x') }}"), "x|hi");
  EXPECT_EQ(render("{{ ['a', 'b'] | join(', ') }}|{{ [1, 2] | join }}"), "a, b|12");
  EXPECT_EQ(render("{{ 'aaa' | replace('a', 'b', 2) }}|{{ 'héllo' | length }}"), "bba|5");
  EXPECT_EQ(render("{{ [{'n': 'a'}, {'n': 'b'}] | map(attribute='n') | join }}"), "ab");
  EXPECT_EQ(render("{{ [{'t': 'x', 'v': 1}, {'t': 'y', 'v': 2}] | selectattr('t', 'equalto', 'y')"
                   " | map(attribute='v') | list }}"),
            "[2]");
  EXPECT_EQ(render("{{ ['a', 'code_interpreter', 'b'] | reject('equalto', 'code_interpreter')"
                   " | join(', ') }}"),
            "a, b");
  EXPECT_EQ(
      render("{{ missing | default('d') }}|{{ '' | default('d', true) }}|{{ 0 | default(1) }}"),
      "d|d|0");
  EXPECT_EQ(
      render("{{ [3, 1, 2] | sort | list }}|{{ ['B', 'a'] | sort | join }}|{{ [3, 1] | max }}"),
      "[1, 2, 3]|aB|3");
  EXPECT_EQ(render("{{ [1, 1, 2] | unique | list }}|{{ [1, 2] | first }}{{ [1, 2] | last }}"),
            "[1, 2]|12");
  EXPECT_EQ(render("{{ 'ab' | upper }}{{ 'AB' | lower }}|{{ '3' | int + 1 }}|{{ 'x' | int }}"),
            "ABab|4|0");
}

TEST(JinjaMethods, PythonStrAndDictMethods) {
  EXPECT_EQ(render("{{ 'a</think>b</think>c'.split('</think>')[-1] }}|"
                   "{{ 'a</think>b</think>c'.split('</think>', 1)[1] }}"),
            "c|b</think>c");
  EXPECT_EQ(render("{{ '  a  b '.split() }}|{{ 'a,b,c'.rsplit(',', 1) }}"),
            "['a', 'b']|['a,b', 'c']");
  EXPECT_EQ(
      render("{{ '\\n\\n x\\n'.lstrip('\\n') }}|{{ '\\n x \\n'.strip() }}|{{ 'xay'.rstrip('y') }}"),
      " x\n|x|xa");
  EXPECT_EQ(render("{{ 'abc'.startswith(('x', 'a')) }}{{ 'abc'.endswith('bc') }}"), "TrueTrue");
  EXPECT_EQ(render("{{ 'hello world'.title() }}|{{ 'a-b'.replace('-', '+') }}"), "Hello World|a+b");
  EXPECT_EQ(render("{{ d.get('k') }}|{{ d.get('no', 'dflt') }}|{{ d.keys() | list }}",
                   R"({"d": {"k": "v"}})"),
            "v|dflt|['k']");
}

TEST(JinjaTests, BuiltinTests) {
  EXPECT_EQ(render("{{ none is none }}{{ 1 is number }}{{ 'a' is string }}{{ {} is mapping }}"
                   "{{ 'a' is iterable }}{{ x is defined }}{{ false is false }}{{ 0 is false }}"
                   "{{ 3 is odd }}{{ 4 is divisibleby 2 }}{{ 1 is not none }}"),
            "TrueTrueTrueTrueTrueFalseTrueFalseTrueTrueTrue");
}

TEST(JinjaGlobals, RangeNamespaceDict) {
  EXPECT_EQ(render("{{ range(3) | list }}|{{ range(1, 7, 2) | list }}"), "[0, 1, 2]|[1, 3, 5]");
  EXPECT_EQ(render("{% set ns = namespace({'a': 1}, b=2) %}{{ ns.a + ns.b }}|{{ dict(k=1) }}"),
            "3|{'k': 1}");
}

TEST(JinjaErrors, NameTheTemplateLineAndColumn) {
  EXPECT_EQ(render("{% if x %}a"),
            "ERROR: t.jinja:1:11: unexpected end of template, expected 'elif' or 'else' or "
            "'endif'");
  EXPECT_EQ(render("line1\n  {% frobnicate %}"),
            "ERROR: t.jinja:2:6: unknown or unexpected tag 'frobnicate'");
  EXPECT_EQ(render("{{ 'abc }}"), "ERROR: t.jinja:1:4: unterminated string literal");
  EXPECT_EQ(render("x\n{{ 1 +"), "ERROR: t.jinja:2:1: unterminated tag (missing '}}')");
  EXPECT_EQ(render("{{ raise_exception('Bad roles') }}"), "ERROR: t.jinja:1:19: Bad roles");
  EXPECT_EQ(render("{{ 'a' + 1 }}"),
            "ERROR: t.jinja:1:8: can only concatenate str (not \"int\") to str");
  EXPECT_EQ(render("{{ x | nope }}"), "ERROR: t.jinja:1:6: no filter named 'nope'");
  EXPECT_EQ(render("{{ nope.x }}"), "ERROR: t.jinja:1:8: 'nope' is undefined");
  EXPECT_EQ(render("{% set x = 1 %}{% set x.a = 2 %}"),
            "ERROR: t.jinja:1:19: cannot assign attribute on non-namespace object");
  EXPECT_EQ(render("{{ [1].append(2) }}"),
            "ERROR: t.jinja:1:14: access to attribute 'append' of 'list' object is unsafe");
  EXPECT_EQ(render("{% for a, b in [[1]] %}{% endfor %}"),
            "ERROR: t.jinja:1:4: not enough values to unpack (expected 2)");
}

}  // namespace
}  // namespace llmbench::tokenizer
