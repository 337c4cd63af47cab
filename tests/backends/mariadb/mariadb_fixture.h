// The fixture of the mariadb integration tests (tests/backends/server_fixture.h): nodes
// n1..n3 and c1..c3 exist in every test; a standalone server uses n1 alone, Galera all three
// (c1 is n1's client, c2 n2's, c3 n3's).
#pragma once

#include <string>

#include "backends/mariadb/mariadb_connection.h"
#include "tests/backends/server_fixture.h"

namespace fencecheck::testing {

class MariadbTest : public BackendServerTest {
 protected:
  MariadbTest() : BackendServerTest("mariadb", {"n1", "n2", "n3", "c1", "c2", "c3"}) {}

  // One statement on a server node's server, from inside that node.
  MariadbResult sql(const std::string& node, const std::string& statement) {
    const nlohmann::json servers = server_->client_config().at("servers");
    std::size_t i = static_cast<std::size_t>(node.back() - '1');
    MariadbConnectParams p;
    p.host = servers.at(i).at("host").get<std::string>();
    p.port = servers.at(i).at("port").get<int>();
    p.connect_timeout = p.command_timeout = Millis(2000);
    MariadbResult r;
    runtime_->run_in(node, [&] { r = MariadbConnection(p).exec(statement); });
    return r;
  }
  // The first column of the first row of statement's result on node ("" when none).
  std::string value(const std::string& node, const std::string& statement) {
    MariadbResult r = sql(node, statement);
    EXPECT_EQ(r.status, MariadbResult::Status::kOk) << statement << ": " << r.error;
    return r.value().value_or("");
  }
};

}  // namespace fencecheck::testing
