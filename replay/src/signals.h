// SIGINT, SIGTERM and SIGHUP during a replay: noted instead of fatal, so that the engine ends every
// rank process and removes what the run made before it returns (Outcome::Interrupted). Private to
// the replay library.
#pragma once

#include <signal.h>

namespace collmc::replay {

class InterruptGuard {
 public:
  InterruptGuard();   // installs the handlers (the first signal since is what signal() returns)
  ~InterruptGuard();  // puts the previous handlers back
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

  // The signal that arrived since the guard was made, or 0.
  int signal() const;

 private:
  struct sigaction previous_[3];
};

// In a forked rank process: the default dispositions again (a rank must not ignore the launcher's
// SIGTERM because it inherited the guard's handler).
void reset_interrupt_signals();

// "SIGINT", "SIGTERM", "SIGHUP", else "signal N".
const char* signal_name(int sig);

}  // namespace collmc::replay
