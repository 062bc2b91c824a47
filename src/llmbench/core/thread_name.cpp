#include "llmbench/core/thread_name.hpp"

#include <pthread.h>
#include <string>
#include <sys/prctl.h>

namespace llmbench {

void set_thread_name(std::string_view name) noexcept {
  try {
    const std::string cut(name.substr(0, 15));
    pthread_setname_np(pthread_self(), cut.c_str());
  } catch (...) {  // std::bad_alloc for a 15-byte string: nothing to name then
  }
}

void set_thread_timer_slack_ns(unsigned long ns) noexcept {
  prctl(PR_SET_TIMERSLACK, ns == 0 ? 1UL : ns, 0UL, 0UL, 0UL);
}

}  // namespace llmbench
