#include "core/error.h"

#include <cstring>

namespace gw {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return "invalid argument";
    case ErrorCode::kBadData:
      return "bad data";
    case ErrorCode::kNotFound:
      return "not found";
    case ErrorCode::kUnsupported:
      return "unsupported";
    case ErrorCode::kNotCompiled:
      return "not compiled";
    case ErrorCode::kInternal:
      return "internal error";
    case ErrorCode::kCannotCreate:
      return "cannot create output";
    case ErrorCode::kIo:
      return "i/o error";
  }
  return "error";
}

int exit_code(ErrorCode code) {
  // Values from sysexits.h, spelled out so the mapping is visible and portable.
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return 64;  // EX_USAGE
    case ErrorCode::kBadData:
    case ErrorCode::kUnsupported:
      return 65;  // EX_DATAERR
    case ErrorCode::kNotFound:
      return 66;  // EX_NOINPUT
    case ErrorCode::kNotCompiled:
      return 69;  // EX_UNAVAILABLE
    case ErrorCode::kInternal:
      return 70;  // EX_SOFTWARE
    case ErrorCode::kCannotCreate:
      return 73;  // EX_CANTCREAT
    case ErrorCode::kIo:
      return 74;  // EX_IOERR
  }
  return 1;
}

namespace {
std::string short_location(const char* file, int line) {
  if (file == nullptr || *file == '\0') return {};
  // Keep the path relative to the source tree: "graph/knn.cpp" rather than an absolute path.
  std::string_view path(file);
  for (std::string_view root : {"/core/",
                                "/graph/",
                                "/distances/",
                                "/sampling/",
                                "/sinkhorn/",
                                "/solver/",
                                "/cellgraph/",
                                "/io/",
                                "/tools/"}) {
    if (auto pos = path.rfind(root); pos != std::string_view::npos) {
      path = path.substr(pos + 1);
      break;
    }
  }
  return std::string(path) + ":" + std::to_string(line);
}
}  // namespace

Error::Error(ErrorCode code, std::string message, const char* file, int line)
    : std::runtime_error(std::move(message)), code_(code), location_(short_location(file, line)) {}

namespace detail {
void throw_error(ErrorCode code, const std::string& message, const char* file, int line) {
  throw Error(code, message, file, line);
}
}  // namespace detail

}  // namespace gw
