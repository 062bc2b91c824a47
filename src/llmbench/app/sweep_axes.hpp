#pragma once
/// @file
/// The axes of `llmbench sweep` (docs/sweep.md "Axes"): one constexpr table names each axis, its
/// value type and whether it needs `--simulate`; it drives the parsing of `--sweep AXIS=LIST`,
/// the "valid: ..." message and the help (the flags a value sets are `cli::apply_axis`'s). A list
/// is `1,2,4,8`; a ladder range is `LO:HI:xF` (geometric, factor F > 1) or `LO:HI:+S` (arithmetic,
/// step S > 0), both including LO and every value up to HI; `LO:HI` alone is the range of an SLO
/// search (`--slo`).

#include <nlohmann/json.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmbench::app {

/// A quantity `llmbench sweep` can vary from point to point.
enum class Axis : std::uint8_t {
  MaxConcurrency,        ///< `--max-concurrency`
  RequestRate,           ///< `--request-rate` (req/s; "inf" = all at once)
  MaxNumSeqs,            ///< engine `--max-num-seqs`
  MaxNumBatchedTokens,   ///< engine `--max-num-batched-tokens`
  BlockSize,             ///< engine `--block-size`
  GpuMemoryUtilization,  ///< engine `--gpu-memory-utilization`
  Tp,                    ///< engine `--tp`
  Scheduler,             ///< engine `--scheduler`
  ModelProfile,          ///< engine `--model-profile`
  Gpu,                   ///< engine `--gpu`
  Free,                  ///< a knob only a `--serve-cmd` template knows (`SweepAxis::free_name`)
};

/// How an axis's values are read.
enum class AxisType : std::uint8_t {
  Count,     ///< an integer ≥ 1
  Rate,      ///< a number > 0, or "inf"
  Fraction,  ///< a number in (0, 1]
  Name,      ///< a name or path (no ranges)
};

/// One row of the axis table.
struct AxisInfo {
  Axis axis = Axis::MaxConcurrency;
  std::string_view name;  ///< as written in `--sweep` (the flag's name without "--")
  AxisType type = AxisType::Count;
  bool load = false;           ///< an offered-load axis (the knee's x, an SLO search's axis)
  bool simulate_only = false;  ///< an engine knob: needs `--simulate`
};

/// Every axis, in the order the help lists them.
inline constexpr std::array<AxisInfo, 11> kAxes{{
    {.axis = Axis::MaxConcurrency,
     .name = "max-concurrency",
     .type = AxisType::Count,
     .load = true},
    {.axis = Axis::RequestRate, .name = "request-rate", .type = AxisType::Rate, .load = true},
    {.axis = Axis::MaxNumSeqs, .name = "max-num-seqs", .simulate_only = true},
    {.axis = Axis::MaxNumBatchedTokens, .name = "max-num-batched-tokens", .simulate_only = true},
    {.axis = Axis::BlockSize, .name = "block-size", .simulate_only = true},
    {.axis = Axis::GpuMemoryUtilization,
     .name = "gpu-memory-utilization",
     .type = AxisType::Fraction,
     .simulate_only = true},
    {.axis = Axis::Tp, .name = "tp", .simulate_only = true},
    {.axis = Axis::Scheduler, .name = "scheduler", .type = AxisType::Name, .simulate_only = true},
    {.axis = Axis::ModelProfile,
     .name = "model-profile",
     .type = AxisType::Name,
     .simulate_only = true},
    {.axis = Axis::Gpu, .name = "gpu", .type = AxisType::Name, .simulate_only = true},
    // No name of its own: `--sweep NAME=a,b` with a name not above, under `--serve-cmd`.
    {.axis = Axis::Free, .name = "", .type = AxisType::Name, .simulate_only = true},
}};

/// The table row of `axis`.
const AxisInfo& axis_info(Axis axis) noexcept;

/// "max-concurrency, request-rate, ..." from `kAxes` (the "valid: ..." list and the help; the
/// free axis has no name and is not listed).
std::string axis_names();

/// One value of an axis: `number` (NaN for a name; +inf for request-rate "inf") and `text` as
/// it goes into flags and file names (a list item as typed, a range value in shortest form).
struct AxisValue {
  double number = std::numeric_limits<double>::quiet_NaN();
  std::string text;
  bool operator==(const AxisValue&) const = default;
};

/// The value `number` of `axis` as a range would make it (a whole number for a count axis, 6
/// significant digits otherwise).
AxisValue axis_value(Axis axis, double number);

/// One `--sweep AXIS=...`: the ladder's values, or (for `LO:HI`) the range of an SLO search.
struct SweepAxis {
  Axis axis = Axis::MaxConcurrency;
  std::vector<AxisValue> values;                          ///< empty for a search range
  std::optional<std::pair<double, double>> search_range;  ///< `LO:HI` without a step
  std::string free_name;  ///< the name of an `Axis::Free` as typed ("" for the others)
};

/// The axis's name as `--sweep` took it (the table's, or a free axis's own).
std::string_view axis_name(const SweepAxis& axis) noexcept;

/// The `{placeholder}` of an axis in a `--serve-cmd` template: the table name with '_' for '-'
/// (`max_num_seqs`), or a free axis's name as typed.
std::string placeholder_of(const SweepAxis& axis);

/// The most values one axis may have (a range that would make more is refused).
inline constexpr std::size_t kMaxAxisValues = 10'000;

/// Parses one `--sweep` value "AXIS=LIST" / "AXIS=LO:HI:xF" / "AXIS=LO:HI:+S" / "AXIS=LO:HI".
/// Throws `Exception` with source "--sweep", the text and the byte offset of the bad part: an
/// unknown axis (with the valid names), a value of the wrong type, an empty item, a range with
/// LO > HI, a factor ≤ 1 or step ≤ 0, a range of a name axis, or more than `kMaxAxisValues`.
/// With `allow_free` (a `--serve-cmd` sweep), an unknown name of letters, digits, '_' and '-' is
/// a free axis (`Axis::Free`) whose values are names.
SweepAxis parse_sweep_axis(std::string_view text, bool allow_free = false);

/// Parses every `--sweep` value; throws `Exception` as `parse_sweep_axis` does, or naming the
/// second `--sweep` of one axis.
std::vector<SweepAxis> parse_sweep_axes(const std::vector<std::string>& texts,
                                        bool allow_free = false);

/// The points of a ladder: every combination of the axes' values, the last axis varying fastest
/// (`itertools.product` order). Each point holds one value per axis, in the axes' order.
std::vector<std::vector<AxisValue>> sweep_points(const std::vector<SweepAxis>& axes);

/// The engine settings of a sweep (every combination of its knob axes' values) and its load
/// points (every combination of its load axes' values; none for an SLO search's range).
struct SweepGrid {
  std::vector<std::size_t> knob_axes;
  std::vector<std::size_t> load_axes;
  std::vector<std::vector<AxisValue>> settings;  ///< values of the knob axes, in their order
  std::vector<std::vector<AxisValue>> loads;     ///< values of the load axes, in their order
  std::vector<std::string> labels;               ///< "max-num-seqs=256 ..." per setting
  std::vector<nlohmann::json> knobs;             ///< {axis: value} per setting

  /// The values of a point (one per axis, in the sweep's order).
  [[nodiscard]] std::vector<AxisValue> point(std::size_t setting,
                                             const std::vector<AxisValue>& load) const;
  /// "max-concurrency=4" of a load point.
  [[nodiscard]] std::string load_label(const std::vector<SweepAxis>& axes,
                                       const std::vector<AxisValue>& load) const;
};

/// The grid of `axes`: their knob and load axes, the settings and the load points (an axis with
/// a search range adds no values), and each setting's label and knobs.
SweepGrid sweep_grid(const std::vector<SweepAxis>& axes);

}  // namespace llmbench::app
