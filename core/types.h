// Basic index types and enums shared by every gwalign module.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace gw {

// Node ids (rows/columns of a graph or of a plan). 32 bits: graphs up to 2^31 - 1 nodes.
using Index = std::int32_t;
// Positions in edge arrays and row offsets of CSR structures: 64 bits, so a batch of many graphs
// (or an n x k plan) can exceed 2^31 entries.
using Offset = std::int64_t;

// Where a computation runs. Asking for kCuda in a build without CUDA is an error
// (ErrorCode::kNotCompiled), never a silent fallback to the CPU.
enum class Backend { kCpu, kCuda };

// Floating-point precision of the inner loops. kF32 computes in float32 with float64 accumulation
// of reductions (mixed precision); kF64 computes everything in float64.
enum class Precision { kF32, kF64 };

// "cpu" / "cuda".
std::string_view to_string(Backend backend);
// Inverse of to_string; std::nullopt for an unknown name.
std::optional<Backend> backend_from_string(std::string_view name);

// "f32" / "f64".
std::string_view to_string(Precision precision);
// Inverse of to_string (also accepts "float32"/"float64"); std::nullopt for an unknown name.
std::optional<Precision> precision_from_string(std::string_view name);

}  // namespace gw
