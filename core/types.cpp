#include "core/types.h"

namespace gw {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::kCpu:
      return "cpu";
    case Backend::kCuda:
      return "cuda";
  }
  return "unknown";
}

std::optional<Backend> backend_from_string(std::string_view name) {
  if (name == "cpu") return Backend::kCpu;
  if (name == "cuda") return Backend::kCuda;
  return std::nullopt;
}

std::string_view to_string(Precision precision) {
  switch (precision) {
    case Precision::kF32:
      return "f32";
    case Precision::kF64:
      return "f64";
  }
  return "unknown";
}

std::optional<Precision> precision_from_string(std::string_view name) {
  if (name == "f32" || name == "float32") return Precision::kF32;
  if (name == "f64" || name == "float64") return Precision::kF64;
  return std::nullopt;
}

}  // namespace gw
