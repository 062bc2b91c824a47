// The one name-table template (core/name_table.hpp) and the two JSON-number policies
// (core/json_number.hpp) that every module's tables and writers use.

#include "llmbench/core/name_table.hpp"

#include "llmbench/core/json_number.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace llmbench {
namespace {

enum class Color : std::uint8_t { Red, Green, Blue, Unnamed };

constexpr auto kColors = make_name_table<Color>({
    {Color::Red, "red"},
    {Color::Green, "green"},
    {Color::Blue, "blue"},
});

// The table is usable at compile time.
static_assert(kColors.name(Color::Green) == "green");
static_assert(kColors.find("blue") == Color::Blue);
static_assert(!kColors.find("Blue").has_value());
static_assert(kColors.entries.size() == 3);

TEST(NameTable, NamesParsesAndListsInOrder) {
  EXPECT_EQ(kColors.name(Color::Red), "red");
  EXPECT_EQ(kColors.name(Color::Unnamed), "");
  EXPECT_EQ(kColors.name(Color::Unnamed, "?"), "?");
  EXPECT_EQ(kColors.find("green"), Color::Green);
  EXPECT_FALSE(kColors.find("").has_value());
  EXPECT_FALSE(kColors.find("greenish").has_value());
  EXPECT_EQ(kColors.names(), "red, green, blue");
  EXPECT_EQ(kColors.names("|"), "red|green|blue");
}

TEST(JsonNumber, TwoNamedPoliciesForWhatJsonCannotHold) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  EXPECT_EQ(finite_or_null(2.5), nlohmann::json(2.5));
  EXPECT_TRUE(finite_or_null(nan).is_null());
  EXPECT_TRUE(finite_or_null(kInf).is_null());
  EXPECT_TRUE(finite_or_null(-kInf).is_null());
  EXPECT_EQ(number_or_inf(2.5), nlohmann::json(2.5));
  EXPECT_EQ(number_or_inf(kInf), nlohmann::json("inf"));
  EXPECT_EQ(number_or_inf(-kInf), nlohmann::json("-inf"));
  EXPECT_TRUE(number_or_inf(nan).is_null());
  EXPECT_EQ(finite_or_null(0.0).dump(), "0.0");
}

}  // namespace
}  // namespace llmbench
