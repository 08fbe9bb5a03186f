// Private helpers for modules with per-target kernels (core/isa.h). Not installed.
//
// A module's kernels live in a file named *_isa.cpp, which the build compiles once per target
// (gwalign_add_isa_kernels() in cmake/GwalignHelpers.cmake) with -march for that target and
//   GW_ISA_NS = isa_baseline | isa_avx2 | isa_avx512   (the namespace its definitions go in),
//   Eigen     = gw_isa_<target>_eigen                  (Eigen's templates get a namespace per
//                                                       target too).
// Each compilation defines one table of function pointers, gw::GW_ISA_NS::<name>; the module's
// ordinary code declares the tables with GW_DECLARE_ISA_TABLE and calls through
// GW_ACTIVE_ISA_TABLE(<name>).
//
// The rule that keeps this safe: an *_isa.cpp file defines nothing with vague linkage (inline
// functions, template instantiations, static locals) outside its target's namespaces. If it did,
// the linker would keep one copy of such a function for the whole program, possibly the AVX-512
// one, and a baseline caller would execute AVX-512 instructions. So *_isa.cpp files compute on
// raw pointers: no std containers, strings, streams, exceptions or locks (checks and allocation
// stay in the caller). The ctest IsaKernels.ObjectsKeepVagueLinkageInTheirTarget checks every
// compiled target's object files for such symbols.
#pragma once

#include "core/config.h"
#include "core/isa.h"

#include <type_traits>

namespace gw::detail {

template <typename Table>
const Table& select_isa_table(Isa isa,
                              const Table& baseline,
                              const Table* avx2,
                              const Table* avx512) {
  switch (isa) {
    case Isa::kAvx512:
      if (avx512 != nullptr) return *avx512;
      break;
    case Isa::kAvx2:
      if (avx2 != nullptr) return *avx2;
      break;
    case Isa::kBaseline:
      break;
  }
  return baseline;
}

}  // namespace gw::detail

#if GW_ISA_MULTI_TARGET
#define GW_DECLARE_ISA_TABLE(Type, name) \
  namespace isa_baseline {               \
  extern const Type name;                \
  }                                      \
  namespace isa_avx2 {                   \
  extern const Type name;                \
  }                                      \
  namespace isa_avx512 {                 \
  extern const Type name;                \
  }
// The table of target `isa` (which the caller knows to be supported), and the active target's.
#define GW_ISA_TABLE_FOR(isa, name) \
  (::gw::detail::select_isa_table((isa), isa_baseline::name, &isa_avx2::name, &isa_avx512::name))
#define GW_ACTIVE_ISA_TABLE(name) GW_ISA_TABLE_FOR(::gw::active_isa(), name)
#else
#define GW_DECLARE_ISA_TABLE(Type, name) \
  namespace isa_baseline {               \
  extern const Type name;                \
  }
#define GW_ISA_TABLE_FOR(isa, name)                                                   \
  (::gw::detail::select_isa_table<std::remove_cvref_t<decltype(isa_baseline::name)>>( \
      (isa), isa_baseline::name, nullptr, nullptr))
#define GW_ACTIVE_ISA_TABLE(name) GW_ISA_TABLE_FOR(::gw::active_isa(), name)
#endif
