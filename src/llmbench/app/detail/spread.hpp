#pragma once
/// @file
/// The hooks by which `Session::run` spreads one point over the ranks of an MPI job
/// (docs/distributed.md): before the load every rank checks that it drew rank 0's schedule,
/// takes its share and measures its clock against rank 0's; after it, rank 0 gathers every
/// rank's records onto its clock, analyses them as one run and writes the one results file and
/// one records file; every rank leaves with rank 0's exit code.

#include "llmbench/app/plan.hpp"
#include "llmbench/app/result.hpp"
#include "llmbench/dist/spread.hpp"
#include "llmbench/dist/world.hpp"
#include "llmbench/loadgen/loadgen.hpp"

#include <string>
#include <vector>

namespace llmbench::app::detail {

/// One point spread over `world`'s ranks. Every member function is collective (every rank calls
/// it, in order) unless it says otherwise.
class Spread {
 public:
  /// Checks the plan can be spread (a target URL, not the built-in server; a cap of at least one
  /// slot per rank), checks that every rank drew rank 0's schedule (`dist::schedule_digest`;
  /// every rank throws the same `Exception` when any differs) and measures the clock offsets.
  /// `load` is the point's load as it will be sent (its `num_prompts` the schedule's).
  Spread(dist::World& world, const RunPlan& plan, const loadgen::LoadOptions& load,
         const std::vector<workload::Sample>& samples);

  [[nodiscard]] bool leader() const noexcept { return world_.rank() == 0; }
  [[nodiscard]] int rank() const noexcept { return world_.rank(); }

  /// `load` with this rank's share (`loadgen::RankShare`, the common start through the offsets)
  /// and its part of the concurrency cap. Not collective.
  [[nodiscard]] loadgen::LoadOptions share(loadgen::LoadOptions load) const;
  /// Rank 0's file stem on every rank.
  [[nodiscard]] std::string common_stem(const std::string& stem);
  /// The stem of this rank's own records file, written as it goes: "<stem>.rank<R>". Not
  /// collective.
  [[nodiscard]] std::string rank_stem(const std::string& stem) const;

  /// After the load: measures the offsets again and gathers every rank's records. On rank 0
  /// `result.records` become every rank's, on its clock (`dist::merge_parts`), and
  /// `result.run_start_steady_ns` the merged clock's zero; on the others they are left as sent.
  void gather(loadgen::LoadResult& result);

  /// After `gather`: rank 0's merged records (and their clock's zero) on every rank, so every
  /// rank analyses the one run as rank 0 does.
  void share_merged(loadgen::LoadResult& result);

  /// Rank 0 (not collective): the per-rank figures of the analysed merged run `r`, set on
  /// `r.spread`, their warnings logged; a rank that sent none of its share, or could not connect,
  /// makes the exit code 1.
  void describe(RunResult& r) const;

  /// Rank 0's exit code on every rank.
  [[nodiscard]] int common_exit_code(int code);

 private:
  dist::World& world_;
  std::uint64_t digest_ = 0;
  std::int64_t planned_ = 0;  ///< measured requests of the whole plan (for each rank's quota)
  std::vector<dist::ClockOffset> before_;
  std::vector<dist::ClockOffset> after_;
  std::vector<dist::RankPart> parts_;  ///< rank 0: every rank's facts (records moved out)
};

}  // namespace llmbench::app::detail
