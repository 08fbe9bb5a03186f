// Replays a fuzz harness's committed inputs: the seed corpus (tests/fuzz/corpus/<target>/) and
// the inputs that once crashed it (tests/fuzz/regressions/<target>/, one file per fixed bug, named
// after it). Built with the ordinary toolchain as part of the test suite, so every harness stays
// compiled and every past crash is re-run by ctest (and under the sanitizer build of
// scripts/test.sh, which is where a regression would show as a report).
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
// Optional, as for libFuzzer: a harness that sets up limits (the h5ad harness's read budget and
// HDF5 free lists) defines it, and the replay runs under the same settings as the fuzzer.
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int* argc, char*** argv);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir)) return files;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().filename().string().front() != '.') {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Runs the harness's LLVMFuzzerInitialize once, before the first input (as libFuzzer does).
void initialize_once() {
  static const bool done = [] {
    // The replays are never cut short by the CPU-time watchdog (cpu_watchdog.h): a slow input
    // here is a test that runs long, not a finding.
    ::unsetenv("GW_FUZZ_CPU_LIMIT_MS");
    if (LLVMFuzzerInitialize != nullptr) {
      int argc = 1;
      char name[] = "replay";
      char* args[] = {name, nullptr};
      char** argv = args;
      LLVMFuzzerInitialize(&argc, &argv);
    }
    return true;
  }();
  (void)done;
}

void replay(const fs::path& file) {
  initialize_once();
  std::ifstream in(file, std::ios::binary);
  ASSERT_TRUE(in) << "cannot read " << file;
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)),
                                std::istreambuf_iterator<char>());
  // A failure is a crash, a sanitizer report, or an escaping exception: the harness returns 0.
  EXPECT_EQ(
      LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()), 0)
      << file;
}

const fs::path kFuzzDir = fs::path(GW_SOURCE_DIR) / "tests" / "fuzz";

TEST(FuzzReplay, EverySeedCorpusInputRunsCleanly) {
  const auto files = inputs_in(kFuzzDir / "corpus" / GW_FUZZ_CORPUS);
  ASSERT_FALSE(files.empty()) << "no seed corpus for " << GW_FUZZ_TARGET;
  for (const auto& file : files) replay(file);
}

TEST(FuzzReplay, EveryPastCrashInputRunsCleanly) {
  // Empty for a harness that never found a crash.
  for (const auto& file : inputs_in(kFuzzDir / "regressions" / GW_FUZZ_TARGET)) replay(file);
}

TEST(FuzzReplay, EmptyAndOneByteInputsRunCleanly) {
  initialize_once();
  for (int byte = 0; byte < 256; ++byte) {
    const auto value = static_cast<std::uint8_t>(byte);
    EXPECT_EQ(LLVMFuzzerTestOneInput(&value, 1), 0) << "byte " << byte;
  }
  EXPECT_EQ(LLVMFuzzerTestOneInput(nullptr, 0), 0);
}

}  // namespace
