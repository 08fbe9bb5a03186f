#include "huge_pages.h"

#include <gnu/libc-version.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>

namespace gw::cli {

namespace {

constexpr const char* kTunable = "glibc.malloc.hugetlb";

// hugetlb=1: malloc advises huge pages on its heaps and large chunks. A chunk mapped on its own
// (above the mmap threshold, 128 KiB to start with) is rarely 2 MiB-aligned, so a 1-2 MiB matrix
// still faulted in 4 KiB at a time: chunks up to 32 MiB (glibc's largest threshold on 64-bit) come
// from the heap instead, which grows 64 MiB at a time (top_pad) and keeps up to 256 MiB of freed
// memory for the next allocation (trim_threshold). On the 400 x 500 exact solve that took its
// setup from 20 to 2.5 ms; the spiral 2,000 x 2,500 benchmark's peak RSS grew 4% (552 -> 574 MiB).
constexpr std::pair<const char*, const char*> kSettings[] = {
    {"glibc.malloc.hugetlb", "1"},
    {"glibc.malloc.mmap_threshold", "33554432"},
    {"glibc.malloc.top_pad", "67108864"},
    {"glibc.malloc.trim_threshold", "268435456"},
};

bool glibc_has_hugetlb_tunable() {
  int major = 0, minor = 0;
  if (std::sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 35);
}

// "always [madvise] never": the bracketed word is the mode.
bool kernel_offers_huge_pages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!in || !std::getline(in, line)) return false;
  return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
}

}  // namespace

bool malloc_uses_huge_pages() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables == nullptr) return false;
  const char* at = std::strstr(tunables, kTunable);
  if (at == nullptr) return false;
  const char* value = at + std::strlen(kTunable);
  return *value == '=' && (value[1] == '1' || value[1] == '2');
}

void reexec_with_huge_pages(char** argv) {
  const char* choice = std::getenv("GWALIGN_HUGE_PAGES");
  if (choice != nullptr && std::strcmp(choice, "0") == 0) return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && std::strstr(tunables, kTunable) != nullptr) return;
  if (!glibc_has_hugetlb_tunable() || !kernel_offers_huge_pages()) return;
  const std::string previous = tunables != nullptr ? tunables : "";
  std::string value = previous;
  for (const auto& [name, setting] : kSettings) {
    if (previous.find(name) != std::string::npos) continue;  // the user's own setting stands
    value += (value.empty() ? "" : ":") + std::string(name) + "=" + setting;
  }
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);
  // The exec failed (no /proc, say): carry on unchanged.
  if (previous.empty()) {
    unsetenv("GLIBC_TUNABLES");
  } else {
    setenv("GLIBC_TUNABLES", previous.c_str(), 1);
  }
}

}  // namespace gw::cli
