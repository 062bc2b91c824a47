#include "llmbench/tokenizer/decoder.hpp"

#include "llmbench/core/utf8.hpp"
#include "llmbench/tokenizer/unicode.hpp"

#include <oniguruma.h>

namespace llmbench::tokenizer::detail {
namespace {

// Value of a `<0xNN>` token (exactly six bytes, upper- or lower-case hex), or -1.
int byte_token(std::string_view t) {
  if (t.size() != 6 || t.substr(0, 3) != "<0x" || t[5] != '>') {
    return -1;
  }
  int v = 0;
  for (const char c : t.substr(3, 2)) {
    v <<= 4;
    if (c >= '0' && c <= '9') {
      v |= c - '0';
    } else if (c >= 'A' && c <= 'F') {
      v |= c - 'A' + 10;
    } else if (c >= 'a' && c <= 'f') {
      v |= c - 'a' + 10;
    } else {
      return -1;
    }
  }
  return v;
}

void byte_fallback(std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  out.reserve(tokens.size());
  std::string bytes;
  std::size_t count = 0;
  auto flush = [&] {
    if (count == 0) {
      return;
    }
    if (utf8_valid(bytes)) {
      out.push_back(bytes);
    } else {
      std::string bad;
      for (std::size_t k = 0; k < count; ++k) {
        bad.append("\xEF\xBF\xBD");
      }
      out.push_back(std::move(bad));
    }
    bytes.clear();
    count = 0;
  };
  for (auto& t : tokens) {
    const int b = byte_token(t);
    if (b >= 0) {
      bytes.push_back(static_cast<char>(b));
      ++count;
    } else {
      flush();
      out.push_back(std::move(t));
    }
  }
  flush();
  tokens.swap(out);
}

void replace_in(std::string& t, const DecodeStep& step, PreScratch& s) {
  s.found.clear();
  if (step.kind == DecodeStep::Kind::kReplace) {
    if (step.pattern.empty()) {
      return;
    }
    for (std::size_t pos = 0; (pos = t.find(step.pattern, pos)) != std::string::npos;
         pos += step.pattern.size()) {
      s.found.push_back(
          {static_cast<std::uint32_t>(pos), static_cast<std::uint32_t>(pos + step.pattern.size())});
    }
  } else {
    if (s.region == nullptr) {
      s.region = onig_region_new();
    }
    step.regex->find_all(t, s.region, s.found);
  }
  if (s.found.empty()) {
    return;
  }
  std::string out;
  std::size_t at = 0;
  for (const Span m : s.found) {
    out.append(t, at, m.b - at);
    out.append(step.content);
    at = m.e;
  }
  out.append(t, at);
  t.swap(out);
}

void strip(std::string& t, const DecodeStep& step) {
  const std::string& c = step.pattern;
  std::size_t b = 0;
  for (std::size_t k = 0; k < step.start && t.compare(b, c.size(), c) == 0; ++k) {
    b += c.size();
  }
  std::size_t e = t.size();
  for (std::size_t k = 0;
       k < step.stop && e >= b + c.size() && t.compare(e - c.size(), c.size(), c) == 0; ++k) {
    e -= c.size();
  }
  t = t.substr(b, e - b);
}

}  // namespace

std::string decode_chain(const std::vector<DecodeStep>& steps, std::vector<std::string>& tokens,
                         PreScratch& scratch) {
  if (steps.empty()) {
    std::string out;
    for (std::size_t i = 0; i < tokens.size(); ++i) {
      if (i > 0) {
        out.push_back(' ');
      }
      out.append(tokens[i]);
    }
    return out;
  }
  for (const DecodeStep& step : steps) {
    switch (step.kind) {
      case DecodeStep::Kind::kByteLevel: {
        std::string bytes;
        std::string one;
        for (const auto& t : tokens) {
          if (byte_level_to_bytes(t, one)) {
            bytes.append(one);
          } else {
            bytes.append(t);
          }
        }
        tokens.assign(1, utf8_lossy(bytes));
        break;
      }
      case DecodeStep::Kind::kByteFallback:
        byte_fallback(tokens);
        break;
      case DecodeStep::Kind::kMetaspace:
        for (std::size_t i = 0; i < tokens.size(); ++i) {
          std::string& t = tokens[i];
          std::string out;
          std::size_t at = 0;
          if (i == 0 && step.strip_first && t.compare(0, step.pattern.size(), step.pattern) == 0) {
            at = step.pattern.size();
          }
          for (std::size_t pos; (pos = t.find(step.pattern, at)) != std::string::npos;
               at = pos + step.pattern.size()) {
            out.append(t, at, pos - at);
            out.push_back(' ');
          }
          out.append(t, at);
          t.swap(out);
        }
        break;
      case DecodeStep::Kind::kFuse: {
        std::string all;
        for (const auto& t : tokens) {
          all.append(t);
        }
        tokens.assign(1, std::move(all));
        break;
      }
      case DecodeStep::Kind::kStrip:
        for (auto& t : tokens) {
          strip(t, step);
        }
        break;
      case DecodeStep::Kind::kReplace:
      case DecodeStep::Kind::kReplaceRegex:
        for (auto& t : tokens) {
          replace_in(t, step, scratch);
        }
        break;
    }
  }
  std::string out;
  for (const auto& t : tokens) {
    out.append(t);
  }
  return out;
}

}  // namespace llmbench::tokenizer::detail
