// AtomicTextFile and same_file (atomic_text_file.h).
#include "io/atomic_text_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "io/temp_file.h"

namespace gw::io {

AtomicTextFile::AtomicTextFile(std::string path) : path_(std::move(path)) {
  if (path_ == "-") return;
  namespace fs = std::filesystem;
  const fs::path target(path_);
  std::error_code ec;
  GW_CHECK_CODE(target.has_filename() && !fs::is_directory(fs::status(target, ec)),
                ErrorCode::kCannotCreate,
                "cannot create '" << path_ << "': it is a directory; give a file name");
  temp_ = create_temp_file(path_);
}

AtomicTextFile::~AtomicTextFile() {
  if (!temp_.empty()) std::remove(temp_.c_str());
}

void AtomicTextFile::write(std::string_view text) {
  GW_CHECK(!written_, "AtomicTextFile::write called twice for '" << path_ << "'");
  written_ = true;
  const bool add_newline = text.empty() || text.back() != '\n';
  if (path_ == "-") {
    // A report on stdout is output like a file: a full disk or a closed pipe behind it is an
    // error, not a silent exit 0 (the stream's state is only known once flushed).
    errno = 0;
    std::cout << text;
    if (add_newline) std::cout << "\n";
    std::cout.flush();
    const int err = errno;
    GW_CHECK_CODE(std::cout.good(),
                  ErrorCode::kIo,
                  "cannot write the report to stdout ("
                      << (err != 0 ? std::strerror(err) : "write error")
                      << "); redirect it to a file with space, or give --report FILE");
    return;
  }
  GW_CHECK(!temp_.empty(), "AtomicTextFile::write after commit for '" << path_ << "'");
  const int fd = ::open(temp_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  int err = fd >= 0 ? 0 : errno;
  const auto put = [&](std::string_view bytes) {
    std::size_t done = 0;
    while (err == 0 && done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        err = n < 0 ? errno : EIO;
      } else {
        done += static_cast<std::size_t>(n);
      }
    }
  };
  put(text);
  if (add_newline) put("\n");
  if (err == 0 && ::fsync(fd) != 0) err = errno;
  // close() is where some file systems (NFS) report a failed write back.
  if (fd >= 0 && ::close(fd) != 0 && err == 0) err = errno;
  if (err != 0) {
    std::remove(temp_.c_str());
    temp_.clear();
    GW_THROW(ErrorCode::kIo,
             "cannot write '" << path_ << "': " << std::strerror(err)
                              << "; free disk space or choose another path");
  }
  // rename(2) onto a directory fails. A directory made at the target during the run is the one
  // rename failure a user causes, so it is found here, while the caller's other outputs are still
  // temporaries, rather than in commit() after they were renamed.
  std::error_code ec;
  GW_CHECK_CODE(!std::filesystem::is_directory(std::filesystem::status(path_, ec)),
                ErrorCode::kCannotCreate,
                "cannot create '" << path_ << "': it is a directory; give a file name");
}

void AtomicTextFile::commit() {
  GW_CHECK(written_, "AtomicTextFile::commit before write for '" << path_ << "'");
  if (path_ == "-") return;
  GW_CHECK(!temp_.empty(), "AtomicTextFile::commit called twice for '" << path_ << "'");
  if (std::rename(temp_.c_str(), path_.c_str()) != 0) {
    const int err = errno;
    GW_THROW(ErrorCode::kCannotCreate,
             "cannot rename '" << temp_ << "' to '" << path_ << "': " << std::strerror(err));
  }
  temp_.clear();
}

void AtomicTextFile::commit(std::string_view text) {
  write(text);
  commit();
}

bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool both_exist = fs::exists(a, ec) && fs::exists(b, ec);
  if (both_exist) return fs::equivalent(a, b, ec) && !ec;
  // Not both there yet (e.g. -o and --report both new): the same place after resolving the part
  // of each path that exists.
  const fs::path ca = fs::weakly_canonical(fs::absolute(a, ec), ec);
  if (ec) return false;
  const fs::path cb = fs::weakly_canonical(fs::absolute(b, ec), ec);
  return !ec && ca.lexically_normal() == cb.lexically_normal();
}

}  // namespace gw::io
