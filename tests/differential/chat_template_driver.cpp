// Chat-template differential driver: llmbench::tokenizer::ChatTemplate against npm
// @huggingface/jinja (tests/differential/README.md, "Chat templates").
//
//   chat_template_driver TEMPLATES_TSV CASES_JSONL REF_JSONL [FAILURES_JSONL]
//
// TEMPLATES_TSV: "name<TAB>file<TAB>profile[<TAB>bos<TAB>eos]" per template; a .json file is a
// tokenizer_config.json (template and special tokens from it, as load_chat_template_file reads
// them), any other file a Jinja source. CASES_JSONL: gen_chat_cases.mjs. REF_JSONL: per case, in
// order, chat_reference.mjs's {"ok", "output"|"error"}. A case agrees when both sides rendered
// the same bytes, or both raised. Prints per template the counts and the first failures, then
// "chat templates: compared N renders across K templates, M differences". Exit 0 when M == 0,
// 1 otherwise, 2 on bad input.

#include "llmbench/tokenizer/chat_template.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace tk = llmbench::tokenizer;
using Json = nlohmann::ordered_json;

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string field;
  while (std::getline(ss, field, '\t')) out.push_back(field);
  return out;
}

std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error("cannot open " + path);
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty())
      lines.push_back(line);
  }
  return lines;
}

std::map<std::string, tk::ChatTemplate> load_templates(const std::string& tsv) {
  std::map<std::string, tk::ChatTemplate> out;
  for (const auto& line : read_lines(tsv)) {
    const auto f = split_tabs(line);
    if (f.size() < 3)
      throw std::runtime_error("bad templates line: " + line);
    auto t = tk::load_chat_template_file(f[1]);
    if (!t)
      throw std::runtime_error(t.error().what());
    out.emplace(f[0], std::move(*t));
  }
  return out;
}

struct Counts {
  std::size_t renders = 0;
  std::size_t errors_both = 0;
  std::size_t differences = 0;
};

/// First byte where `a` and `b` differ, with some context of each, for the failure report.
std::string first_difference(const std::string& a, const std::string& b) {
  std::size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const std::size_t from = i > 40 ? i - 40 : 0;
  const auto quote = [](const std::string& s) {
    return Json(s).dump(-1, ' ', false, Json::error_handler_t::replace);
  };
  return fmt::format("at byte {}: ours {} | ref {}", i, quote(a.substr(from, 100)),
                     quote(b.substr(from, 100)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fputs("usage: chat_template_driver TEMPLATES_TSV CASES_JSONL REF_JSONL [FAILURES]\n",
               stderr);
    return 2;
  }
  try {
    const auto templates = load_templates(argv[1]);
    const auto cases = read_lines(argv[2]);
    const auto refs = read_lines(argv[3]);
    if (cases.size() != refs.size()) {
      fmt::print(stderr, "chat templates: {} cases but {} reference lines\n", cases.size(),
                 refs.size());
      return 2;
    }
    std::ofstream failures;
    if (argc > 4)
      failures.open(argv[4]);
    std::map<std::string, Counts> counts;
    std::size_t shown = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      const Json c = Json::parse(cases[i]);
      const Json ref = Json::parse(refs[i]);
      const std::string name = c["template"].get<std::string>();
      const auto it = templates.find(name);
      if (it == templates.end())
        throw std::runtime_error("case names unknown template " + name);
      tk::ChatRenderOptions options;
      options.add_generation_prompt = c["add_generation_prompt"].get<bool>();
      if (!c["tools"].is_null())
        options.tools_json = c["tools"].dump();
      options.kwargs_json = c["kwargs"].dump();
      const auto ours = it->second.render_json(c["messages"].dump(), options);
      Counts& n = counts[name];
      ++n.renders;
      const bool ref_ok = ref["ok"].get<bool>();
      std::string problem;
      if (ours && ref_ok && *ours != ref["output"].get<std::string>()) {
        problem = first_difference(*ours, ref["output"].get<std::string>());
      } else if (ours.has_value() != ref_ok) {
        problem = ours ? "reference raised: " + ref["error"].get<std::string>()
                       : "we raised: " + ours.error().what();
      } else if (!ours) {
        ++n.errors_both;
      }
      if (problem.empty())
        continue;
      ++n.differences;
      if (failures.is_open())
        failures << Json{{"case", i}, {"template", name}, {"problem", problem}, {"input", c}}.dump()
                 << '\n';
      if (shown++ < 5)
        fmt::print("  case {} ({}): {}\n", i, name, problem);
    }
    std::size_t renders = 0;
    std::size_t differences = 0;
    for (const auto& [name, n] : counts) {
      fmt::print("  {:<26} {:>5} renders, {:>3} raised on both sides, {} differences\n", name,
                 n.renders, n.errors_both, n.differences);
      renders += n.renders;
      differences += n.differences;
    }
    fmt::print("chat templates: compared {} renders across {} templates, {} differences\n", renders,
               counts.size(), differences);
    return differences == 0 && renders > 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "chat templates: {}\n", e.what());
    return 2;
  }
}
