// Differential test driver: llmbench::tokenizer against HF tokenizers' outputs
// (tests/differential/README.md).
//
//   differential_driver [--failures OUT_JSONL] [--show N] [--allow-cat CAT]...
//                       --case NAME TOKENIZER_JSON STRINGS_JSONL REF_JSONL [--case ...]
//
// STRINGS_JSONL: {"text", "src", "cat"} per line (gen_strings.mjs). REF_JSONL: per string, in the
// same order, {"ids", "dec", "rt"?} from hf_reference.mjs; the driver waits for it to appear
// (run.sh writes it while the driver works on the previous tokenizer; REF_JSONL.failed means it
// never will). For every string and tokenizer it checks (1) encode(text, add_special_tokens=false)
// ids == HF ids, (2) decode(ids, false) == HF's decode, (3) decode(encode(text)) == rt (HF's
// normalizer applied to text; text itself when absent) unless HF's own decode differs from rt too.
// Prints per tokenizer the counts and the first N failures in detail, then "differential: compared
// N strings across K tokenizers, M mismatches". Failures of a category named by --allow-cat are
// reported but do not fail the run. Exit 0 when nothing else failed, 1 otherwise, 2 on bad input.

#include "llmbench/tokenizer/tokenizer.hpp"

#include <fmt/core.h>
#include <simdjson.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace tk = llmbench::tokenizer;

struct Sample {
  std::string text;
  std::string src;
  std::string cat;
};

struct Case {
  std::string name;
  std::string tokenizer;
  std::string strings;
  std::string ref;
};

struct Options {
  std::string failures;
  std::size_t show = 5;
  std::set<std::string> allowed_cats;
  std::vector<Case> cases;
};

[[noreturn]] void fail_input(const std::string& what) {
  throw std::runtime_error(what);
}

Options parse_args(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        fail_input("missing value after " + a);
      }
      return argv[++i];
    };
    if (a == "--failures") {
      o.failures = next();
    } else if (a == "--show") {
      o.show = std::stoul(next());
    } else if (a == "--allow-cat") {
      o.allowed_cats.insert(next());
    } else if (a == "--case") {
      Case c;
      c.name = next();
      c.tokenizer = next();
      c.strings = next();
      c.ref = next();
      o.cases.push_back(std::move(c));
    } else {
      fail_input("unknown argument " + a);
    }
  }
  if (o.cases.empty()) {
    fail_input("usage: differential_driver --case NAME TOKENIZER STRINGS REF [--case ...]");
  }
  return o;
}

// Reads a JSONL file line by line, handing each parsed object to `fn(line_no, element)`.
template <typename Fn>
void for_each_json_line(const std::string& path, Fn&& fn) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    fail_input("cannot open " + path);
  }
  simdjson::dom::parser parser;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) {
      continue;
    }
    simdjson::dom::element e;
    if (parser.parse(line).get(e) != simdjson::SUCCESS || !e.is_object()) {
      fail_input(fmt::format("{}:{}: not a JSON object", path, line_no));
    }
    fn(line_no, e);
  }
}

std::string get_string(simdjson::dom::element e, const char* key, const std::string& where) {
  std::string_view v;
  if (e[key].get_string().get(v) != simdjson::SUCCESS) {
    fail_input(where + ": missing string field \"" + key + "\"");
  }
  return std::string(v);
}

// Printable form of UTF-8 text: printable ASCII as is, common escapes, every other code point as
// \u{XXXX} (so invisible and look-alike characters are unambiguous).
std::string escape(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t len = 1;
    char32_t cp = b;
    if (b >= 0xF0 && i + 3 < s.size()) {
      len = 4;
      cp = ((b & 0x07U) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3FU) << 12) |
           ((static_cast<unsigned char>(s[i + 2]) & 0x3FU) << 6) |
           (static_cast<unsigned char>(s[i + 3]) & 0x3FU);
    } else if (b >= 0xE0 && i + 2 < s.size()) {
      len = 3;
      cp = ((b & 0x0FU) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3FU) << 6) |
           (static_cast<unsigned char>(s[i + 2]) & 0x3FU);
    } else if (b >= 0xC0 && i + 1 < s.size()) {
      len = 2;
      cp = ((b & 0x1FU) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3FU);
    }
    if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp == '\\') {
      out += "\\\\";
    } else if (cp == '"') {
      out += "\\\"";
    } else if (cp >= 0x20 && cp < 0x7F) {
      out.push_back(static_cast<char>(cp));
    } else {
      out += fmt::format("\\u{{{:04X}}}", static_cast<std::uint32_t>(cp));
    }
    i += len;
  }
  return out;
}

// Byte index <= i that starts a UTF-8 sequence.
std::size_t utf8_floor(std::string_view s, std::size_t i) {
  i = std::min(i, s.size());
  while (i > 0 && i < s.size() && (static_cast<unsigned char>(s[i]) & 0xC0U) == 0x80U) {
    --i;
  }
  return i;
}

std::string excerpt(std::string_view s, std::size_t at) {
  const std::size_t b = utf8_floor(s, at > 40 ? at - 40 : 0);
  const std::size_t e = utf8_floor(s, at + 60);
  return fmt::format("{}{}{}", b > 0 ? "..." : "", escape(s.substr(b, e - b)),
                     e < s.size() ? "..." : "");
}

std::string ids_window(const tk::Tokenizer& tok, const std::vector<tk::TokenId>& ids,
                       std::size_t from, std::size_t to) {
  std::string out = from > 0 ? "... " : "";
  for (std::size_t i = from; i < std::min(to, ids.size()); ++i) {
    out += fmt::format("{}:\"{}\" ", ids[i], escape(tok.id_to_token(ids[i])));
  }
  if (to < ids.size()) {
    out += "...";
  }
  return out;
}

std::string json_ids(const std::vector<tk::TokenId>& ids) {
  std::string out = "[";
  for (std::size_t i = 0; i < ids.size(); ++i) {
    out += (i > 0 ? "," : "") + std::to_string(ids[i]);
  }
  return out + "]";
}

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (u < 0x20) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

struct Totals {
  std::size_t compared = 0;
  std::size_t id_mismatches = 0;
  std::size_t decode_mismatches = 0;
  std::size_t roundtrip_failures = 0;
  std::size_t allowed = 0;   // failures in an --allow-cat category
  std::size_t hf_lossy = 0;  // HF's own decode(encode(x)) != x (then only decode == HF's counts)
};

// Waits until `path` exists (written elsewhere and renamed into place); fails when
// `path`.failed appears or after 15 minutes.
void wait_for(const std::string& path) {
  namespace fs = std::filesystem;
  for (int i = 0; i < 9000; ++i) {
    std::error_code ec;
    if (fs::exists(path, ec)) {
      return;
    }
    if (fs::exists(path + ".failed", ec)) {
      fail_input("the reference run for " + path + " failed (see its output above)");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  fail_input("timed out waiting for " + path);
}

Totals run_case(const Options& o, const Case& c, const std::vector<Sample>& samples,
                std::FILE* failures) {
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  auto loaded = tk::Tokenizer::load(c.tokenizer);
  if (!loaded) {
    fail_input(c.name + ": cannot load " + c.tokenizer + ": " + loaded.error().what());
  }
  const tk::Tokenizer& tok = *loaded;
  const double load_s = std::chrono::duration<double>(Clock::now() - t0).count();
  tk::Scratch scratch;
  tk::EncodeOptions opts;
  Totals t;
  std::size_t bytes = 0;
  std::size_t shown = 0;
  double encode_s = 0;
  std::size_t index = 0;
  wait_for(c.ref);
  for_each_json_line(c.ref, [&](std::size_t line_no, simdjson::dom::element e) {
    const std::string where = fmt::format("{}:{}", c.ref, line_no);
    if (index >= samples.size()) {
      fail_input(where + ": more reference lines than strings");
    }
    const Sample& s = samples[index++];
    std::vector<tk::TokenId> want;
    simdjson::dom::array arr;
    if (e["ids"].get_array().get(arr) != simdjson::SUCCESS) {
      fail_input(where + ": missing array \"ids\"");
    }
    for (auto v : arr) {
      want.push_back(static_cast<tk::TokenId>(v.get_uint64().value()));
    }
    const std::string want_dec = get_string(e, "dec", where);
    std::string_view rt;
    const bool has_rt = e["rt"].get_string().get(rt) == simdjson::SUCCESS;
    const std::string want_rt = has_rt ? std::string(rt) : s.text;

    const auto te = Clock::now();
    auto enc = tok.encode(s.text, opts, scratch);
    encode_s += std::chrono::duration<double>(Clock::now() - te).count();
    ++t.compared;
    bytes += s.text.size();
    const bool allowed = o.allowed_cats.count(s.cat) > 0;
    std::string problem;
    std::vector<tk::TokenId> got;
    if (!enc) {
      problem = std::string("encode error: ") + enc.error().what();
    } else {
      got = enc->ids;
    }
    std::size_t diff = 0;
    while (diff < want.size() && diff < got.size() && want[diff] == got[diff]) {
      ++diff;
    }
    const bool id_bad = problem.empty() && (diff < want.size() || diff < got.size());
    std::string dec;
    if (problem.empty()) {
      auto d = tok.decode(got, false);
      if (!d) {
        problem = std::string("decode error: ") + d.error().what();
      } else {
        dec = std::move(*d);
      }
    }
    const bool dec_bad = problem.empty() && !id_bad && dec != want_dec;
    // Where HF's own decode(encode(x)) is not x (deepseek-llm's added tokens "ü", "ú", ... are
    // byte-level characters of single bytes, so they decode to U+FFFD), matching HF is the goal.
    const bool hf_lossy = want_dec != want_rt;
    t.hf_lossy += hf_lossy ? 1 : 0;
    const bool rt_bad = problem.empty() && !hf_lossy && dec != want_rt;
    if (problem.empty() && id_bad) {
      problem = "ids differ";
    } else if (dec_bad) {
      problem = "decode differs from HF decode";
    } else if (rt_bad) {
      problem = "decode(encode(x)) != x";
    }
    if (problem.empty()) {
      return;
    }
    if (allowed) {
      ++t.allowed;
    } else if (id_bad || !enc) {
      ++t.id_mismatches;
    } else if (dec_bad) {
      ++t.decode_mismatches;
    } else {
      ++t.roundtrip_failures;
    }
    if (failures != nullptr) {
      std::fprintf(
          failures, "%s\n",
          fmt::format("{{\"tokenizer\":{},\"problem\":{},\"src\":{},\"cat\":{},\"text\":{},"
                      "\"hf_ids\":{},\"llmbench_ids\":{},\"first_diff\":{},"
                      "\"hf_decode\":{},\"llmbench_decode\":{}}}",
                      json_string(c.name), json_string(problem), json_string(s.src),
                      json_string(s.cat), json_string(s.text), json_ids(want), json_ids(got), diff,
                      json_string(want_dec), json_string(dec))
              .c_str());
    }
    if (shown++ >= o.show) {
      return;
    }
    std::printf("%s",
                fmt::format("  FAIL {}{} #{} ({}, {}): {}\n", c.name,
                            allowed ? " [allowed category]" : "", index, s.cat, s.src, problem)
                    .c_str());
    if (id_bad) {
      // Byte position of the first differing token: the length of what HF's ids before it decode
      // to (with a normalizer, a position in the normalized text; offsets would give the segment).
      const auto head = tok.decode(std::span<const tk::TokenId>(want.data(), diff), false);
      const std::size_t at = head ? std::min(head->size(), s.text.size()) : 0;
      const std::size_t from = diff > 3 ? diff - 3 : 0;
      std::printf("%s", fmt::format("    text ({} bytes) near byte {}: \"{}\"\n"
                                    "    first differing token index {} (hf {} ids, llmbench {})\n"
                                    "    hf:       {}\n    llmbench: {}\n",
                                    s.text.size(), at, excerpt(s.text, at), diff, want.size(),
                                    got.size(), ids_window(tok, want, from, diff + 8),
                                    ids_window(tok, got, from, diff + 8))
                            .c_str());
    } else if (s.text.size() <= 300) {
      std::printf("%s",
                  fmt::format("    text:     \"{}\"\n    expected: \"{}\"\n    got:      "
                              "\"{}\"\n",
                              escape(s.text), escape(dec_bad ? want_dec : want_rt), escape(dec))
                      .c_str());
    } else {
      std::size_t at = 0;
      const std::string& w = dec_bad ? want_dec : want_rt;
      while (at < w.size() && at < dec.size() && w[at] == dec[at]) {
        ++at;
      }
      std::printf("%s", fmt::format("    first differing byte {}: expected \"{}\"\n    got "
                                    "\"{}\"\n",
                                    at, excerpt(w, at), excerpt(dec, at))
                            .c_str());
    }
  });
  if (index != samples.size()) {
    fail_input(fmt::format("{}: {} reference lines for {} strings", c.ref, index, samples.size()));
  }
  std::printf(
      "%s",
      fmt::format("differential: {}: {} strings ({:.1f} MB): {} id mismatches, {} "
                  "decode mismatches, {} round-trip failures{}{}; llmbench load "
                  "{:.2f} s, encode {:.2f} s\n",
                  c.name, t.compared, static_cast<double>(bytes) / 1e6, t.id_mismatches,
                  t.decode_mismatches, t.roundtrip_failures,
                  t.hf_lossy > 0 ? fmt::format(" ({} strings where HF's own decode(encode(x)) "
                                               "!= x: decode compared with HF's only)",
                                               t.hf_lossy)
                                 : std::string(),
                  t.allowed > 0 ? fmt::format(" ({} failures in allowed categories)", t.allowed)
                                : std::string(),
                  load_s, encode_s)
          .c_str());
  std::fflush(stdout);
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Options o = parse_args(argc, argv);
    std::map<std::string, std::vector<Sample>> samples;  // by strings file
    for (const Case& c : o.cases) {
      if (samples.count(c.strings) > 0) {
        continue;
      }
      auto& v = samples[c.strings];
      for_each_json_line(c.strings, [&](std::size_t line_no, simdjson::dom::element e) {
        const std::string where = fmt::format("{}:{}", c.strings, line_no);
        v.push_back({get_string(e, "text", where), get_string(e, "src", where),
                     get_string(e, "cat", where)});
      });
    }
    std::FILE* failures = nullptr;
    if (!o.failures.empty()) {
      failures = std::fopen(o.failures.c_str(), "w");
      if (failures == nullptr) {
        fail_input("cannot write " + o.failures);
      }
    }
    Totals all;
    for (const Case& c : o.cases) {
      const Totals t = run_case(o, c, samples.at(c.strings), failures);
      all.compared += t.compared;
      all.id_mismatches += t.id_mismatches;
      all.decode_mismatches += t.decode_mismatches;
      all.roundtrip_failures += t.roundtrip_failures;
      all.allowed += t.allowed;
    }
    if (failures != nullptr) {
      std::fclose(failures);
    }
    std::printf("%s", fmt::format("differential: compared {} strings across {} tokenizers, {} "
                                  "mismatches ({} decode mismatches, {} round-trip failures, {} "
                                  "failures in allowed categories)\n",
                                  all.compared, o.cases.size(), all.id_mismatches,
                                  all.decode_mismatches, all.roundtrip_failures, all.allowed)
                          .c_str());
    return all.id_mismatches + all.decode_mismatches + all.roundtrip_failures > 0 ? 1 : 0;
  } catch (const std::exception& ex) {
    std::fprintf(stderr, "differential_driver: %s\n", ex.what());
    return 2;
  }
}
