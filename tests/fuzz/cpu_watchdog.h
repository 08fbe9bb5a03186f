// A per-input CPU-time limit for a libFuzzer harness, finer than libFuzzer's own `-timeout`.
//
// Why: libFuzzer's timeout is a whole number of seconds, checked by a one-second alarm, so an
// input that loops forever costs 1-2 s before the child stops. The h5ad harness meets such loops
// inside Debian's HDF5 1.10 (a corrupt global-heap collection makes H5HG_read -> H5C_protect
// spin) more than once a second in fork mode, and they took about a third of a ten-minute run.
// This watchdog stops the input after `limit_ms` of the fuzzing thread's CPU time instead.
//
// What a stop looks like to libFuzzer and to scripts/fuzz.sh -- the same as libFuzzer's timeout:
// a line containing "ERROR: libFuzzer: timeout", the stack of the interrupted input (the
// sanitizer's symbolizer; the handler's own frames are named gw_fuzz_cpu_watchdog_* so that the
// triage's first-frame filter skips them), the input written to `<artifact_prefix>timeout-<hash>`,
// "stat::number_of_executed_units: N" (fork mode adds a child's executions from that line) and
// exit status 70, libFuzzer's default `-timeout_exitcode`, which `-ignore_timeouts=1` ignores.
//
// Off unless the environment names a limit (GW_FUZZ_CPU_LIMIT_MS, a positive number of
// milliseconds) when libFuzzer calls LLVMFuzzerInitialize; scripts/fuzz.sh sets it for the h5ad
// run and for the replay of that run's timeouts, and not for its 60-second "is it only slow"
// replay. The test suite's replays (replay_test.cpp) unset it before calling LLVMFuzzerInitialize,
// so they never arm it.
//
// Linux only (a POSIX timer on the thread's CPU clock, delivered to that thread). One input at a
// time, on the thread that called enable(); not for use from several threads.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>

// Defined by the sanitizer runtimes; absent (null) in a build without one.
extern "C" __attribute__((weak)) void __sanitizer_print_stack_trace();

namespace gw_fuzz {

struct CpuWatchdogState {
  timer_t timer{};
  bool enabled = false;
  long limit_ms = 0;
  char artifact_prefix[4096] = "./";
  const std::uint8_t* data = nullptr;  // the input being run
  std::size_t size = 0;
  std::size_t executions = 0;  // inputs started in this process
};

inline CpuWatchdogState& cpu_watchdog_state() {
  static CpuWatchdogState state;
  return state;
}

// Async-signal-safe output helpers (write(2) only).
inline void cpu_watchdog_write(int fd, const char* text, std::size_t length) {
  while (length > 0) {
    const ssize_t done = ::write(fd, text, length);
    if (done <= 0) return;
    text += done;
    length -= static_cast<std::size_t>(done);
  }
}
inline void cpu_watchdog_write(int fd, const char* text) {
  cpu_watchdog_write(fd, text, std::strlen(text));
}
inline void cpu_watchdog_write_number(int fd, std::size_t value, int base, int min_digits) {
  char digits[32];
  int count = 0;
  do {
    digits[count++] = "0123456789abcdef"[value % base];
    value /= base;
  } while (value > 0 || count < min_digits);
  char text[32];
  for (int i = 0; i < count; ++i) text[i] = digits[count - 1 - i];
  cpu_watchdog_write(fd, text, static_cast<std::size_t>(count));
}

}  // namespace gw_fuzz

extern "C" inline void gw_fuzz_cpu_watchdog_fired(int) {
  using namespace gw_fuzz;
  CpuWatchdogState& s = cpu_watchdog_state();
  cpu_watchdog_write(2, "==gw_fuzz_cpu_watchdog== ERROR: libFuzzer: timeout: the input used more than ");
  cpu_watchdog_write_number(2, static_cast<std::size_t>(s.limit_ms), 10, 1);
  cpu_watchdog_write(2, " ms of CPU time (GW_FUZZ_CPU_LIMIT_MS)\n");
  if (__sanitizer_print_stack_trace != nullptr) __sanitizer_print_stack_trace();
  // The artifact, named by a 64-bit FNV-1a hash of the input (libFuzzer uses SHA-1; any stable
  // name will do).
  std::uint64_t hash = 1469598103934665603ull;
  for (std::size_t i = 0; i < s.size; ++i) hash = (hash ^ s.data[i]) * 1099511628211ull;
  char path[4096 + 64];
  std::size_t length = std::strlen(s.artifact_prefix);
  std::memcpy(path, s.artifact_prefix, length);
  std::memcpy(path + length, "timeout-", 8);
  length += 8;
  for (int shift = 60; shift >= 0; shift -= 4) path[length++] = "0123456789abcdef"[(hash >> shift) & 15];
  path[length] = '\0';
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd >= 0) {
    cpu_watchdog_write(fd, reinterpret_cast<const char*>(s.data), s.size);
    ::close(fd);
    cpu_watchdog_write(2, "artifact_prefix='");
    cpu_watchdog_write(2, s.artifact_prefix);
    cpu_watchdog_write(2, "'; Test unit written to ");
    cpu_watchdog_write(2, path);
    cpu_watchdog_write(2, "\n");
  }
  cpu_watchdog_write(2, "stat::number_of_executed_units: ");
  cpu_watchdog_write_number(2, s.executions, 10, 1);
  cpu_watchdog_write(2, "\n");
  ::_exit(70);
}

namespace gw_fuzz {

// Reads GW_FUZZ_CPU_LIMIT_MS and libFuzzer's -artifact_prefix; arms nothing yet. Call from
// LLVMFuzzerInitialize with its arguments.
inline void enable_cpu_watchdog(int* argc, char*** argv) {
  CpuWatchdogState& s = cpu_watchdog_state();
  const char* limit = std::getenv("GW_FUZZ_CPU_LIMIT_MS");
  if (limit == nullptr || *limit == '\0') return;
  char* end = nullptr;
  const long ms = std::strtol(limit, &end, 10);
  if (*end != '\0' || ms <= 0) {
    cpu_watchdog_write(2, "GW_FUZZ_CPU_LIMIT_MS must be a positive whole number of milliseconds\n");
    std::exit(64);
  }
  const std::string flag = "-artifact_prefix=";
  for (int i = 1; argc != nullptr && argv != nullptr && i < *argc; ++i) {
    const std::string arg = (*argv)[i];
    if (arg.rfind(flag, 0) == 0 && arg.size() - flag.size() < sizeof(s.artifact_prefix)) {
      std::strcpy(s.artifact_prefix, arg.c_str() + flag.size());
    }
  }
  struct sigaction action {};
  action.sa_handler = gw_fuzz_cpu_watchdog_fired;
  sigemptyset(&action.sa_mask);
  if (sigaction(SIGRTMIN + 1, &action, nullptr) != 0) return;
  sigevent event{};
  event.sigev_notify = SIGEV_THREAD_ID;
  event.sigev_signo = SIGRTMIN + 1;
  event._sigev_un._tid = static_cast<pid_t>(::syscall(SYS_gettid));
  if (timer_create(CLOCK_THREAD_CPUTIME_ID, &event, &s.timer) != 0) return;
  s.limit_ms = ms;
  s.enabled = true;
}

// Arms the limit for one input; disarms when it goes out of scope.
class CpuWatchdogScope {
 public:
  CpuWatchdogScope(const std::uint8_t* data, std::size_t size) {
    CpuWatchdogState& s = cpu_watchdog_state();
    s.data = data;
    s.size = size;
    ++s.executions;
    if (!s.enabled) return;
    itimerspec spec{};
    spec.it_value.tv_sec = s.limit_ms / 1000;
    spec.it_value.tv_nsec = (s.limit_ms % 1000) * 1000000L;
    timer_settime(s.timer, 0, &spec, nullptr);
  }
  CpuWatchdogScope(const CpuWatchdogScope&) = delete;
  CpuWatchdogScope& operator=(const CpuWatchdogScope&) = delete;
  ~CpuWatchdogScope() {
    CpuWatchdogState& s = cpu_watchdog_state();
    if (!s.enabled) return;
    const itimerspec off{};
    timer_settime(s.timer, 0, &off, nullptr);
  }
};

}  // namespace gw_fuzz
