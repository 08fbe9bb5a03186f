// ProgressDisplay (progress_display.h).
#include "progress_display.h"

#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "interrupt.h"

namespace gw::cli {

ProgressDisplay::ProgressDisplay(bool quiet, int log_every)
    : quiet_(quiet), tty_(::isatty(STDERR_FILENO) == 1), log_every_(log_every) {
  GW_CHECK(log_every >= 0, "--log-every must be >= 0, got " << log_every);
}

ProgressDisplay::~ProgressDisplay() { finish(); }

ProgressCallback ProgressDisplay::callback() {
  return [this](const Progress& progress) {
    on_progress(progress);
    return interrupt_signal() == 0;
  };
}

void ProgressDisplay::status(std::string_view text) {
  if (quiet_ || !tty_) return;
  std::fprintf(stderr, "\r\x1b[Kgwalign: %.*s", static_cast<int>(text.size()), text.data());
  std::fflush(stderr);
  line_shown_ = true;
}

void ProgressDisplay::finish() {
  if (!line_shown_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  line_shown_ = false;
}

void ProgressDisplay::on_progress(const Progress& p) {
  if (quiet_) return;
  // The stopping rules usually end the run before max_iterations, so the ETA is an upper bound.
  const double per_iteration = p.iteration > 0 ? p.elapsed_seconds / p.iteration : 0.0;
  const double eta = per_iteration * std::max(0, p.max_iterations - p.iteration);
  char level[32] = "";
  if (p.levels > 1) std::snprintf(level, sizeof(level), "level %d/%d  ", p.level, p.levels);
  if (tty_) {
    std::fprintf(stderr,
                 "\r\x1b[Kgwalign: %siteration %d/%d  cost %.5g  eps %.3g  %.1f s  eta <= %.1f s",
                 level,
                 p.iteration,
                 p.max_iterations,
                 p.cost,
                 p.epsilon,
                 p.elapsed_seconds,
                 eta);
    std::fflush(stderr);
    line_shown_ = true;
    return;
  }
  if (p.level != last_level_) last_logged_ = 0;  // a new level counts its iterations from 1
  last_level_ = p.level;
  if (log_every_ > 0 && p.iteration - last_logged_ >= log_every_) {
    last_logged_ = p.iteration;
    std::fprintf(stderr,
                 "gwalign: %siteration %d/%d cost %.6g error %.3g eps %.4g elapsed %.3f s eta <= "
                 "%.1f s\n",
                 level,
                 p.iteration,
                 p.max_iterations,
                 p.cost,
                 p.error,
                 p.epsilon,
                 p.elapsed_seconds,
                 eta);
  }
}

}  // namespace gw::cli
