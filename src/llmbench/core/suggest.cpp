#include "llmbench/core/suggest.hpp"

#include <algorithm>
#include <cctype>
#include <numeric>
#include <utility>

namespace llmbench {

namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

std::string lowered(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  const std::size_t m = b.size();
  // Rows i - 2, i - 1 and i of the dynamic programme over prefixes of a (rows) and b (columns).
  std::vector<std::size_t> before(m + 1);
  std::vector<std::size_t> prev(m + 1);
  std::vector<std::size_t> row(m + 1);
  std::iota(prev.begin(), prev.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    row[0] = i;
    for (std::size_t j = 1; j <= m; ++j) {
      const bool same = lower(a[i - 1]) == lower(b[j - 1]);
      row[j] = std::min({prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        row[j] = std::min(row[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, row);
  }
  return prev[m];
}

std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max) {
  const std::size_t limit = std::max<std::size_t>(1, name.size() / 4);
  const std::string needle = lowered(name);
  std::vector<std::pair<std::size_t, std::size_t>> scored;  // (distance, candidate index)
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    std::size_t d = edit_distance(name, candidates[i]);
    const std::string hay = lowered(candidates[i]);
    const bool contains =
        std::min(needle.size(), hay.size()) >= 3 &&
        (hay.find(needle) != std::string::npos || needle.find(hay) != std::string::npos);
    if (contains)
      d = std::min<std::size_t>(d, 2);
    if (d <= std::max<std::size_t>(limit, contains ? 2 : 0))
      scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (const auto& [d, i] : scored) {
    // Only the closest: a name one edit away makes one three edits away noise.
    if (out.size() == max || d > scored.front().first)
      break;
    if (std::find(out.begin(), out.end(), candidates[i]) == out.end())
      out.push_back(candidates[i]);
  }
  return out;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates) {
  const auto names = closest_names(name, candidates);
  if (names.empty())
    return "";
  std::string out = " (did you mean ";
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0)
      out += i + 1 == names.size() ? " or " : ", ";
    out += "'" + names[i] + "'";
  }
  return out + "?)";
}

}  // namespace llmbench
