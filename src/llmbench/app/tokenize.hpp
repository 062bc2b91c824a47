#pragma once
/// @file
/// `llmbench tokenize` and `llmbench tokdiff`. Tokenize: text encoded with an exact tokenizer.json
/// tokenizer (llmbench::tokenizer; the name is resolved by tokenizer/resolve.hpp), optionally
/// rendered first as chat messages with the tokenizer's chat template (docs/chat-templates.md).
/// Plain mode encodes a whole input as one text and writes "ids: [...]", "tokens: [...]" and
/// "count: N" lines; JSONL mode reads one JSON object per line with a string field "text" and
/// writes {"ids": [...], "tokens": [...], "count": N} per line, in input order (blank lines are
/// skipped). With `chat`, the input is a JSON array of messages or an object {"messages": [...],
/// "tools": [...]}, the output shows the rendered "prompt" before its ids, and the prompt is
/// encoded without special tokens unless asked (the template holds them), as transformers'
/// `apply_chat_template(tokenize=True)` does.

#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/resolve.hpp"
#include "llmbench/tokenizer/tokdiff.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::app {

/// What `llmbench tokenize` is asked to do.
struct TokenizeRequest {
  std::string tokenizer{};  ///< path, folder or bundled name (`tokenizer::load_tokenizer`)
  bool add_special_tokens = false;
  bool jsonl = false;
  bool chat = false;
  std::string chat_template{};         ///< a template file ("" = the tokenizer's)
  std::string chat_template_kwargs{};  ///< extra template variables, a JSON object
  bool no_generation_prompt = false;   ///< render with add_generation_prompt=false
  std::vector<std::string> files{};    ///< inputs ("" or none = stdin)
};

/// A loaded tokenizer (and chat template) that turns inputs into the command's output text.
class Tokenize {
 public:
  /// Loads the tokenizer and, with `chat`, its template; throws `Exception` naming
  /// "--tokenizer", "--chat-template" or "--chat" when one cannot be loaded.
  explicit Tokenize(const TokenizeRequest& request);

  /// Encodes the input `text` named `name` (a file, or "<stdin>") and hands each piece of output
  /// to `emit`: one line a record in JSONL mode, else one block (headed "file: NAME" when
  /// `print_name`). Throws `Exception` naming `name` (and the line) for bad input.
  void encode(std::string_view text, const std::string& name, bool print_name,
              const std::function<void(std::string_view)>& emit);

 private:
  [[nodiscard]] tokenizer::Encoding encode_text(std::string_view text, const std::string& where);
  [[nodiscard]] std::string render(std::string_view input, const std::string& where) const;
  void encode_jsonl(std::string_view text, const std::string& name,
                    const std::function<void(std::string_view)>& emit);

  tokenizer::ResolvedTokenizer loaded_;
  tokenizer::EncodeOptions options_;
  tokenizer::Scratch scratch_;
  bool jsonl_ = false;
  std::optional<tokenizer::ChatTemplate> chat_;
  tokenizer::ChatRenderOptions chat_options_;
};

/// `llmbench tokdiff`: tokenizers `a` and `b` (files, folders or names, `resolve_tokenizer`;
/// each side is named as given) compared over the texts of the files or folders `corpus`
/// (`tokenizer::load_corpus` with `corpus_options`). Throws `Exception` with the error of the
/// tokenizer, corpus or text that failed.
tokenizer::TokdiffResult tokdiff(const std::string& a, const std::string& b,
                                 const std::vector<std::string>& corpus,
                                 const tokenizer::CorpusOptions& corpus_options,
                                 const tokenizer::TokdiffOptions& options);

/// The whole input: `file` through the one file reader (core/file.hpp), or stdin when `file`
/// is empty (read to its end). Throws `Exception` naming the file ("<stdin>") when it cannot be
/// read.
std::string read_tokenize_input(const std::string& file);

}  // namespace llmbench::app
