// Exclusive temporary files next to an output, for atomic writes (write the temporary, fsync,
// rename it onto the target). Used by io::Writer and the CLI's text outputs; no HDF5 involved.
#pragma once

#include <functional>
#include <string>

namespace gw::io {

// Creates a new, empty file `<dir>/.<name>.tmp-<pid>-<16 random hex digits>` beside `target`
// (`<dir>` is target's directory, `<name>` its file name) with O_CREAT | O_EXCL, mode 0666 less
// the umask, and returns its path. A name that already exists (a stale temporary left by a killed
// process, even one with the same pid, as in a container where every run is pid 1) is skipped
// for a fresh random one, up to kTempFileTries names. The caller owns the file: it renames it onto
// the target or removes it.
//
// Errors, ErrorCode::kCannotCreate, naming target and directory: the directory cannot be written
// (the OS's reason, e.g. "Permission denied"), or every name tried already existed. It does not
// check that the directory exists or that `target` is not a directory: callers that want those
// named separately check first (Writer does).
std::string create_temp_file(const std::string& target);

inline constexpr int kTempFileTries = 16;

namespace detail {
// create_temp_file with the random part of each name from `suffix` (called once per try), so
// that tests can make names collide.
std::string create_temp_file(const std::string& target, const std::function<std::string()>& suffix);
// 16 hex digits from std::random_device (falling back to the clock and a counter where the
// device is unavailable).
std::string random_temp_suffix();
}  // namespace detail

}  // namespace gw::io
