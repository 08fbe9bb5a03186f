// Run-time instruction-set dispatch of the hot CPU kernels.
//
// A plain build (no -march flags, what every packager ships) compiles each hot kernel several
// times, once per x86-64 target below, and picks one at run time from the CPU's features. The rest
// of the library is compiled for the build's default target. On other architectures (aarch64)
// only kBaseline exists: the portable kernels compiled with the build's flags.
//
//   kBaseline  x86-64-v2 (SSE4.2, POPCNT)           the portable kernels on other architectures
//   kAvx2      x86-64-v3 (AVX2, FMA, BMI2, F16C)
//   kAvx512    x86-64-v4 (AVX-512 F/BW/CD/DQ/VL)
//
// Which target runs: the environment variable GWALIGN_ISA (baseline | avx2 | avx512), read once at
// the first call of active_isa(), or the best target the CPU supports. A forced target the CPU
// lacks is an error naming the variable, never an illegal-instruction crash. set_active_isa()
// switches targets at run time (tests loop over every supported target this way).
//
// Results: for a given target, backend and thread count, every kernel is bitwise reproducible.
// Across targets results may differ in the last bits (fused multiply-adds, vector widths and so
// summation orders differ); every target is tested against the same reference oracles.
//
// Thread-safety: all functions are safe to call concurrently. set_active_isa() takes effect for
// kernel calls that start after it returns; switching while another thread is inside a solve gives
// that solve a mix of targets (each correct, but no longer bitwise reproducible).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gw {

enum class Isa {
  kBaseline,
  kAvx2,
  kAvx512,
};

// "baseline", "avx2", "avx512".
const char* to_string(Isa isa);
// Parses the names above; std::nullopt for anything else.
std::optional<Isa> isa_from_string(std::string_view name);

// The targets this build compiled kernels for (kBaseline only off x86-64).
std::vector<Isa> compiled_isas();
// True when `isa` was compiled and the CPU (and the OS, for the wide registers) supports it.
bool isa_supported(Isa isa);
// Every supported target, lowest first.
std::vector<Isa> supported_isas();
// The highest supported target.
Isa best_isa();

// The target the kernels use. The first call reads GWALIGN_ISA; an unknown or unsupported value
// throws gw::Error (kInvalidArgument) naming the variable, the value and the supported targets,
// and so does every later call until set_active_isa() picks a valid one.
Isa active_isa();
// Makes `isa` the active target; throws gw::Error (kInvalidArgument) if it is not supported.
void set_active_isa(Isa isa);

// One line for reports: e.g. "avx512 (x86-64-v4; best supported: avx512; forced by GWALIGN_ISA)".
std::string isa_description();

// The name of the environment variable that forces a target.
inline constexpr const char* kIsaEnvironmentVariable = "GWALIGN_ISA";

// Sets the active target for the lifetime of the object and restores the previous one (tests).
class ScopedIsa {
 public:
  explicit ScopedIsa(Isa isa);
  ~ScopedIsa();
  ScopedIsa(const ScopedIsa&) = delete;
  ScopedIsa& operator=(const ScopedIsa&) = delete;

 private:
  Isa previous_;
};

namespace detail {
// Test hooks. Caps what isa_supported() reports at `cap` (std::nullopt: no cap), as if the CPU
// lacked every higher target; and forgets the active target so that the next active_isa() reads
// GWALIGN_ISA again.
void cap_cpu_isa_for_testing(std::optional<Isa> cap);
void reset_active_isa_for_testing();
}  // namespace detail

}  // namespace gw
