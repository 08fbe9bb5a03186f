// Exclusive temporary files beside an output (see temp_file.h).
#include "io/temp_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>

#include "core/error.h"

namespace gw::io {

namespace detail {

std::string random_temp_suffix() {
  std::uint64_t bits = 0;
  try {
    std::random_device device;
    bits = (static_cast<std::uint64_t>(device()) << 32) ^ device();
  } catch (const std::exception&) {
    // No entropy source: the clock and a counter still differ between tries and between runs,
    // which is all a retry needs (the names are not a security boundary: O_EXCL is).
    static std::atomic<std::uint64_t> counter{0};
    bits = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) *
               0x9E3779B97F4A7C15ull +
           counter.fetch_add(1);
  }
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(bits));
  return text;
}

std::string create_temp_file(const std::string& target,
                             const std::function<std::string()>& suffix) {
  namespace fs = std::filesystem;
  const fs::path path(target);
  const fs::path dir = path.parent_path();
  const std::string dir_text = dir.empty() ? std::string(".") : dir.string();
  const std::string prefix = (dir.empty() ? std::string() : dir.string() + "/") + "." +
                             path.filename().string() + ".tmp-" + std::to_string(::getpid()) + "-";
  // A pid alone does not make a name unique across runs (a container's entry point is always
  // pid 1), and a killed run leaves its temporary behind: a name that exists is skipped rather
  // than reported, with a random part so that the next try does not hit the same stale file.
  for (int attempt = 0; attempt < kTempFileTries; ++attempt) {
    std::string temp = prefix + suffix();
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0) {
      ::close(fd);
      return temp;
    }
    const int err = errno;
    if (err == EEXIST || err == EINTR) continue;
    GW_THROW(ErrorCode::kCannotCreate,
             "cannot create '" << target << "': cannot write in directory '" << dir_text << "' ("
                               << std::strerror(err) << "); choose a writable directory");
  }
  GW_THROW(ErrorCode::kCannotCreate,
           "cannot create '" << target << "': " << kTempFileTries << " temporary names '" << prefix
                             << "*' in directory '" << dir_text
                             << "' already existed; remove stale temporaries there");
}

}  // namespace detail

std::string create_temp_file(const std::string& target) {
  return detail::create_temp_file(target, detail::random_temp_suffix);
}

}  // namespace gw::io
