// Helpers of the CLI tests: run the built gwalign binary (GW_CLI_BINARY, set by CMake from
// $<TARGET_FILE:gwalign_cli>) and /usr/bin/python3, and pick numbers out of a JSON report.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "test_util.h"

namespace gw::cli::test {

struct RunResult {
  int status = -1;  // exit status (-1: did not exit normally)
  std::string out;  // stdout
  std::string err;  // stderr
};

inline std::string quote(const std::string& arg) {
  std::string quoted = "'";
  for (char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `program args...` with stdin from /dev/null; stdout and stderr are captured separately
// (stderr through a file in `scratch`, so that stderr is never a terminal).
inline RunResult run_program(const std::string& program,
                             const std::vector<std::string>& args,
                             const std::filesystem::path& scratch) {
  static int counter = 0;
  std::string err_name = ".stderr-";
  err_name += std::to_string(counter++);
  const std::string err_file = (scratch / err_name).string();
  std::string command = quote(program);
  for (const auto& arg : args) {
    command += ' ';
    command += quote(arg);
  }
  command += " </dev/null 2>";
  command += quote(err_file);
  RunResult result;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return result;
  char buffer[4096];
  std::size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.out.append(buffer, n);
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.err = read_text(err_file);
  std::filesystem::remove(err_file);
  return result;
}

// The gwalign binary under test. ctest runs several tests at once on a machine others share, so
// each child's OpenMP threads are often oversubscribed; libgomp's default spin-waiting then slows
// a 1 s alignment to 30 s. Passive waiting (unless the caller chose a policy) keeps the suite's
// duration reasonable; the tests assert results, never times.
inline RunResult gwalign(const std::vector<std::string>& args,
                         const std::filesystem::path& scratch) {
  ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
  return run_program(GW_CLI_BINARY, args, scratch);
}

// A bundled input file under data/.
inline std::string data_file(const std::string& name) {
  return std::string(GW_SOURCE_DIR) + "/data/" + name;
}

// JSON printed by the CLI (a report, `bench --json`), parsed with nlohmann::json: the first JSON
// value of `text` (a report on stdout is followed by the run's summary lines). A text that does
// not start with valid JSON fails the calling test (the parse error propagates as an exception).
inline nlohmann::ordered_json parse_json(const std::string& text) {
  std::istringstream in(text);
  nlohmann::ordered_json value;
  in >> value;
  return value;
}

// The value of the first member named `key`, searched depth first in document order (nullptr when
// absent).
inline const nlohmann::ordered_json* json_find(const nlohmann::ordered_json& json,
                                               const std::string& key) {
  if (json.is_object()) {
    for (auto it = json.begin(); it != json.end(); ++it) {
      if (it.key() == key) return &it.value();
      if (const auto* found = json_find(it.value(), key)) return found;
    }
  } else if (json.is_array()) {
    for (const auto& element : json) {
      if (const auto* found = json_find(element, key)) return found;
    }
  }
  return nullptr;
}

// The number named `key` in a JSON text; NaN when absent or null (the report writes +inf and NaN
// as null). A member of another type fails the calling test.
inline double json_number(const std::string& text, const std::string& key) {
  const nlohmann::ordered_json json = parse_json(text);
  const auto* value = json_find(json, key);
  if (value == nullptr || value->is_null()) return std::nan("");
  EXPECT_TRUE(value->is_number()) << "'" << key << "' is not a number: " << value->dump();
  return value->is_number() ? value->get<double>() : std::nan("");
}

// The string named `key` in a JSON text (empty when absent; a member of another type fails the
// calling test).
inline std::string json_string(const std::string& text, const std::string& key) {
  const nlohmann::ordered_json json = parse_json(text);
  const auto* value = json_find(json, key);
  if (value == nullptr) return "";
  EXPECT_TRUE(value->is_string()) << "'" << key << "' is not a string: " << value->dump();
  return value->is_string() ? value->get<std::string>() : "";
}

// Names in a directory, sorted, hidden ones included (temporary files start with '.').
inline std::vector<std::string> directory_entries(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// gwalign started in the background (fork + exec), for tests that act while it runs: signal it,
// change its output directory, or (held) prepare files named after its pid before it starts.
// stdin is /dev/null; stdout and stderr go to files in `scratch`. A child still running when the
// object is destroyed is killed and reaped.
class BackgroundRun {
 public:
  BackgroundRun(const std::vector<std::string>& args,
                const std::filesystem::path& scratch,
                bool held = false) {
    static int counter = 0;
    const int id = counter++;
    out_file_ = (scratch / (".bg-stdout-" + std::to_string(id))).string();
    err_file_ = (scratch / (".bg-stderr-" + std::to_string(id))).string();
    ::setenv("OMP_WAIT_POLICY", "passive", /*overwrite=*/0);
    std::vector<std::string> storage = {GW_CLI_BINARY};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& arg : storage) argv.push_back(arg.data());
    argv.push_back(nullptr);
    int gate[2] = {-1, -1};
    if (held && ::pipe(gate) != 0) return;
    pid_ = ::fork();
    if (pid_ == 0) {
      // Only async-signal-safe calls between fork and exec.
      const int in = ::open("/dev/null", O_RDONLY);
      const int out = ::open(out_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err = ::open(err_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (in < 0 || out < 0 || err < 0) ::_exit(127);
      ::dup2(in, 0);
      ::dup2(out, 1);
      ::dup2(err, 2);
      if (held) {
        ::close(gate[1]);
        char byte;
        while (::read(gate[0], &byte, 1) < 0) {
        }
        ::close(gate[0]);
      }
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    if (held) {
      ::close(gate[0]);
      gate_ = gate[1];
    }
  }
  ~BackgroundRun() {
    release();
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::filesystem::remove(out_file_);
    std::filesystem::remove(err_file_);
  }
  BackgroundRun(const BackgroundRun&) = delete;
  BackgroundRun& operator=(const BackgroundRun&) = delete;

  pid_t pid() const { return pid_; }
  // Lets a held child exec gwalign.
  void release() {
    if (gate_ >= 0) ::close(gate_);
    gate_ = -1;
  }
  // Whether the child has exited (then wait() returns at once).
  bool finished() {
    if (pid_ <= 0 || status_ >= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    status_ = status;
    pid_ = -1;
    return true;
  }
  RunResult wait() {
    release();
    if (pid_ > 0) {
      int status = 0;
      ::waitpid(pid_, &status, 0);
      status_ = status;
      pid_ = -1;
    }
    RunResult result;
    result.status = status_ >= 0 && WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
    result.out = read_text(out_file_);
    result.err = read_text(err_file_);
    return result;
  }

 private:
  pid_t pid_ = -1;
  int gate_ = -1;
  int status_ = -1;
  std::string out_file_, err_file_;
};

// Waits (polling every millisecond, at most `limit`) for a name starting with `prefix` in `dir`;
// false when none appeared or `run` ended first.
inline bool wait_for_entry(const std::filesystem::path& dir,
                           const std::string& prefix,
                           BackgroundRun& run,
                           std::chrono::seconds limit = std::chrono::seconds(60)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline && !run.finished()) {
    for (const auto& name : directory_entries(dir)) {
      if (name.rfind(prefix, 0) == 0) return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// Whether /usr/bin/python3 can import anndata (checked once); the message says why not.
inline const RunResult& anndata_available() {
  static const RunResult result = [] {
    gw::test::ScratchDir scratch;
    return run_program("/usr/bin/python3",
                       {"-c", "import anndata, scipy.sparse; print(anndata.__version__)"},
                       scratch.path());
  }();
  return result;
}

}  // namespace gw::cli::test
