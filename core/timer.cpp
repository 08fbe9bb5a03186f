#include "core/timer.h"

namespace gw {

void PhaseTimes::add(std::string_view phase, double seconds) {
  for (auto& [name, value] : entries_) {
    if (name == phase) {
      value += seconds;
      return;
    }
  }
  entries_.emplace_back(std::string(phase), seconds);
}

double PhaseTimes::get(std::string_view phase) const {
  for (const auto& [name, value] : entries_) {
    if (name == phase) return value;
  }
  return 0.0;
}

double PhaseTimes::total() const {
  double sum = 0.0;
  for (const auto& entry : entries_) sum += entry.second;
  return sum;
}

}  // namespace gw
