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

#include "llmbench/cli/commands.hpp"
#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/text.hpp"
#include "llmbench/tokenizer/chat_template.hpp"
#include "llmbench/tokenizer/resolve.hpp"
#include "llmbench/tokenizer/tokenizer.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench::cli {
namespace {

struct TokenizeOptions {
  std::string tokenizer;
  bool add_special_tokens = false;
  bool jsonl = false;
  bool chat = false;
  std::string chat_template;         ///< --chat-template FILE ("" = the tokenizer's)
  std::string chat_template_kwargs;  ///< --chat-template-kwargs JSON object
  bool no_generation_prompt = false;
  std::vector<std::string> files;
};

/// `--chat`: the template and how to render with it.
struct ChatInput {
  const tokenizer::ChatTemplate* tmpl = nullptr;
  tokenizer::ChatRenderOptions options;
};

/// Renders one chat input (`json`: an array of messages, or {"messages", "tools"}); throws
/// `Exception` naming `where`.
std::string render_chat(const ChatInput& chat, const nlohmann::json& json,
                        const std::string& where) {
  const nlohmann::json* messages = &json;
  tokenizer::ChatRenderOptions options = chat.options;
  if (json.is_object()) {
    const auto it = json.find("messages");
    if (it == json.end())
      throw Exception(Error{"missing field \"messages\"", where, -1});
    messages = &*it;
    if (const auto tools = json.find("tools"); tools != json.end())
      options.tools_json = tools->dump();
  }
  auto prompt = chat.tmpl->render_json(messages->dump(), options);
  if (!prompt) {
    Error e = prompt.error();
    e.message = e.what();
    e.source = where;
    throw Exception(e);
  }
  return std::move(*prompt);
}

// Appends `ids` as a JSON array of numbers.
void append_ids(std::string& out, const std::vector<tokenizer::TokenId>& ids) {
  out.push_back('[');
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) {
      out.push_back(',');
    }
    out += std::to_string(ids[i]);
  }
  out.push_back(']');
}

tokenizer::Encoding encode_or_throw(const tokenizer::Tokenizer& tok, std::string_view text,
                                    const tokenizer::EncodeOptions& options,
                                    tokenizer::Scratch& scratch, const std::string& where) {
  auto enc = tok.encode(text, options, scratch);
  if (!enc) {
    Error e = enc.error();
    e.source = where;
    throw Exception(e);
  }
  return std::move(*enc);
}

/// The whole input: `file` through the one file reader (core/file.hpp), or stdin when `file`
/// is empty (read to its end: a pipe, a terminal or a redirected file). Throws `Exception`
/// naming the file ("<stdin>") when it cannot be read.
std::string read_input(const std::string& file) {
  auto text = read_file(file.empty() ? std::string("/dev/stdin") : file);
  if (!text) {
    Error e = text.error();
    e.source = file.empty() ? "<stdin>" : file;
    throw Exception(e);
  }
  return std::move(*text);
}

void run_jsonl(const tokenizer::Tokenizer& tok, std::string_view text, const std::string& name,
               const tokenizer::EncodeOptions& options, tokenizer::Scratch& scratch,
               const ChatInput& chat) {
  std::string out;
  std::size_t line_no = 0;
  while (!text.empty()) {
    const std::size_t end = std::min(text.find('\n'), text.size());
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    ++line_no;
    if (is_blank(line)) {
      continue;
    }
    const std::string where = fmt::format("{}:{}", name, line_no);
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !(j.is_object() || (chat.tmpl != nullptr && j.is_array()))) {
      throw Exception(Error{"not a JSON object (or invalid UTF-8 / lone surrogate)", where, -1});
    }
    std::string prompt;
    if (chat.tmpl != nullptr) {
      prompt = render_chat(chat, j, where);
    } else {
      const auto it = j.find("text");
      if (it == j.end() || !it->is_string()) {
        throw Exception(Error{"missing string field \"text\"", where, -1});
      }
      prompt = it->get<std::string>();
    }
    const auto enc = encode_or_throw(tok, prompt, options, scratch,
                                     where + (chat.tmpl != nullptr ? " prompt" : " field text"));
    out.clear();
    out += "{";
    if (chat.tmpl != nullptr) {
      out += "\"prompt\":" + nlohmann::json(prompt).dump() + ",";
    }
    out += "\"ids\":";
    append_ids(out, enc.ids);
    out += ",\"tokens\":";
    out += nlohmann::json(enc.tokens).dump();
    out += fmt::format(",\"count\":{}}}\n", enc.ids.size());
    std::fwrite(out.data(), 1, out.size(), stdout);
  }
}

void run_plain(const tokenizer::Tokenizer& tok, std::string_view text, const std::string& name,
               const tokenizer::EncodeOptions& options, tokenizer::Scratch& scratch,
               bool print_name, const ChatInput& chat) {
  std::string prompt;
  if (chat.tmpl != nullptr) {
    const auto j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !(j.is_object() || j.is_array())) {
      throw Exception(
          Error{"--chat input must be a JSON array of messages or an object with "
                "\"messages\"",
                name, -1});
    }
    prompt = render_chat(chat, j, name);
    text = prompt;
  }
  const auto enc = encode_or_throw(tok, text, options, scratch, name);
  std::string out;
  if (print_name) {
    out += fmt::format("file: {}\n", name);
  }
  if (chat.tmpl != nullptr) {
    out += "prompt: " + nlohmann::json(prompt).dump() + "\n";
  }
  out += "ids: ";
  append_ids(out, enc.ids);
  out += "\ntokens: ";
  out += nlohmann::json(enc.tokens).dump();
  out += fmt::format("\ncount: {}\n", enc.ids.size());
  std::fwrite(out.data(), 1, out.size(), stdout);
}

/// The template `--chat` renders with: `--chat-template FILE`, else the tokenizer's. Throws
/// `Exception` when there is none or it does not parse.
tokenizer::ChatTemplate load_chat(const TokenizeOptions& opts, const std::filesystem::path& tok) {
  if (!opts.chat_template.empty()) {
    auto t = tokenizer::load_chat_template_file(opts.chat_template);
    if (!t)
      throw Exception(Error{t.error().what(), "--chat-template", -1});
    return std::move(*t);
  }
  auto t = tokenizer::load_chat_template(tok);
  if (!t)
    throw Exception(Error{t.error().what(), "--tokenizer", -1});
  if (!t->has_value()) {
    throw Exception(
        Error{"the tokenizer has no chat template (no chat_template in "
              "tokenizer_config.json, no chat_template.jinja); give --chat-template",
              "--chat", -1});
  }
  return std::move(**t);
}

}  // namespace

Command add_tokenize_command(CLI::App& app) {
  auto* sub = app.add_subcommand(
      "tokenize", "Encode text with a Hugging Face tokenizer.json (exact, byte-level BPE)");
  auto opts = std::make_shared<TokenizeOptions>();
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
    auto loaded = tokenizer::load_tokenizer(opts->tokenizer);
    if (!loaded) {
      throw Exception(Error{loaded.error().what(), "--tokenizer", -1});
    }
    const tokenizer::Tokenizer& tok = loaded->tokenizer;
    tokenizer::EncodeOptions options;
    options.add_special_tokens = opts->add_special_tokens;
    options.want_tokens = true;
    tokenizer::Scratch scratch;
    std::optional<tokenizer::ChatTemplate> chat_template;
    ChatInput chat;
    if (opts->chat) {
      chat_template = load_chat(*opts, loaded->path);
      chat.tmpl = &*chat_template;
      chat.options.add_generation_prompt = !opts->no_generation_prompt;
      chat.options.kwargs_json = opts->chat_template_kwargs;
    } else if (!opts->chat_template.empty() || !opts->chat_template_kwargs.empty() ||
               opts->no_generation_prompt) {
      throw Exception(Error{"needs --chat", "--chat-template", -1});
    }
    auto run_one = [&](const std::string& file) {
      const std::string text = read_input(file);
      const std::string name = file.empty() ? "<stdin>" : file;
      if (opts->jsonl) {
        run_jsonl(tok, text, name, options, scratch, chat);
      } else {
        run_plain(tok, text, name, options, scratch, opts->files.size() > 1, chat);
      }
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
