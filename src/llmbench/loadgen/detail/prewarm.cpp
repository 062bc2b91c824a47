#include "llmbench/loadgen/detail/prewarm.hpp"

#include <boost/asio/co_spawn.hpp>

#include <exception>
#include <future>
#include <utility>

namespace llmbench::loadgen::detail {

std::vector<std::size_t> prewarm_shares(std::int64_t want, std::size_t workers) {
  std::vector<std::size_t> shares(workers, 0);
  if (want <= 0 || workers == 0)
    return shares;
  const auto n = static_cast<std::size_t>(want);
  for (std::size_t i = 0; i < workers; ++i) shares[i] = n / workers + (i < n % workers ? 1 : 0);
  return shares;
}

std::string prewarm(const std::vector<PrewarmTarget>& targets, std::int64_t want) {
  const auto shares = prewarm_shares(want, targets.size());
  std::vector<std::future<http::Outcome>> pending;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    if (shares[i] == 0)
      continue;
    std::promise<http::Outcome> promise;
    pending.push_back(promise.get_future());
    boost::asio::co_spawn(
        targets[i].ioc, targets[i].pool.prewarm(shares[i]),
        [p = std::move(promise)](const std::exception_ptr& e, http::Outcome o) mutable {
          if (e) {
            o.failure = http::Failure::Io;
            o.message = "prewarm failed";
          }
          p.set_value(std::move(o));
        });
  }
  std::string why;
  for (auto& f : pending) {
    const auto out = f.get();
    if (out.failure != http::Failure::None && why.empty())
      why = out.message;
  }
  return why;
}

}  // namespace llmbench::loadgen::detail
