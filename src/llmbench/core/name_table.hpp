#pragma once
/// @file
/// One name table per enum (the model: one generic registry, each table in its own file): the
/// pairs of an enumerator and its stable name, from which its `to_string`, its parser, the
/// "valid: ..." part of an error and a help text all read, so no list of names is kept twice.

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace llmbench {

/// A constexpr table of `N` (enumerator, name) pairs, in the order help texts list them. Names
/// are compared exactly (case-sensitive). Immutable; safe to share between threads.
template <class Enum, std::size_t N>
struct NameTable {
  std::array<std::pair<Enum, std::string_view>, N> entries;

  /// The name of `value`; `fallback` for a value the table lacks.
  [[nodiscard]] constexpr std::string_view name(Enum value,
                                                std::string_view fallback = {}) const noexcept {
    for (const auto& [v, n] : entries) {
      if (v == value)
        return n;
    }
    return fallback;
  }

  /// The enumerator named `text`; nullopt for an unknown name.
  [[nodiscard]] constexpr std::optional<Enum> find(std::string_view text) const noexcept {
    for (const auto& [v, n] : entries) {
      if (n == text)
        return v;
    }
    return std::nullopt;
  }

  /// Every name joined by `separator` ("a, b, c"): the "valid: ..." of errors and the help.
  [[nodiscard]] std::string names(std::string_view separator = ", ") const {
    std::string out;
    for (const auto& [v, n] : entries) {
      if (!out.empty())
        out += separator;
      out += n;
    }
    return out;
  }
};

/// Makes a table from `{enumerator, name}` pairs: `make_name_table<E>({{E::A, "a"}, ...})`.
template <class Enum, std::size_t N>
constexpr NameTable<Enum, N> make_name_table(
    const std::pair<Enum, std::string_view> (&pairs)[N]) noexcept {  // NOLINT(*-avoid-c-arrays)
  NameTable<Enum, N> table{};
  for (std::size_t i = 0; i < N; ++i) table.entries[i] = pairs[i];
  return table;
}

}  // namespace llmbench
