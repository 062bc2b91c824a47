// Named prompt sets read from `--dataset-path` (docs/workloads.md, "Named prompt sets"; the files
// and their sources are listed in ../shared/data/SOURCES.md):
//  - belle: BELLE eval_set.json (JSONL: `question`, `std_answer`) or zh_seed_tasks.json (JSONL:
//    `instruction`, `instances[0].input`), github.com/LianjiaTech/BELLE;
//  - cmmlu: CMMLU test CSVs (`,Question,A,B,C,D,Answer`), a file or a folder of them,
//    github.com/haonan-li/CMMLU;
//  - arena-hard: Arena-Hard `question.jsonl` (`prompt`, or `turns[0].content` in v0.1's older
//    layout), github.com/lmarena/arena-hard-auto;
//  - alpaca-eval: an AlpacaEval model-outputs JSON array (`instruction`, `output`),
//    github.com/tatsu-lab/alpaca_eval;
//  - humaneval: HumanEval.jsonl (`prompt`, `canonical_solution`), github.com/openai/human-eval;
//  - long-document: a text file or folder of .txt, cut to `--long-doc-input-len` tokens.
// Output lengths: `--output-len` when given, else the estimated tokens of the set's own answer
// (std_answer, output, canonical_solution), else 256. A malformed entry is an error naming the
// file and its line.

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/rng.hpp"
#include "llmbench/workload/detail/jsonl.hpp"
#include "llmbench/workload/detail/loaders.hpp"
#include "llmbench/workload/detail/prompt_text.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace llmbench::workload::detail {
namespace {

using nlohmann::json;

/// A string field of a JSONL line, or a failure naming the file and line.
std::string string_field(const json& v, const char* key, const std::string& path,
                         std::int64_t line) {
  const auto it = v.find(key);
  if (it == v.end() || !it->is_string() || is_blank(it->get_ref<const std::string&>())) {
    fail_line(path, line, fmt::format("\"{}\" must be a non-empty string", key), -1);
  }
  return it->get<std::string>();
}

/// The optional string `key` of `v` ("" when absent or not a string).
std::string optional_string(const json& v, const char* key) {
  const auto it = v.find(key);
  return it != v.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Sample make(std::string prompt, std::string_view answer, std::int64_t output_len,
            std::string source_id) {
  Sample s;
  s.prompt_len = estimate_text_tokens(prompt);
  s.prompt = std::move(prompt);
  s.output_len = choose_output_len(output_len, answer.empty() ? -1 : estimate_text_tokens(answer));
  s.source_id = std::move(source_id);
  return s;
}

std::vector<Sample> parse_belle(std::string_view text, const std::string& path,
                                std::int64_t output_len) {
  std::vector<Sample> out;
  for_each_jsonl(text, path, [&](const JsonlLine& l) {
    if (l.value.contains("question")) {
      out.push_back(make(string_field(l.value, "question", path, l.number),
                         optional_string(l.value, "std_answer"), output_len,
                         fmt::format("belle:{}", l.number)));
      return;
    }
    // zh_seed_tasks: an instruction and its first instance's input.
    std::string prompt = string_field(l.value, "instruction", path, l.number);
    std::string answer;
    if (const auto inst = l.value.find("instances"); inst != l.value.end()) {
      if (!inst->is_array() || (!inst->empty() && !inst->front().is_object())) {
        fail_line(path, l.number, "\"instances\" must be an array of objects", l.offset);
      }
      if (!inst->empty()) {
        const std::string input = optional_string(inst->front(), "input");
        prompt += input.empty() ? "" : "\n" + input;
        answer = optional_string(inst->front(), "output");
      }
    }
    out.push_back(make(std::move(prompt), answer, output_len, fmt::format("belle:{}", l.number)));
  });
  return out;
}

std::vector<Sample> parse_arena_hard(std::string_view text, const std::string& path,
                                     std::int64_t output_len) {
  std::vector<Sample> out;
  for_each_jsonl(text, path, [&](const JsonlLine& l) {
    std::string prompt;
    if (const auto turns = l.value.find("turns"); turns != l.value.end()) {
      if (!turns->is_array() || turns->empty() || !turns->front().is_object()) {
        fail_line(path, l.number, "\"turns\" must be a non-empty array of objects", l.offset);
      }
      prompt = string_field(turns->front(), "content", path, l.number);
    } else {
      prompt = string_field(l.value, "prompt", path, l.number);
    }
    out.push_back(make(std::move(prompt), "", output_len,
                       fmt::format("arena-hard:{}", optional_string(l.value, "uid"))));
  });
  return out;
}

std::vector<Sample> parse_humaneval(std::string_view text, const std::string& path,
                                    std::int64_t output_len) {
  std::vector<Sample> out;
  for_each_jsonl(text, path, [&](const JsonlLine& l) {
    out.push_back(make(string_field(l.value, "prompt", path, l.number),
                       optional_string(l.value, "canonical_solution"), output_len,
                       optional_string(l.value, "task_id")));
  });
  return out;
}

/// Byte offsets of the elements of a top-level JSON array (strings skipped, depth counted), so
/// an error in element i can name its line.
std::vector<std::size_t> element_offsets(std::string_view text) {
  std::vector<std::size_t> out;
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
      if (depth == 1) {
        out.push_back(i);
      }
    } else if (c == '{' || c == '[') {
      if (depth == 1) {
        out.push_back(i);
      }
      ++depth;
    } else if (c == '}' || c == ']') {
      --depth;
    }
  }
  return out;
}

std::vector<Sample> parse_alpaca_eval(std::string_view text, const std::string& path,
                                      std::int64_t output_len) {
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::parse_error& e) {
    fail_line(path, line_of(text, e.byte > 0 ? e.byte - 1 : 0),
              "not valid JSON: " + clean_parse_message(e), static_cast<std::int64_t>(e.byte));
  }
  if (!doc.is_array()) {
    fail(path, "expected a JSON array of {\"instruction\", \"output\"} objects", 0);
  }
  const auto offsets = element_offsets(text);
  std::vector<Sample> out;
  for (std::size_t i = 0; i < doc.size(); ++i) {
    const std::int64_t line = i < offsets.size() ? line_of(text, offsets[i]) : 0;
    if (!doc[i].is_object()) {
      fail_line(path, line, fmt::format("entry {} is not an object", i), -1);
    }
    out.push_back(make(string_field(doc[i], "instruction", path, line),
                       optional_string(doc[i], "output"), output_len,
                       fmt::format("alpaca-eval:{}", i)));
  }
  return out;
}

/// One CSV record's fields (RFC 4180: quoted fields may hold commas, "" and newlines), starting
/// at `pos`; `pos` and `line` move past it. False at the end of the text.
bool csv_record(std::string_view text, std::size_t& pos, std::int64_t& line,
                std::vector<std::string>& fields, const std::string& path) {
  fields.clear();
  if (pos >= text.size()) {
    return false;
  }
  const std::int64_t start_line = line;
  std::string field;
  bool quoted = false;
  while (pos < text.size()) {
    const char c = text[pos++];
    if (quoted) {
      if (c == '"' && pos < text.size() && text[pos] == '"') {
        field += '"';
        ++pos;
      } else if (c == '"') {
        quoted = false;
      } else {
        line += c == '\n' ? 1 : 0;
        field += c;
      }
    } else if (c == '"' && field.empty()) {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else if (c == '\n') {
      ++line;
      break;
    } else if (c != '\r') {
      field += c;
    }
  }
  if (quoted) {
    fail_line(path, start_line, "a quoted field is not closed", -1);
  }
  fields.push_back(std::move(field));
  return true;
}

std::vector<Sample> parse_cmmlu(std::string_view text, const std::string& path,
                                std::int64_t output_len) {
  std::vector<Sample> out;
  std::size_t pos = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  std::int64_t line = 1;
  std::vector<std::string> fields;
  std::vector<std::string> header;
  std::int64_t at = line;
  while (csv_record(text, pos, line, fields, path)) {
    if (fields.size() == 1 && is_blank(fields[0])) {
      at = line;
      continue;
    }
    if (header.empty()) {
      header = fields;
      const std::vector<std::string> want = {"Question", "A", "B", "C", "D", "Answer"};
      if (header.size() != 7 || !std::equal(want.begin(), want.end(), header.begin() + 1)) {
        fail_line(path, at, "expected the CMMLU header \",Question,A,B,C,D,Answer\"", -1);
      }
    } else if (fields.size() != header.size()) {
      fail_line(path, at, fmt::format("{} fields, the header has 7", fields.size()), -1);
    } else if (is_blank(fields[1])) {
      fail_line(path, at, "empty Question", -1);
    } else {
      out.push_back(make(fmt::format("{}\nA. {}\nB. {}\nC. {}\nD. {}\n答案：", fields[1], fields[2],
                                     fields[3], fields[4], fields[5]),
                         "", output_len, fmt::format("cmmlu:{}:{}", path, at)));
    }
    at = line;
  }
  return out;
}

/// The files of `path` ending in `ext` (a folder's, in name order), or `{path}`.
std::vector<std::string> files_with(const std::string& path, std::string_view ext) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return {path};
  }
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (e.is_regular_file() && e.path().extension() == ext) {
      out.push_back(e.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  if (out.empty()) {
    fail(path, fmt::format("folder has no {} file", ext));
  }
  return out;
}

}  // namespace

std::vector<Sample> load_named_set(DatasetKind kind, const std::string& path,
                                   std::int64_t output_len, std::uint64_t max_file_bytes) {
  if (path.ends_with(".zst") || path.ends_with(".gz")) {
    fail(path, "is compressed: unpack it first (zstd -d / gunzip, or ../shared/data/unpack.sh)");
  }
  std::vector<Sample> out;
  const auto files =
      kind == DatasetKind::Cmmlu ? files_with(path, ".csv") : std::vector<std::string>{path};
  for (const auto& file : files) {
    const std::string text = read_file(file, max_file_bytes).value();
    std::vector<Sample> part;
    switch (kind) {
      case DatasetKind::Belle:
        part = parse_belle(text, file, output_len);
        break;
      case DatasetKind::Cmmlu:
        part = parse_cmmlu(text, file, output_len);
        break;
      case DatasetKind::ArenaHard:
        part = parse_arena_hard(text, file, output_len);
        break;
      case DatasetKind::AlpacaEval:
        part = parse_alpaca_eval(text, file, output_len);
        break;
      default:
        part = parse_humaneval(text, file, output_len);
        break;
    }
    std::move(part.begin(), part.end(), std::back_inserter(out));
  }
  return out;
}

std::vector<Sample> make_long_document_samples(const DatasetOptions& options,
                                               const std::string& path) {
  if (options.long_doc_input_len <= 0) {
    throw Exception(Error{"must be a positive number of tokens", "--long-doc-input-len", -1});
  }
  PromptText text(options, path, options.long_doc_input_len);
  Rng rng(options.seed, "long-document");
  const std::int64_t own =
      std::max<std::int64_t>(1, options.long_doc_input_len - text.special_tokens());
  std::vector<Sample> out;
  for (std::int64_t i = 0; i < options.num_prompts; ++i) {
    Sample s;
    s.source_id = fmt::format("long-document:{}", i);
    s.prompt = text.cut(own, rng, s.source_id);
    s.prompt_len = text.exact() ? own + text.special_tokens() : options.long_doc_input_len;
    s.prompt_len_exact = text.exact();
    s.output_len = choose_output_len(options.output_len, -1);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace llmbench::workload::detail
