// InterruptScope and friends (interrupt.h). The handler only stores the signal: everything else
// happens in the command's own thread at its next check.
#include "interrupt.h"

#include <signal.h>
#include <time.h>

#include <atomic>
#include <cstdint>

namespace gw::cli {

namespace {

// Written by the signal handler only (a lock-free atomic is async-signal-safe).
std::atomic<int> g_interrupt_signal{0};
static_assert(std::atomic<int>::is_always_lock_free);

struct SavedHandlers {
  struct sigaction interrupt;
  struct sigaction terminate;
  struct sigaction file_size;
};
SavedHandlers g_saved;

// When the first signal arrived (CLOCK_MONOTONIC, ns). One event often arrives twice within
// microseconds: `timeout` and batch schedulers signal the process and then its process group.
std::atomic<std::int64_t> g_first_signal_ns{0};
static_assert(std::atomic<std::int64_t>::is_always_lock_free);
// 0.2 s: faster than a person's second Ctrl-C.
constexpr std::int64_t kDuplicateWindowNs = 200'000'000;

std::int64_t monotonic_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);  // async-signal-safe (POSIX)
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

extern "C" void record_interrupt(int signal) {
  const std::int64_t now = monotonic_ns();
  if (g_interrupt_signal.exchange(signal) == 0) {
    g_first_signal_ns.store(now);
    return;
  }
  // A repeat within the window is the same event delivered twice: already recorded.
  if (now - g_first_signal_ns.load() < kDuplicateWindowNs) return;
  // A later second signal: the user insists. The default action ends the process now.
  ::signal(signal, SIG_DFL);
  ::raise(signal);
}

}  // namespace

InterruptScope::InterruptScope() {
  g_interrupt_signal.store(0);
  struct sigaction action {};
  action.sa_handler = record_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // reads and writes in progress continue; the flag is polled
  sigaction(SIGINT, &action, &g_saved.interrupt);
  sigaction(SIGTERM, &action, &g_saved.terminate);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, &g_saved.file_size);
}

InterruptScope::~InterruptScope() {
  sigaction(SIGINT, &g_saved.interrupt, nullptr);
  sigaction(SIGTERM, &g_saved.terminate, nullptr);
  sigaction(SIGXFSZ, &g_saved.file_size, nullptr);
}

int interrupt_signal() { return g_interrupt_signal.load(); }

void throw_if_interrupted() {
  const int signal = interrupt_signal();
  if (signal != 0) throw Interrupted{signal};
}

}  // namespace gw::cli
