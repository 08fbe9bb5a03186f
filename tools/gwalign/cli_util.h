// Pieces the gwalign subcommands share: the solver flags and the one function that maps them onto
// gw::Options, the progress display, error context for messages that name a file, and an atomic
// text-file writer for JSON reports.
#pragma once

#include <cxxopts.hpp>

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/progress.h"
#include "solver/options.h"
#include "solver/problem.h"

namespace gw::cli {

// Declares the solver flags (group "Solver"), each defaulting to the value of a default-constructed
// gw::Options, so --help shows the library's current defaults:
//   --mode auto|precomputed|dijkstra|landmark  --knn  --landmarks  --M  --eps  --eps-final
//   --eps-decay-iter  --alpha  --max-iter  --min-iter  --tol  --check-every  --plateau-improvement
//   --plateau-patience  --sinkhorn-max-iter  --sinkhorn-tol  --lambda-ema  --fused-weight  --rho-a
//   --rho-b  --partial-mass  --no-slack  --init product|profiles  --multiscale  --multiscale-size
//   --precision f32|f64  --backend cpu|cuda  --device  --threads  --seed  --top-k  --dense
//   --no-loss  --loss-anchors  --support auto|dense|sparse  --memory-limit  --support-size
//   --support-cells  --support-regrow-every
void add_solver_options(cxxopts::Options& options);

// The flags of add_solver_options as gw::Options (plan format: top-k CSR unless --dense).
// Throws gw::Error(kInvalidArgument) naming the flag for an unknown enum name or a value the
// library rejects (Options::is_valid), so a bad flag fails before any file is read.
Options solver_options_from_flags(const cxxopts::ParseResult& flags);

// A byte count from a flag: a non-negative number with an optional K, M, G or T suffix (powers of
// 1024). Throws kInvalidArgument naming `flag` otherwise.
std::size_t parse_byte_size(const std::string& text, std::string_view flag);

// Usage errors (kInvalidArgument, exit 64) for solver flags that another flag makes inert, e.g.
// --top-k with --dense, --device with --backend cpu, --multiscale-size without --multiscale,
// --landmarks with --mode precomputed. Only flags given on the command line are checked (a
// default never conflicts). Called by solver_options_from_flags; Options::is_valid covers the
// combinations a library caller can make too (restarts, partial mass without slack).
void check_inert_flags(const cxxopts::ParseResult& flags, const Options& options);

// Usage errors for geometry flags that the loaded inputs make inert: --knn when neither side is a
// point cloud; --mode, --landmarks, --dijkstra-cache-mb, --precomputed-max-nodes when both sides
// are given as distances (or features only, with --fused-weight 1).
void check_geometry_flags(const cxxopts::ParseResult& flags,
                          Geometry::Kind source,
                          Geometry::Kind target);

// Shortest text that reads back as exactly `value` ("0.001", "1e-05", "inf").
std::string format_number(double value);

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

// Runs `fn`; a gw::Error escaping it is re-thrown with the same code and "<context>: " in front of
// its message, so a library message ("negative weight at edge 3") names the user's file and
// dataset. `context` is built only on failure.
template <typename Fn>
decltype(auto) with_context(const std::function<std::string()>& context, Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const Error& e) {
    throw Error(e.code(), context() + ": " + e.what());
  }
}

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

// A text file written atomically: the text goes to a temporary file in the target's directory,
// created by the constructor (so an unwritable directory fails before any work, with
// ErrorCode::kCannotCreate; the name has a random part, so a stale temporary of a killed run is
// skipped, io/temp_file.h), and commit() renames it onto the target. Destroyed without commit():
// the temporary is removed. `path` "-" means stdout (nothing temporary; write() prints).
//
// A command with several outputs calls write() on each text file before committing any output,
// and commit() last, so that a failed write (a full disk) leaves every target as it was.
class AtomicTextFile {
 public:
  explicit AtomicTextFile(std::string path);
  ~AtomicTextFile();
  AtomicTextFile(const AtomicTextFile&) = delete;
  AtomicTextFile& operator=(const AtomicTextFile&) = delete;

  const std::string& path() const { return path_; }
  // Writes `text` (and a final newline if it lacks one) to the temporary, fsyncs it, and checks
  // that the target is still no directory, so that commit() is left only the rename. "-": prints
  // and flushes stdout. kIo on a write failure (the temporary is then removed); once only.
  void write(std::string_view text);
  // Renames the written temporary onto path() (kCannotCreate on failure); nothing for "-".
  void commit();
  // write(text), then commit().
  void commit(std::string_view text);

 private:
  std::string path_;
  std::string temp_;
  bool written_ = false;
};

// Two paths name the same file: the same device and inode when both exist (hard links, symbolic
// links, "./a" vs "a"), else the same absolute path once the existing part is resolved (so an
// output and a report that do not exist yet are compared too).
bool same_file(const std::string& a, const std::string& b);

// An input file of a command and what named it ("SOURCE", "--source-weights").
struct InputFile {
  std::string path;
  std::string named_by;
};

// The file that a matrix or vector spec of `gwalign align` reads: FILE of "FILE:/path", else
// `default_file` (X, obsm:KEY, obsp:KEY, layers:KEY, /path, obs:COL). A spec that does not parse
// names no other file (its error is reported, with its flag, when the input is read).
std::string spec_file(const std::string& default_file, const std::string& spec);

// Checks an output path before any input is read or any output created: kCannotCreate (73) when it
// names a directory (an existing one, or a name ending in '/'); kInvalidArgument (64) when it is
// the same file (same_file) as one of `inputs`, since writing it would replace that input. `flag`
// names the output in messages ("-o", "--report"); `hint` is appended to the same-file message.
void check_output_path(const std::string& path,
                       std::string_view flag,
                       const std::vector<InputFile>& inputs,
                       std::string_view hint = "");

}  // namespace gw::cli
