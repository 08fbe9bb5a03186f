// What the gwalign subcommands share about their inputs and outputs: error context that names the
// user's file, the files a spec reads, and the checks of an output path against the inputs. The
// solver flags are in solver_flags.h, the progress line in progress_display.h, signals in
// interrupt.h, atomic text outputs in io/atomic_text_file.h.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace gw::cli {

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
