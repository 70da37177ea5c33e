#include "signals.h"

#include <csignal>
#include <cstdio>

namespace collmc::replay {

namespace {

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
volatile sig_atomic_t received = 0;

void note_signal(int sig) {
  if (received == 0) received = sig;
}

}  // namespace

InterruptGuard::InterruptGuard() {
  received = 0;
  struct sigaction sa {};
  sa.sa_handler = note_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a sleeping watchdog wakes at once
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &sa, &previous_[i]);
}

InterruptGuard::~InterruptGuard() {
  for (int i = 0; i < 3; ++i) sigaction(kSignals[i], &previous_[i], nullptr);
}

int InterruptGuard::signal() const { return received; }

void reset_interrupt_signals() {
  for (int sig : kSignals) std::signal(sig, SIG_DFL);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGHUP:
      return "SIGHUP";
    default:
      return "a signal";
  }
}

}  // namespace collmc::replay
