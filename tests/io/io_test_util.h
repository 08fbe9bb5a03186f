// Helpers for the io tests: scratch directories, seeded random arrays, running the Python side.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "io/hdf5.h"

namespace gw::io::test {

// A fresh directory under the system temp dir, removed (with its contents) on destruction.
class TempDir {
 public:
  TempDir() {
    static int counter = 0;
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = "gwalign-io";
    if (info != nullptr) name += std::string("-") + info->test_suite_name() + "-" + info->name();
    path_ = std::filesystem::temp_directory_path() /
            (name + "-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::permissions(path_, std::filesystem::perms::owner_all, ignored);
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }
  // Names of the entries of the directory (hidden ones included).
  std::vector<std::string> entries() const {
    std::vector<std::string> names;
    for (const auto& entry : std::filesystem::directory_iterator(path_)) {
      names.push_back(entry.path().filename().string());
    }
    return names;
  }

 private:
  std::filesystem::path path_;
};

template <typename T>
std::vector<T> random_values(Rng& rng, std::size_t n) {
  std::vector<T> values(n);
  for (T& v : values) {
    if constexpr (std::is_floating_point_v<T>) {
      v = static_cast<T>(rng.normal());
    } else {
      // The full range of T, extremes included.
      v = static_cast<T>(rng.next_u64());
    }
  }
  return values;
}

// A random CSR matrix with about `density` of its entries set, unsorted duplicates-free rows.
template <typename T>
CsrArray<T> random_csr(Rng& rng, std::int64_t rows, std::int64_t cols, double density) {
  CsrArray<T> csr;
  csr.rows = rows;
  csr.cols = cols;
  csr.indptr.push_back(0);
  for (std::int64_t i = 0; i < rows; ++i) {
    for (std::int64_t j = 0; j < cols; ++j) {
      if (rng.uniform() < density) {
        csr.indices.push_back(static_cast<Index>(j));
        csr.data.push_back(static_cast<T>(1.0 + rng.uniform() * 9.0));
      }
    }
    csr.indptr.push_back(static_cast<Offset>(csr.indices.size()));
  }
  return csr;
}

template <typename T>
std::vector<T> csr_to_dense(const CsrArray<T>& csr) {
  std::vector<T> dense(static_cast<std::size_t>(csr.rows * csr.cols), T{0});
  for (std::int64_t i = 0; i < csr.rows; ++i) {
    for (Offset p = csr.indptr[i]; p < csr.indptr[i + 1]; ++p) {
      dense[i * csr.cols + csr.indices[p]] += csr.data[p];
    }
  }
  return dense;
}

// Writes raw little-endian values (x86) for the Python side.
template <typename T>
void write_raw(const std::string& path, const std::vector<T>& values) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(T)));
  ASSERT_TRUE(out.good()) << "cannot write " << path;
}

template <typename T>
std::vector<T> read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  const std::streamsize bytes = in.tellg();
  in.seekg(0);
  std::vector<T> values(static_cast<std::size_t>(bytes) / sizeof(T));
  in.read(reinterpret_cast<char*>(values.data()), bytes);
  return values;
}

struct CommandResult {
  int status = -1;
  std::string output;
};

// Runs /usr/bin/python3 tests/io/interop_fixtures.py ARGS... and captures stdout + stderr.
inline CommandResult run_fixture(const std::vector<std::string>& args) {
  std::string command = "/usr/bin/python3 '" GW_SOURCE_DIR "/tests/io/interop_fixtures.py'";
  for (const std::string& arg : args) command += " '" + arg + "'";
  command += " 2>&1";
  CommandResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

// Whether Debian's python3-anndata can be imported by /usr/bin/python3 (checked once).
inline const CommandResult& anndata_check() {
  static const CommandResult result = run_fixture({"check-anndata"});
  return result;
}

#define GW_SKIP_WITHOUT_ANNDATA()                                                                 \
  do {                                                                                            \
    if (::gw::io::test::anndata_check().status != 0) {                                            \
      GTEST_SKIP() << "python3-anndata cannot be imported by /usr/bin/python3 (install Debian's " \
                      "python3-anndata): "                                                        \
                   << ::gw::io::test::anndata_check().output;                                     \
    }                                                                                             \
  } while (0)

// Runs `statement`, expecting a gw::Error with `code` whose message contains every fragment.
#define EXPECT_GW_ERROR(statement, expected_code, ...)                            \
  do {                                                                            \
    try {                                                                         \
      statement;                                                                  \
      ADD_FAILURE() << "expected gw::Error from: " #statement;                    \
    } catch (const ::gw::Error& error) {                                          \
      EXPECT_EQ(error.code(), expected_code) << error.what();                     \
      for (const std::string& fragment : std::vector<std::string>{__VA_ARGS__}) { \
        EXPECT_NE(std::string(error.what()).find(fragment), std::string::npos)    \
            << "message '" << error.what() << "' lacks '" << fragment << "'";     \
      }                                                                           \
    }                                                                             \
  } while (0)

}  // namespace gw::io::test
