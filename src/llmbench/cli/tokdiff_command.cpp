/// @file
/// `llmbench tokdiff A B [CORPUS...]`: compares two tokenizers (or two versions of one) over a
/// corpus (llmbench::tokenizer tokdiff.hpp) and prints an aligned text report; `--json PATH`
/// writes the full result ("-": stdout instead of the report). A and B are tokenizer files,
/// folders, or names under $LLMBENCH_DATA/tokenizers. Without a corpus only the added/special
/// token differences are reported. docs/tokdiff.md describes the output.

#include "llmbench/app/tokenize.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/cli/flag_parsing.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/tokenizer/tokdiff.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace llmbench::cli {
namespace {

struct TokdiffFlags {
  std::string a;
  std::string b;
  std::vector<std::string> corpus;
  std::string json_path;
  std::string split = "auto";
  std::size_t max_text_bytes = 65536;
  std::size_t max_texts = 0;
  std::size_t top = 10;
  std::size_t max_failures = 20;
  bool add_special_tokens = false;
};

}  // namespace

Command add_tokdiff_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "tokdiff",
      "Compare two tokenizers over a corpus: counts, inflation, boundary drift, added tokens");
  auto f = std::make_shared<TokdiffFlags>();
  sub->add_option("a", f->a,
                  "Tokenizer A: tokenizer JSON, folder, or name under "
                  "$LLMBENCH_DATA/tokenizers (e.g. deepseek-v3)")
      ->required();
  sub->add_option("b", f->b, "Tokenizer B (inflation is tokens B / tokens A)")->required();
  sub->add_option("corpus", f->corpus,
                  "Corpus files or folders: plain text (FLORES-style xxx_Xxxx files: one text a "
                  "line, label from the name; else texts split on blank lines) or .jsonl "
                  "{\"text\": ...}; a missing path is also tried under $LLMBENCH_DATA");
  sub->add_option("--json", f->json_path, "Write the full result as JSON to PATH ('-': stdout)");
  sub->add_option("--split", f->split, "Plain-text rule: auto, line, paragraph, file")
      ->capture_default_str();
  sub->add_option("--max-text-bytes", f->max_text_bytes,
                  "Cut longer texts at a character boundary (0: no cap)")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub->add_option("--max-texts", f->max_texts, "Use the first N texts of each file (0: all)")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub->add_option("--top", f->top, "Texts listed as top movers")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub->add_option("--max-failures", f->max_failures, "Round-trip failures listed in full")
      ->capture_default_str()
      ->check(non_negative_integer());
  sub->add_flag("--add-special-tokens", f->add_special_tokens,
                "Count post-processor tokens (BOS) too, as transformers does");
  return [f] {
    auto split = tokenizer::parse_split_mode(f->split);
    if (!split) {
      throw Exception(split.error());
    }
    tokenizer::CorpusOptions co;
    co.split = *split;
    co.max_text_bytes = f->max_text_bytes;
    co.max_texts_per_file = f->max_texts;
    tokenizer::TokdiffOptions options;
    options.add_special_tokens = f->add_special_tokens;
    options.top_n = f->top;
    options.max_failures = f->max_failures;
    const auto result = app::tokdiff(f->a, f->b, f->corpus, co, options);
    if (f->json_path == "-") {
      const std::string s = tokenizer::to_json(result).dump(2) + "\n";
      std::fwrite(s.data(), 1, s.size(), stdout);
      std::fflush(stdout);
      return 0;
    }
    if (!f->json_path.empty()) {
      std::ofstream out(f->json_path, std::ios::binary);
      out << tokenizer::to_json(result).dump(2) << '\n';
      if (!out) {
        throw Exception(Error{"cannot write file", f->json_path, -1});
      }
    }
    const std::string report = tokenizer::format_report(result);
    std::fwrite(report.data(), 1, report.size(), stdout);
    std::fflush(stdout);
    return 0;
  };
}

}  // namespace llmbench::cli
