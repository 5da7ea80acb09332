#pragma once
// Where ncclbot's own files are (fabric presets, HiPIPE presets, figure scripts, example studies),
// found from the running program's location, so an installed or moved copy works and no source
// path is compiled in:
//   installed:  PREFIX/bin/ncclbot -> PREFIX/share/ncclbot/{fabrics,hipipe,scripts,experiments}
//   a shared object (the plugin, the Python module): the same from where the .so is, and also
//               DIR/share/ncclbot beside DIR/x.so (the Python package carries its data so)
//   build tree: a program anywhere under a build folder whose `ncclbot-source-tree` file (written
//               by CMake) names the source tree -> SRC/data/{fabrics,hipipe}, SRC/scripts, ...
// The overrides stay with their users: NCCLBOT_DATA_DIR (fabric presets, sim/fabric.hpp),
// NCCLBOT_HIPIPE_FABRICS, NCCLBOT_FIGURE_SCRIPT.
#include <string>

namespace ncclbot {

struct ResourcePaths {
  std::string data;         // holds fabrics/ and hipipe/
  std::string scripts;      // study_figures.py, hipipe_figure.py, ...
  std::string experiments;  // quick.toml, paper.toml, ...
  std::string found_by;     // "installed" or "build tree"; empty when nothing was found
};

// The paths for this process; empty members when nothing was found (a message that needs one says
// what to set). Computed once.
const ResourcePaths& resource_paths();

// The same search from a given program path (tests; resource_paths() uses the image it is linked
// into: /proc/self/exe for a program, the .so's own path for a shared object).
ResourcePaths find_resource_paths(const std::string& program_path);

// The name of the file CMake writes into every build folder: one line, the source tree's path.
inline constexpr const char* kSourceTreeMarker = "ncclbot-source-tree";

}  // namespace ncclbot
