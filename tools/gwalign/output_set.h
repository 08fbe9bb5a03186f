// Several output files that appear together or not at all (`gwalign slices`, `gwalign generate
// tissue`): each H5adWriter / AtomicTextFile already writes to a temporary and renames on commit;
// commit_all() renames them in turn and, when one rename fails, removes the outputs this call had
// already renamed into place (so a failed run leaves the directory as it found it, short of a crash
// between two renames).
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace gw::cli {

class OutputSet {
 public:
  // Registers an output: `path` is where it lands, `commit` renames it there.
  void add(std::string path, std::function<void()> commit);
  // Commits every output in order; rethrows the first failure after removing what was committed.
  void commit_all();

 private:
  struct Entry {
    std::string path;
    std::function<void()> commit;
  };
  std::vector<Entry> entries_;
};

}  // namespace gw::cli
