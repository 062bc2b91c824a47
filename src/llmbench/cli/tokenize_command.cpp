/// @file
/// `llmbench tokenize --tokenizer PATH|NAME [--add-special-tokens] [--jsonl] [FILES...]`: encodes
/// text with an exact tokenizer.json tokenizer (llmbench::tokenizer; the argument is resolved by
/// resolve.hpp, e.g. `--tokenizer deepseek-v3` under $LLMBENCH_DATA/tokenizers) and prints ids,
/// tokens and the count. Plain mode encodes each file (or stdin) as one text. `--jsonl` reads one
/// JSON object per line with a string field "text" and writes {"ids": [...], "tokens": [...],
/// "count": N} per line, in input order (blank lines are skipped). `--chat` renders chat
/// messages with the tokenizer's chat template first (docs/chat-templates.md): the input is a
/// JSON array of messages or an object {"messages": [...], "tools": [...]} (per file, or per
/// line with --jsonl), the output shows the rendered "prompt" before its ids, and the prompt is
/// encoded without special tokens (the template holds them), as transformers'
/// `apply_chat_template(tokenize=True)` does.

#include "llmbench/app/tokenize.hpp"
#include "llmbench/cli/commands.hpp"
#include "llmbench/core/error.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace llmbench::cli {

Command add_tokenize_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "tokenize", "Encode text with a Hugging Face tokenizer.json (exact, byte-level BPE)");
  auto opts = std::make_shared<app::TokenizeRequest>();
  sub->add_option("--tokenizer", opts->tokenizer,
                  "tokenizer.json, a folder holding it (+ tokenizer_config.json), or a name "
                  "under $LLMBENCH_DATA/tokenizers or the bundled data (e.g. deepseek-v3)")
      ->required();
  sub->add_flag("--add-special-tokens", opts->add_special_tokens,
                "Add the post-processor's tokens (e.g. BOS for DeepSeek-V3, as transformers)");
  sub->add_flag("--jsonl", opts->jsonl,
                "Input lines are {\"text\": ...}; output one {\"ids\",\"tokens\",\"count\"} "
                "object per line");
  sub->add_flag("--chat", opts->chat,
                "Input is chat messages (a JSON array, or {\"messages\", \"tools\"}): render them "
                "with the tokenizer's chat template and show the prompt before its tokens");
  sub->add_option("--chat-template", opts->chat_template,
                  "With --chat: a Jinja file or tokenizer_config.json to render with instead of "
                  "the tokenizer's own template");
  sub->add_option(
      "--chat-template-kwargs", opts->chat_template_kwargs,
      "With --chat: extra template variables as a JSON object, e.g. "
      "'{\"thinking\": true}' (DeepSeek-V3.1) or '{\"enable_thinking\": false}' (Qwen3)");
  sub->add_flag("--no-generation-prompt", opts->no_generation_prompt,
                "With --chat: render with add_generation_prompt=false");
  sub->add_option("files", opts->files, "Input files (default: stdin)");
  return [opts] {
    if (!opts->chat && (!opts->chat_template.empty() || !opts->chat_template_kwargs.empty() ||
                        opts->no_generation_prompt)) {
      throw Exception(Error{"needs --chat", "--chat-template", -1});
    }
    app::Tokenize tokenize(*opts);
    const auto write = [](std::string_view out) { std::fwrite(out.data(), 1, out.size(), stdout); };
    auto run_one = [&](const std::string& file) {
      const std::string text = app::read_tokenize_input(file);
      tokenize.encode(text, file.empty() ? "<stdin>" : file, opts->files.size() > 1, write);
    };
    if (opts->files.empty()) {
      run_one("");
    }
    for (const auto& file : opts->files) {
      run_one(file);
    }
    std::fflush(stdout);
    return 0;
  };
}

}  // namespace llmbench::cli
