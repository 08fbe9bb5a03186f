// Text outputs written atomically (JSON reports, CSV tables): a temporary beside the target,
// renamed onto it once everything is written, so a failed or interrupted run leaves the previous
// file as it was. No HDF5 involved (io::Writer does the same for HDF5 outputs).
#pragma once

#include <string>
#include <string_view>

namespace gw::io {

// A text file written atomically: the text goes to a temporary file in the target's directory,
// created by the constructor (so an unwritable directory fails before any work, with
// ErrorCode::kCannotCreate; the name has a random part, so a stale temporary of a killed run is
// skipped, temp_file.h), and commit() renames it onto the target. Destroyed without commit():
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

}  // namespace gw::io
