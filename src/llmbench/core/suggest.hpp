#pragma once
/// @file
/// "Did you mean": the known names closest to a mistyped one, for error messages (a metric name
/// of `history trend`, a gate key, a flag). Closeness is the optimal string alignment distance
/// (Damerau-Levenshtein restricted to non-overlapping edits: insert, delete, substitute, swap two
/// adjacent characters; Boyer, Hura and Fisher's "restricted edit distance"), on bytes, ignoring
/// ASCII case.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace llmbench {

/// The optimal string alignment distance between `a` and `b` (ASCII case ignored): the fewest
/// insertions, deletions, substitutions and swaps of two adjacent bytes that turn one into the
/// other, no substring edited twice. O(|a|·|b|) time, O(|b|) memory per row (three rows).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The names of `candidates` closest to `name`, in the candidates' order, at most `max` of them:
/// those at the smallest distance, if it is within max(1, |name| / 4) edits; a candidate that
/// contains `name` or is contained in it (both at least 3 characters) counts as at most two
/// edits away. Empty when none is close: then the caller lists every valid name instead.
std::vector<std::string> closest_names(std::string_view name,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max = 3);

/// " (did you mean 'a' or 'b'?)" for `closest_names(name, candidates)`, or "" when none is close.
std::string did_you_mean(std::string_view name, const std::vector<std::string>& candidates);

}  // namespace llmbench
