// The node names the nemesis tests aim their faults at: servers n1..nN, clients c1..cN.
#pragma once

#include <string>
#include <vector>

namespace fencecheck::testing {

inline const std::vector<std::string> kTwoClients = {"c1", "c2"};
inline const std::vector<std::string> kFiveClients = {"c1", "c2", "c3", "c4", "c5"};
inline const std::vector<std::string> kThreeServers = {"n1", "n2", "n3"};
inline const std::vector<std::string> kFiveServers = {"n1", "n2", "n3", "n4", "n5"};

}  // namespace fencecheck::testing
