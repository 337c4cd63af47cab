// Test support: the Debian packages scripts/setup.sh installs in one of its groups (the
// words of its `<group>=( … )` array), so that a registry's tests can insist that every
// package a registry entry names is installed. Header-only; reads the file each call.
#pragma once

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace fencecheck::testing {

inline std::set<std::string> setup_sh_packages(const std::string& source_dir, const std::string& group) {
  std::ifstream in(source_dir + "/scripts/setup.sh");
  std::set<std::string> packages;
  bool inside = false;
  for (std::string line; std::getline(in, line);) {
    if (!inside) {
      inside = line.rfind(group + "=(", 0) == 0;
      continue;
    }
    line = line.substr(0, line.find('#'));
    if (line.find(')') != std::string::npos) break;
    std::istringstream words(line);
    for (std::string w; words >> w;) packages.insert(w);
  }
  return packages;
}

}  // namespace fencecheck::testing
