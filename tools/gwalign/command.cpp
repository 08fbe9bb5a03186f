#include "command.h"

#include <algorithm>

namespace gw::cli {
namespace {
// Function-local statics: registration runs during static initialization of other files, so the
// registries must be constructed on first use.
std::vector<Command>& command_registry() {
  static std::vector<Command> registry;
  return registry;
}
std::vector<Command>& bench_registry() {
  static std::vector<Command> registry;
  return registry;
}
std::vector<Command> sorted(std::vector<Command> list) {
  std::sort(
      list.begin(), list.end(), [](const Command& a, const Command& b) { return a.name < b.name; });
  return list;
}
}  // namespace

bool register_command(const Command& command) {
  command_registry().push_back(command);
  return true;
}

bool register_bench(const Command& command) {
  bench_registry().push_back(command);
  return true;
}

std::vector<Command> commands() { return sorted(command_registry()); }
std::vector<Command> benches() { return sorted(bench_registry()); }

}  // namespace gw::cli
