#include "output_set.h"

#include <system_error>

namespace gw::cli {

void OutputSet::add(std::string path, std::function<void()> commit) {
  entries_.push_back({std::move(path), std::move(commit)});
}

void OutputSet::commit_all() {
  std::size_t done = 0;
  try {
    for (; done < entries_.size(); ++done) entries_[done].commit();
  } catch (...) {
    // The renamed files replaced whatever was there; removing them is the closest to "nothing
    // written" a rename-based commit can offer.
    for (std::size_t e = 0; e < done; ++e) {
      std::error_code ignored;
      std::filesystem::remove(entries_[e].path, ignored);
    }
    throw;
  }
}

}  // namespace gw::cli
