#include "llmbench/app/sweep_axes.hpp"

#include "llmbench/core/error.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>

namespace llmbench::app {

namespace {

constexpr const char* kFlag = "--sweep";

[[noreturn]] void fail(const std::string& message, std::string_view text, std::size_t offset) {
  throw Exception(
      Error{fmt::format("{} in '{}'", message, text), kFlag, static_cast<std::int64_t>(offset)});
}

/// What the values of `type` are, for messages.
std::string_view type_words(AxisType type) {
  switch (type) {
    case AxisType::Count:
      return "a whole number >= 1";
    case AxisType::Rate:
      return "a number > 0 or inf";
    case AxisType::Fraction:
      return "a number in (0, 1]";
    case AxisType::Name:
      return "a name";
  }
  return "a value";
}

bool valid_number(AxisType type, double v) {
  switch (type) {
    case AxisType::Count:
      return std::isfinite(v) && v >= 1 && v <= 1e9 && v == std::floor(v);
    case AxisType::Rate:
      return v > 0;  // +inf included; NaN fails
    case AxisType::Fraction:
      return v > 0 && v <= 1;
    case AxisType::Name:
      return false;
  }
  return false;
}

/// Parses a whole number item (`inf` only where `allow_inf`); nullopt when it is not one.
std::optional<double> to_number(std::string_view item, bool allow_inf) {
  const std::string s(item);
  if (allow_inf && (s == "inf" || s == "Inf" || s == "infinity"))
    return std::numeric_limits<double>::infinity();
  if (s.empty())
    return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (*end != '\0' || !std::isfinite(v))
    return std::nullopt;
  return v;
}

/// `v` as text: an integer without a fraction, else 6 significant digits (so 0.1 × 3 is "0.3").
AxisValue value_of(AxisType type, double v) {
  if (type == AxisType::Count)
    v = std::round(v);
  const std::string text = type == AxisType::Count ? fmt::format("{}", static_cast<std::int64_t>(v))
                                                   : fmt::format("{:.6g}", v);
  return AxisValue{.number = std::strtod(text.c_str(), nullptr), .text = text};
}

double range_number(const AxisInfo& info, std::string_view part, std::string_view text,
                    std::size_t offset) {
  const auto v = to_number(part, false);
  if (!v || !valid_number(info.type, *v)) {
    fail(fmt::format("'{}' is not {} ({})", part, type_words(info.type), info.name), text, offset);
  }
  return *v;
}

/// Expands "LO:HI:xF" / "LO:HI:+S" (the item at `offset` of `text`) into `out`.
void expand_range(const AxisInfo& info, std::string_view item, std::size_t offset,
                  std::string_view text, std::vector<AxisValue>& out) {
  const std::size_t c1 = item.find(':');
  const std::size_t c2 = item.find(':', c1 + 1);
  const std::string_view lo_s = item.substr(0, c1);
  const std::string_view hi_s = item.substr(c1 + 1, c2 - c1 - 1);
  const double lo = range_number(info, lo_s, text, offset);
  const double hi = range_number(info, hi_s, text, offset + c1 + 1);
  if (lo > hi)
    fail(fmt::format("range {}:{} runs downwards (LO must be <= HI)", lo_s, hi_s), text, offset);
  const std::size_t step_at = offset + c2 + 1;
  const std::string_view step = item.substr(c2 + 1);
  // NaN when the step has no number (`to_number` refuses non-finite numbers here).
  const double by =
      step.size() > 1
          ? to_number(step.substr(1), false).value_or(std::numeric_limits<double>::quiet_NaN())
          : std::numeric_limits<double>::quiet_NaN();
  const bool geometric = !step.empty() && (step[0] == 'x' || step[0] == '*');
  if (step.empty() || !(geometric || step[0] == '+') || std::isnan(by)) {
    fail(fmt::format("step '{}' is neither xF (multiply by F) nor +S (add S)", step), text,
         step_at);
  }
  if (geometric ? !(by > 1) : !(by > 0))
    fail(fmt::format("step '{}' must {}", step,
                     geometric ? "multiply by more than 1" : "add more than 0"),
         text, step_at);
  if (!geometric && info.type == AxisType::Count && by != std::floor(by))
    fail(fmt::format("step '{}' of a whole-number axis must be whole", step), text, step_at);
  const double limit = hi * (1 + 1e-9);
  for (std::size_t k = 0;; ++k) {
    const double v =
        geometric ? lo * std::pow(by, static_cast<double>(k)) : lo + static_cast<double>(k) * by;
    if (v > limit)
      break;
    AxisValue value = value_of(info.type, v);
    if (value.number > hi)
      value = value_of(info.type, hi);  // the last step lands on HI within rounding
    if (out.empty() || !(out.back() == value))
      out.push_back(std::move(value));
    if (out.size() > kMaxAxisValues)
      fail(fmt::format("the range makes more than {} values", kMaxAxisValues), text, offset);
  }
}

}  // namespace

const AxisInfo& axis_info(Axis axis) noexcept {
  for (const auto& info : kAxes) {
    if (info.axis == axis)
      return info;
  }
  return kAxes.front();
}

std::string axis_names() {
  std::string out;
  for (const auto& info : kAxes) {
    if (!info.name.empty())
      out += (out.empty() ? "" : ", ") + std::string(info.name);
  }
  return out;
}

std::string_view axis_name(const SweepAxis& axis) noexcept {
  return axis.axis == Axis::Free ? std::string_view(axis.free_name) : axis_info(axis.axis).name;
}

std::string placeholder_of(const SweepAxis& axis) {
  if (axis.axis == Axis::Free)
    return axis.free_name;
  std::string out(axis_info(axis.axis).name);
  std::replace(out.begin(), out.end(), '-', '_');
  return out;
}

AxisValue axis_value(Axis axis, double number) {
  return value_of(axis_info(axis).type, number);
}

SweepAxis parse_sweep_axis(std::string_view text, bool allow_free) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos)
    fail("expected AXIS=VALUES (e.g. max-concurrency=1,2,4 or request-rate=1:64:x2)", text, 0);
  const std::string_view name = text.substr(0, eq);
  const AxisInfo* info = nullptr;
  for (const auto& candidate : kAxes) {
    if (!name.empty() && candidate.name == name)
      info = &candidate;
  }
  const bool free_name = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
  if (info == nullptr && allow_free && free_name)
    info = &axis_info(Axis::Free);
  if (info == nullptr)
    fail(fmt::format("unknown axis '{}' (valid: {}{})", name, axis_names(),
                     allow_free ? "; a free axis of --serve-cmd is letters, digits, _ and -"
                                : "; with --serve-cmd, any other name is a free axis"),
         text, 0);
  SweepAxis axis{.axis = info->axis,
                 .values = {},
                 .search_range = std::nullopt,
                 .free_name = info->axis == Axis::Free ? std::string(name) : std::string()};
  const std::string_view body = text.substr(eq + 1);
  if (body.empty())
    fail(fmt::format("no values for {}", name), text, eq + 1);
  std::size_t pos = 0;
  while (pos <= body.size()) {
    const std::size_t comma = std::min(body.find(',', pos), body.size());
    const std::string_view item = body.substr(pos, comma - pos);
    const std::size_t at = eq + 1 + pos;
    const std::size_t colons =
        info->type == AxisType::Name
            ? 0
            : static_cast<std::size_t>(std::count(item.begin(), item.end(), ':'));
    if (item.empty()) {
      fail("empty value", text, at);
    } else if (colons == 1) {
      if (pos != 0 || comma != body.size())
        fail("LO:HI without a step is an SLO search range and must stand alone", text, at);
      const std::size_t c = item.find(':');
      const double lo = range_number(*info, item.substr(0, c), text, at);
      const double hi = range_number(*info, item.substr(c + 1), text, at + c + 1);
      if (!(lo < hi))
        fail(fmt::format("search range {} must have LO < HI", item), text, at);
      axis.search_range = std::make_pair(lo, hi);
    } else if (colons == 2) {
      expand_range(*info, item, at, text, axis.values);
    } else if (colons > 2) {
      fail(fmt::format("'{}' has too many ':' (a range is LO:HI:xF or LO:HI:+S)", item), text, at);
    } else if (info->type == AxisType::Name) {
      axis.values.push_back(AxisValue{.text = std::string(item)});
    } else {
      const auto v = to_number(item, info->type == AxisType::Rate);
      if (!v || !valid_number(info->type, *v))
        fail(fmt::format("'{}' is not {} ({})", item, type_words(info->type), name), text, at);
      axis.values.push_back(AxisValue{.number = *v, .text = std::string(item)});
    }
    if (axis.values.size() > kMaxAxisValues)
      fail(fmt::format("more than {} values", kMaxAxisValues), text, at);
    pos = comma + 1;
  }
  return axis;
}

std::vector<SweepAxis> parse_sweep_axes(const std::vector<std::string>& texts, bool allow_free) {
  std::vector<SweepAxis> out;
  for (const auto& text : texts) {
    SweepAxis axis = parse_sweep_axis(text, allow_free);
    for (const auto& seen : out) {
      if (placeholder_of(seen) == placeholder_of(axis))
        fail(fmt::format("axis {} is swept twice", axis_name(axis)), text, 0);
    }
    out.push_back(std::move(axis));
  }
  return out;
}

std::vector<std::vector<AxisValue>> sweep_points(const std::vector<SweepAxis>& axes) {
  std::vector<std::vector<AxisValue>> points{{}};
  for (const auto& axis : axes) {
    std::vector<std::vector<AxisValue>> next;
    next.reserve(points.size() * axis.values.size());
    for (const auto& prefix : points) {
      for (const auto& value : axis.values) {
        next.push_back(prefix);
        next.back().push_back(value);
      }
    }
    points = std::move(next);
  }
  return axes.empty() ? std::vector<std::vector<AxisValue>>{} : points;
}

std::vector<AxisValue> SweepGrid::point(std::size_t setting,
                                        const std::vector<AxisValue>& load) const {
  std::vector<AxisValue> v(knob_axes.size() + load_axes.size());
  for (std::size_t i = 0; i < knob_axes.size(); ++i) v[knob_axes[i]] = settings[setting][i];
  for (std::size_t i = 0; i < load_axes.size() && i < load.size(); ++i) v[load_axes[i]] = load[i];
  return v;
}

std::string SweepGrid::load_label(const std::vector<SweepAxis>& axes,
                                  const std::vector<AxisValue>& load) const {
  std::string out;
  for (std::size_t i = 0; i < load_axes.size(); ++i)
    out +=
        fmt::format("{}{}={}", out.empty() ? "" : " ", axis_name(axes[load_axes[i]]), load[i].text);
  return out;
}

SweepGrid sweep_grid(const std::vector<SweepAxis>& axes) {
  SweepGrid g;
  std::vector<SweepAxis> knob;
  std::vector<SweepAxis> load;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    const bool is_load = axis_info(axes[i].axis).load;
    (is_load ? g.load_axes : g.knob_axes).push_back(i);
    if (!axes[i].search_range)
      (is_load ? load : knob).push_back(axes[i]);
  }
  g.settings = knob.empty() ? std::vector<std::vector<AxisValue>>{{}} : sweep_points(knob);
  g.loads = load.empty() ? std::vector<std::vector<AxisValue>>{{}} : sweep_points(load);
  for (const auto& setting : g.settings) {
    std::string label;
    nlohmann::json k = knob.empty() ? nlohmann::json(nullptr) : nlohmann::json::object();
    for (std::size_t i = 0; i < knob.size(); ++i) {
      label +=
          fmt::format("{}{}={}", label.empty() ? "" : " ", axis_name(knob[i]), setting[i].text);
      k[std::string(axis_name(knob[i]))] = setting[i].text;
    }
    g.labels.push_back(std::move(label));
    g.knobs.push_back(std::move(k));
  }
  return g;
}

}  // namespace llmbench::app
