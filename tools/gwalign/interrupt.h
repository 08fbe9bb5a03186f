// Signals during a command that writes outputs: recorded, turned into a cancelled solve and an
// exit status, so that no partial output is left (the outputs are temporaries until committed).
#pragma once

namespace gw::cli {

// SIGINT / SIGTERM during a command that writes outputs. While an InterruptScope lives, the first
// such signal is only recorded: ProgressDisplay's callback then returns false, so a solve stops at
// its next progress check (termination "cancelled"), and throw_if_interrupted() throws Interrupted,
// which main() reports as "interrupted" with exit status 128 + signal (130, 143). Outputs are
// temporaries until their commit(), so nothing is written. A repeat within 0.2 s of the first is the
// same event delivered twice (`timeout`, Slurm and other supervisors signal the process and then
// its process group) and is ignored; a later second signal gets the default action (immediate
// termination; the target paths are still untouched, a temporary may remain). The scope also ignores SIGXFSZ, so
// that exceeding a file-size limit (ulimit -f) is a write error (exit 74, temporaries removed)
// instead of a kill that would leave a temporary behind. One scope at a time (the process's
// handlers are global); the previous handlers come back when it ends.
class InterruptScope {
 public:
  InterruptScope();
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;
};

// The signal recorded by the live InterruptScope (SIGINT, SIGTERM), 0 when none.
int interrupt_signal();

// Thrown by throw_if_interrupted(); main() turns it into exit status 128 + signal.
struct Interrupted {
  int signal;
};

// Throws Interrupted when a signal was recorded. Call it before each commit().
void throw_if_interrupted();

}  // namespace gw::cli
