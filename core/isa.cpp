#include "core/isa.h"

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "core/config.h"
#include "core/error.h"

#if GW_ISA_MULTI_TARGET
#include <cpuid.h>
#endif

namespace gw {
namespace {

// Feature tests by CPUID and XGETBV rather than __builtin_cpu_supports: the x86-64-v3/v4 levels
// include features (MOVBE, LZCNT, F16C, AVX-512 BW/DQ/VL) that not every compiler's builtin knows,
// and the wide registers count only when the OS saves them (XCR0), which CPUID alone does not say.
struct CpuLevels {
  bool v2 = false;
  bool v3 = false;
  bool v4 = false;
};

#if GW_ISA_MULTI_TARGET
bool bit(unsigned value, int index) { return ((value >> index) & 1u) != 0; }

unsigned long long xcr0() {
  unsigned eax = 0, edx = 0;
  // xgetbv with ecx = 0, spelled as bytes so that no target attribute is needed.
  __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

CpuLevels detect_levels() {
  CpuLevels levels;
  unsigned eax, ebx, ecx1, edx;
  if (__get_cpuid(1, &eax, &ebx, &ecx1, &edx) == 0) return levels;
  unsigned ebx7 = 0, ecx7 = 0, edx7 = 0, eax7 = 0;
  __cpuid_count(7, 0, eax7, ebx7, ecx7, edx7);
  unsigned ecx_ext = 0, eax_ext = 0, ebx_ext = 0, edx_ext = 0;
  __get_cpuid(0x80000001u, &eax_ext, &ebx_ext, &ecx_ext, &edx_ext);

  const bool sse3 = bit(ecx1, 0), ssse3 = bit(ecx1, 9), fma = bit(ecx1, 12), cx16 = bit(ecx1, 13);
  const bool sse41 = bit(ecx1, 19), sse42 = bit(ecx1, 20), movbe = bit(ecx1, 22);
  const bool popcnt = bit(ecx1, 23), osxsave = bit(ecx1, 27), avx = bit(ecx1, 28);
  const bool f16c = bit(ecx1, 29);
  const bool bmi1 = bit(ebx7, 3), avx2 = bit(ebx7, 5), bmi2 = bit(ebx7, 8);
  const bool avx512f = bit(ebx7, 16), avx512dq = bit(ebx7, 17), avx512cd = bit(ebx7, 28);
  const bool avx512bw = bit(ebx7, 30), avx512vl = bit(ebx7, 31);
  const bool lahf = bit(ecx_ext, 0), lzcnt = bit(ecx_ext, 5);

  const unsigned long long state = osxsave ? xcr0() : 0;
  const bool os_ymm = (state & 0x6) == 0x6;    // SSE and AVX state
  const bool os_zmm = (state & 0xe6) == 0xe6;  // plus opmask, ZMM_Hi256, Hi16_ZMM

  levels.v2 = cx16 && lahf && popcnt && sse3 && sse41 && sse42 && ssse3;
  levels.v3 = levels.v2 && avx && avx2 && bmi1 && bmi2 && f16c && fma && lzcnt && movbe && os_ymm;
  levels.v4 = levels.v3 && avx512f && avx512bw && avx512cd && avx512dq && avx512vl && os_zmm;
  return levels;
}
#endif

const CpuLevels& cpu_levels() {
#if GW_ISA_MULTI_TARGET
  static const CpuLevels levels = detect_levels();
#else
  static const CpuLevels levels{};
#endif
  return levels;
}

const char* level_name(Isa isa) {
  switch (isa) {
    case Isa::kBaseline:
      return GW_ISA_MULTI_TARGET ? "x86-64-v2" : "portable";
    case Isa::kAvx2:
      return "x86-64-v3";
    case Isa::kAvx512:
      return "x86-64-v4";
  }
  return "?";
}

std::string supported_list() {
  std::string out;
  for (Isa isa : supported_isas()) {
    if (!out.empty()) out += ", ";
    out += to_string(isa);
  }
  return out.empty() ? std::string("none") : out;
}

// Test cap on the supported targets (-1: none).
std::atomic<int> g_cap{-1};

// The active target: -1 until the first active_isa() resolves it.
std::atomic<int> g_active{-1};
std::mutex g_init_mutex;
int g_forced = -1;  // the target GWALIGN_ISA asked for, -1 if none

}  // namespace

const char* to_string(Isa isa) {
  switch (isa) {
    case Isa::kBaseline:
      return "baseline";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "?";
}

std::optional<Isa> isa_from_string(std::string_view name) {
  if (name == "baseline") return Isa::kBaseline;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  return std::nullopt;
}

std::vector<Isa> compiled_isas() {
#if GW_ISA_MULTI_TARGET
  return {Isa::kBaseline, Isa::kAvx2, Isa::kAvx512};
#else
  return {Isa::kBaseline};
#endif
}

bool isa_supported(Isa isa) {
  const int cap = g_cap.load(std::memory_order_relaxed);
  if (cap >= 0 && static_cast<int>(isa) > cap) return false;
#if GW_ISA_MULTI_TARGET
  const CpuLevels& levels = cpu_levels();
  switch (isa) {
    case Isa::kBaseline:
      return levels.v2;
    case Isa::kAvx2:
      return levels.v3;
    case Isa::kAvx512:
      return levels.v4;
  }
  return false;
#else
  return isa == Isa::kBaseline;
#endif
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : compiled_isas()) {
    if (isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

Isa best_isa() {
  const std::vector<Isa> isas = supported_isas();
  GW_CHECK_CODE(!isas.empty(),
                ErrorCode::kUnsupported,
                "this CPU lacks x86-64-v2 (SSE4.2, POPCNT), the lowest target gwalign's kernels "
                "are compiled for; build with -DGWALIGN_NATIVE=ON on this machine instead");
  return isas.back();
}

Isa active_isa() {
  const int current = g_active.load(std::memory_order_acquire);
  if (current >= 0) return static_cast<Isa>(current);
  std::lock_guard<std::mutex> lock(g_init_mutex);
  if (g_active.load(std::memory_order_relaxed) >= 0) {
    return static_cast<Isa>(g_active.load(std::memory_order_relaxed));
  }
  Isa chosen = Isa::kBaseline;
  const char* forced = std::getenv(kIsaEnvironmentVariable);
  if (forced != nullptr && *forced != '\0') {
    const std::optional<Isa> parsed = isa_from_string(forced);
    GW_CHECK(parsed.has_value(),
             kIsaEnvironmentVariable << "=" << forced
                                     << " is not a target; use one of baseline, avx2, avx512 "
                                        "(supported here: "
                                     << supported_list() << "), or unset it");
    GW_CHECK(isa_supported(*parsed),
             kIsaEnvironmentVariable << "=" << forced << ": this "
                                     << (GW_ISA_MULTI_TARGET ? "CPU" : "build")
                                     << " does not support " << level_name(*parsed)
                                     << "; use one of: " << supported_list() << ", or unset it");
    chosen = *parsed;
    g_forced = static_cast<int>(chosen);
  } else {
    chosen = best_isa();
  }
  g_active.store(static_cast<int>(chosen), std::memory_order_release);
  return chosen;
}

void set_active_isa(Isa isa) {
  GW_CHECK(isa_supported(isa),
           "set_active_isa: target " << to_string(isa) << " (" << level_name(isa)
                                     << ") is not supported here; supported: " << supported_list());
  std::lock_guard<std::mutex> lock(g_init_mutex);
  g_active.store(static_cast<int>(isa), std::memory_order_release);
}

std::string isa_description() {
  const Isa isa = active_isa();
  std::ostringstream out;
  out << to_string(isa) << " (" << level_name(isa) << "; best supported: " << to_string(best_isa());
  {
    std::lock_guard<std::mutex> lock(g_init_mutex);
    if (g_forced == static_cast<int>(isa)) out << "; forced by " << kIsaEnvironmentVariable;
  }
  out << ")";
  return out.str();
}

namespace detail {
void cap_cpu_isa_for_testing(std::optional<Isa> cap) {
  g_cap.store(cap ? static_cast<int>(*cap) : -1, std::memory_order_relaxed);
}
void reset_active_isa_for_testing() {
  std::lock_guard<std::mutex> lock(g_init_mutex);
  g_active.store(-1, std::memory_order_release);
  g_forced = -1;
}
}  // namespace detail

ScopedIsa::ScopedIsa(Isa isa) : previous_(active_isa()) { set_active_isa(isa); }
ScopedIsa::~ScopedIsa() {
  // The previous target was supported when it was active; restoring it cannot fail.
  g_active.store(static_cast<int>(previous_), std::memory_order_release);
}

}  // namespace gw
