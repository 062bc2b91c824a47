#include "llmbench/app/tokenize.hpp"

#include "llmbench/core/error.hpp"
#include "llmbench/core/file.hpp"
#include "llmbench/core/text.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <iterator>
#include <memory>
#include <utility>

namespace llmbench::app {

namespace {

tokenizer::ResolvedTokenizer load(const std::string& spec) {
  auto loaded = tokenizer::load_tokenizer(spec);
  if (!loaded)
    throw Exception(Error{loaded.error().what(), "--tokenizer", -1});
  return std::move(*loaded);
}

/// The template `chat` renders with: `request.chat_template`, else the tokenizer's. Throws
/// `Exception` when there is none or it does not parse.
tokenizer::ChatTemplate load_chat(const TokenizeRequest& request,
                                  const std::filesystem::path& tok) {
  if (!request.chat_template.empty()) {
    auto t = tokenizer::load_chat_template_file(request.chat_template);
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

// Resolves and loads one side of a tokdiff; the display name is the argument as given.
tokenizer::TokdiffSide load_side(const std::string& spec,
                                 std::vector<std::unique_ptr<tokenizer::Tokenizer>>& keep) {
  auto path = tokenizer::resolve_tokenizer(spec);
  if (!path) {
    throw Exception(path.error());
  }
  auto tok = tokenizer::Tokenizer::load(*path);
  if (!tok) {
    throw Exception(tok.error());
  }
  auto added = tokenizer::read_added_tokens(*path);
  if (!added) {
    throw Exception(added.error());
  }
  keep.push_back(std::make_unique<tokenizer::Tokenizer>(std::move(*tok)));
  tokenizer::TokdiffSide side;
  side.name = spec;
  side.path = path->string();
  side.tokenizer = keep.back().get();
  side.added_tokens = std::move(*added);
  return side;
}

}  // namespace

Tokenize::Tokenize(const TokenizeRequest& request)
    : loaded_(load(request.tokenizer)), jsonl_(request.jsonl) {
  options_.add_special_tokens = request.add_special_tokens;
  options_.want_tokens = true;
  if (request.chat) {
    chat_ = load_chat(request, loaded_.path);
    chat_options_.add_generation_prompt = !request.no_generation_prompt;
    chat_options_.kwargs_json = request.chat_template_kwargs;
  }
}

tokenizer::Encoding Tokenize::encode_text(std::string_view text, const std::string& where) {
  auto enc = loaded_.tokenizer.encode(text, options_, scratch_);
  if (!enc) {
    Error e = enc.error();
    e.source = where;
    throw Exception(e);
  }
  return std::move(*enc);
}

/// The prompt of one chat input (`input`: a JSON array of messages, or an object {"messages",
/// "tools"}); throws `Exception` naming `where`.
std::string Tokenize::render(std::string_view input, const std::string& where) const {
  const auto json = nlohmann::json::parse(input, nullptr, false);
  if (json.is_discarded() || !(json.is_object() || json.is_array())) {
    throw Exception(Error{jsonl_ ? "not a JSON object (or invalid UTF-8 / lone surrogate)"
                                 : "--chat input must be a JSON array of messages or an object "
                                   "with \"messages\"",
                          where, -1});
  }
  const nlohmann::json* messages = &json;
  tokenizer::ChatRenderOptions options = chat_options_;
  if (json.is_object()) {
    const auto it = json.find("messages");
    if (it == json.end())
      throw Exception(Error{"missing field \"messages\"", where, -1});
    messages = &*it;
    if (const auto tools = json.find("tools"); tools != json.end())
      options.tools_json = tools->dump();
  }
  auto prompt = chat_->render_json(messages->dump(), options);
  if (!prompt) {
    Error e = prompt.error();
    e.message = e.what();
    e.source = where;
    throw Exception(e);
  }
  return std::move(*prompt);
}

void Tokenize::encode_jsonl(std::string_view text, const std::string& name,
                            const std::function<void(std::string_view)>& emit) {
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
    std::string prompt;
    if (chat_) {
      prompt = render(line, where);
    } else {
      const auto j = nlohmann::json::parse(line, nullptr, false);
      if (j.is_discarded() || !j.is_object()) {
        throw Exception(Error{"not a JSON object (or invalid UTF-8 / lone surrogate)", where, -1});
      }
      const auto it = j.find("text");
      if (it == j.end() || !it->is_string()) {
        throw Exception(Error{"missing string field \"text\"", where, -1});
      }
      prompt = it->get<std::string>();
    }
    const auto enc = encode_text(prompt, where + (chat_ ? " prompt" : " field text"));
    out.clear();
    out += "{";
    if (chat_) {
      out += "\"prompt\":" + nlohmann::json(prompt).dump() + ",";
    }
    out += "\"ids\":";
    append_ids(out, enc.ids);
    out += ",\"tokens\":";
    out += nlohmann::json(enc.tokens).dump();
    out += fmt::format(",\"count\":{}}}\n", enc.ids.size());
    emit(out);
  }
}

void Tokenize::encode(std::string_view text, const std::string& name, bool print_name,
                      const std::function<void(std::string_view)>& emit) {
  if (jsonl_) {
    encode_jsonl(text, name, emit);
    return;
  }
  std::string prompt;
  if (chat_) {
    prompt = render(text, name);
    text = prompt;
  }
  const auto enc = encode_text(text, name);
  std::string out;
  if (print_name) {
    out += fmt::format("file: {}\n", name);
  }
  if (chat_) {
    out += "prompt: " + nlohmann::json(prompt).dump() + "\n";
  }
  out += "ids: ";
  append_ids(out, enc.ids);
  out += "\ntokens: ";
  out += nlohmann::json(enc.tokens).dump();
  out += fmt::format("\ncount: {}\n", enc.ids.size());
  emit(out);
}

tokenizer::TokdiffResult tokdiff(const std::string& a, const std::string& b,
                                 const std::vector<std::string>& corpus,
                                 const tokenizer::CorpusOptions& corpus_options,
                                 const tokenizer::TokdiffOptions& options) {
  std::vector<std::unique_ptr<tokenizer::Tokenizer>> keep;
  const tokenizer::TokdiffSide side_a = load_side(a, keep);
  const tokenizer::TokdiffSide side_b = load_side(b, keep);
  std::vector<tokenizer::CorpusText> texts;
  for (const auto& c : corpus) {
    auto more = tokenizer::load_corpus(c, corpus_options);
    if (!more) {
      throw Exception(more.error());
    }
    std::move(more->begin(), more->end(), std::back_inserter(texts));
  }
  auto result = tokenizer::tokdiff(side_a, side_b, texts, options);
  if (!result) {
    throw Exception(result.error());
  }
  return std::move(*result);
}

std::string read_tokenize_input(const std::string& file) {
  auto text = read_file(file.empty() ? std::string("/dev/stdin") : file);
  if (!text) {
    Error e = text.error();
    e.source = file.empty() ? "<stdin>" : file;
    throw Exception(e);
  }
  return std::move(*text);
}

}  // namespace llmbench::app
