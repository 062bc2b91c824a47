#include "llmbench/tokenizer/normalize.hpp"

#include "llmbench/core/utf8.hpp"

#include <oniguruma.h>

namespace llmbench::tokenizer::detail {
namespace {

void replace_all(std::string_view text, const std::vector<Span>& matches, std::string_view content,
                 std::string& out) {
  std::size_t at = 0;
  for (const Span m : matches) {
    out.append(text.substr(at, m.b - at));
    out.append(content);
    at = m.e;
  }
  out.append(text.substr(at));
}

void apply_one(const NormStep& step, std::string_view text, std::string& out, PreScratch& s) {
  out.clear();
  switch (step.kind) {
    case NormStep::Kind::kForm:
      out = normalize(text, step.form);
      return;
    case NormStep::Kind::kLowercase:
      out.reserve(text.size());
      for (std::size_t i = 0; i < text.size();) {
        std::size_t len = 0;
        append_lowercase(out, decode_utf8(text, i, len));
        i += len;
      }
      return;
    case NormStep::Kind::kReplaceString: {
      s.found.clear();
      if (!step.pattern.empty()) {
        for (std::size_t pos = 0; (pos = text.find(step.pattern, pos)) != std::string_view::npos;
             pos += step.pattern.size()) {
          s.found.push_back({static_cast<std::uint32_t>(pos),
                             static_cast<std::uint32_t>(pos + step.pattern.size())});
        }
      }
      replace_all(text, s.found, step.content, out);
      return;
    }
    case NormStep::Kind::kReplaceRegex:
      s.found.clear();
      if (s.region == nullptr) {
        s.region = onig_region_new();
      }
      step.regex->find_all(text, s.region, s.found);
      replace_all(text, s.found, step.content, out);
      return;
    case NormStep::Kind::kPrepend:
      if (!text.empty()) {
        out.append(step.content);
      }
      out.append(text);
      return;
    case NormStep::Kind::kStrip: {
      std::size_t b = 0;
      std::size_t e = text.size();
      std::size_t len = 0;
      while (step.left && b < e && is_white_space(decode_utf8(text, b, len))) {
        b += len;
      }
      while (step.right && e > b) {
        const std::size_t k = std::max(b, utf8_floor(text, e - 1));
        if (!is_white_space(decode_utf8(text, k, len))) {
          break;
        }
        e = k;
      }
      out.append(text.substr(b, e - b));
      return;
    }
  }
}

}  // namespace

void apply_normalizers(const std::vector<NormStep>& steps, std::string_view text, std::string& out,
                       PreScratch& scratch) {
  out.assign(text);
  std::string tmp;
  for (const NormStep& step : steps) {
    apply_one(step, out, tmp, scratch);
    out.swap(tmp);
  }
}

}  // namespace llmbench::tokenizer::detail
