// The progress line of a solve on stderr (gwalign align, pairwise, slices).
#pragma once

#include <string_view>

#include "core/progress.h"

namespace gw::cli {

// Progress of a solve on stderr. On a terminal: one line rewritten in place (iteration, cost,
// epsilon, elapsed, an ETA bound from the iteration limit). Otherwise: a line every `log_every`
// iterations (0: none). `quiet` silences both. Not thread-safe; the solver calls it from its
// orchestrating thread only.
class ProgressDisplay {
 public:
  ProgressDisplay(bool quiet, int log_every);
  ~ProgressDisplay();
  ProgressDisplay(const ProgressDisplay&) = delete;
  ProgressDisplay& operator=(const ProgressDisplay&) = delete;

  // The callback for Options::progress: cancels the solve once an InterruptScope has recorded a
  // signal, never otherwise. Valid while *this lives.
  ProgressCallback callback();
  // A short status ("building distances") shown on the terminal line; nothing when not a terminal.
  void status(std::string_view text);
  // Ends the terminal line (clears it), so later output starts on a fresh line.
  void finish();

 private:
  void on_progress(const Progress& progress);
  bool quiet_;
  bool tty_;
  int log_every_;
  int last_logged_ = 0;
  int last_level_ = 1;
  bool line_shown_ = false;
};

}  // namespace gw::cli
