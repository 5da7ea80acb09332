#include "ncclbot/io/resource_paths.hpp"

#include <dlfcn.h>

#include <filesystem>
#include <fstream>
#include <system_error>

namespace ncclbot {
namespace {

namespace fs = std::filesystem;

bool is_dir(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

// The source tree a build folder at or above `dir` names, or empty.
fs::path source_tree_above(fs::path dir) {
  for (int up = 0; up < 8 && !dir.empty(); ++up, dir = dir.parent_path()) {
    std::ifstream marker(dir / kSourceTreeMarker);
    std::string line;
    if (marker && std::getline(marker, line) && !line.empty() && is_dir(fs::path(line) / "data" / "fabrics"))
      return line;
    if (dir == dir.root_path()) break;
  }
  return {};
}

}  // namespace

ResourcePaths find_resource_paths(const std::string& program_path) {
  ResourcePaths p;
  std::error_code ec;
  fs::path exe = fs::weakly_canonical(fs::path(program_path), ec);
  if (ec) exe = fs::path(program_path);
  const fs::path bin = exe.parent_path();
  // PREFIX/bin/ncclbot finds PREFIX/share/ncclbot; a shared object that carries its own data
  // (the Python package: ncclbot/_core.so beside ncclbot/share/ncclbot) finds it beside itself.
  fs::path share = bin.parent_path() / "share" / "ncclbot";
  if (!is_dir(share / "fabrics")) share = bin / "share" / "ncclbot";
  if (is_dir(share / "fabrics")) {
    p = {share.string(), (share / "scripts").string(), (share / "experiments").string(), "installed"};
  } else if (const fs::path src = source_tree_above(bin); !src.empty()) {
    p = {(src / "data").string(), (src / "scripts").string(), (src / "experiments").string(), "build tree"};
  }
  return p;
}

const ResourcePaths& resource_paths() {
  static const ResourcePaths paths = [] {
    // The image this code is in: the program, or a shared object such as the Python module.
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&find_resource_paths), &info) != 0 && info.dli_fname != nullptr) {
      const fs::path image = fs::weakly_canonical(fs::path(info.dli_fname), ec);
      if (!ec && image.extension() == ".so") return find_resource_paths(image.string());
    }
    return find_resource_paths(exe.empty() ? std::string() : exe.string());
  }();
  return paths;
}

}  // namespace ncclbot
