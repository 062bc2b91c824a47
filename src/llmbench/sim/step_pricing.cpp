#include "llmbench/sim/step_pricing.hpp"

#include <algorithm>
#include <cmath>

namespace llmbench::sim {

std::int64_t step_work(const SchedulerOutput& output, std::vector<SeqWork>& work) {
  work.resize(output.seqs.size());
  SeqWork* const out = work.data();
  std::int64_t decodes = 0;
  for (std::size_t i = 0; i < output.seqs.size(); ++i) {
    const auto& s = output.seqs[i];
    out[i] = SeqWork{s.num_new_tokens, s.num_computed_before, s.samples()};
    decodes += (s.num_new_tokens == 1 && s.num_computed_before > 0) ? 1 : 0;
  }
  return decodes;
}

BatchSums batch_sums(const std::vector<ScheduledSeq>& seqs) {
  BatchSums sums;
  for (const auto& q : seqs) sums.add(q.num_new_tokens, q.num_computed_before, q.samples());
  return sums;
}

TimeNs price_step(const ExecTimeModel& model, const SchedulerOutput& output,
                  std::int64_t block_size, std::vector<SeqWork>& work,
                  std::int64_t* num_decode_seqs, std::int64_t retained_cells) {
  double s = 0;
  if (model.prices_from_sums()) {
    // One pass over the schedule straight into the sums (no per-sequence work list).
    BatchSums sums = output.has_sums ? output.sums : batch_sums(output.seqs);
    sums.retained_cells = retained_cells;
    if (num_decode_seqs != nullptr)
      *num_decode_seqs = sums.decode_seqs;
    s = model.step_cost_of_sums(sums).total_s();
  } else {
    const std::int64_t decodes = step_work(output, work);
    if (num_decode_seqs != nullptr)
      *num_decode_seqs = decodes;
    s = model.step_cost(work).total_s();
  }
  const std::int64_t swapped = output.num_swap_out_blocks + output.num_swap_in_blocks;
  if (swapped > 0)
    s += model.swap_time_s(swapped, block_size);
  return std::max<TimeNs>(1, static_cast<TimeNs>(std::llround(s * 1e9)));
}

}  // namespace llmbench::sim
