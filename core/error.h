// gw::Error and the checking macros every module uses.
//
// Misuse (shape mismatch, out-of-range id, bad file) throws gw::Error through GW_CHECK / GW_THROW.
// Numerical outcomes (no convergence, NaN in an iterate) are not errors: they are reported in the
// result objects. Internal invariants use GW_ASSERT, compiled out in release builds.
//
// The message is one line meant for a user: it names the input (file, dataset, field, argument)
// and, where one exists, the fix. The source location is kept separately (Error::location()) so
// the CLI can print the message alone and a debugger or log can print both.
#pragma once

#include <cassert>
#include <cmath>
#include <cstddef>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gw {

// What went wrong, coarsely; each code maps onto a sysexits(3) exit status for the CLI.
enum class ErrorCode {
  kInvalidArgument,  // an argument or option is wrong (EX_USAGE 64)
  kBadData,          // input data is malformed: NaN, wrong shape, negative weight (EX_DATAERR 65)
  kNotFound,         // a file, dataset or key does not exist (EX_NOINPUT 66)
  kUnsupported,      // a valid but unsupported input, e.g. an HDF5 filter (EX_DATAERR 65)
  kNotCompiled,      // a backend or feature not compiled into this build (EX_UNAVAILABLE 69)
  kInternal,         // a bug in gwalign (EX_SOFTWARE 70)
  kCannotCreate,     // an output file cannot be created (EX_CANTCREAT 73)
  kIo,               // an I/O error while reading or writing (EX_IOERR 74)
};

// "invalid argument", "bad data", ...
std::string_view to_string(ErrorCode code);

// The sysexits-style process exit status for an error code (see ErrorCode).
int exit_code(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, std::string message, const char* file = "", int line = 0);

  ErrorCode code() const noexcept { return code_; }
  // "core/error.cpp:12" (empty when unknown).
  const std::string& location() const noexcept { return location_; }

 private:
  ErrorCode code_;
  std::string location_;
};

namespace detail {
// Throws Error(code, message, file, line). Out of line so the macros stay small at call sites.
[[noreturn]] void throw_error(ErrorCode code,
                              const std::string& message,
                              const char* file,
                              int line);
}  // namespace detail

}  // namespace gw

// GW_THROW(code, stream-expression): throws gw::Error. The message is built with operator<<:
//   GW_THROW(gw::ErrorCode::kNotFound, "file '" << path << "' does not exist");
#define GW_THROW(code, msg)                                                        \
  do {                                                                             \
    std::ostringstream gw_error_stream_;                                           \
    gw_error_stream_ << msg;                                                       \
    ::gw::detail::throw_error((code), gw_error_stream_.str(), __FILE__, __LINE__); \
  } while (0)

// GW_CHECK(cond, msg): misuse by the caller -> ErrorCode::kInvalidArgument.
#define GW_CHECK(cond, msg)                                        \
  do {                                                             \
    if (!(cond)) GW_THROW(::gw::ErrorCode::kInvalidArgument, msg); \
  } while (0)

// GW_CHECK_CODE(cond, code, msg): same, with an explicit error code.
#define GW_CHECK_CODE(cond, code, msg)  \
  do {                                  \
    if (!(cond)) GW_THROW((code), msg); \
  } while (0)

// GW_ASSERT(cond): an internal invariant; checked in debug builds only.
#define GW_ASSERT(cond) assert(cond)

namespace gw {

// Throws ErrorCode::kBadData naming `what` and the first offending position if any value of
// `values` is NaN or +-Inf. `what` is the user-facing name of the array ("points of source.h5").
template <typename T>
void check_all_finite(std::span<const T> values, std::string_view what) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) {
      GW_THROW(ErrorCode::kBadData,
               what << " has a non-finite value (" << values[i] << ") at flat position " << i
                    << "; remove or impute NaN/Inf entries first");
    }
  }
}

}  // namespace gw
