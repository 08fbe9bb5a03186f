// `gwalign generate tissue` (generate_tissue.cpp), reached from `gwalign generate`.
#pragma once

namespace gw::cli {
int run_generate_tissue(int argc, char** argv);
}  // namespace gw::cli
