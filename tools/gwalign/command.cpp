#include "command.h"

#include <algorithm>
#include <cctype>

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

std::vector<std::string> normalize_arguments(int argc, const char* const* argv) {
  std::vector<std::string> args;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool one_letter = arg.size() >= 3 && arg[0] == '-' && arg[1] == '-' &&
                            std::isalnum(static_cast<unsigned char>(arg[2])) &&
                            (arg.size() == 3 || arg[3] == '=');
    if (i == 0 || !one_letter) {
      args.push_back(arg);
      continue;
    }
    args.push_back(arg.substr(1, 2));
    if (arg.size() > 3) args.push_back(arg.substr(4));
  }
  return args;
}

}  // namespace gw::cli
