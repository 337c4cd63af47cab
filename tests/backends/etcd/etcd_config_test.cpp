// The etcd backend's pure parts, no server (label `unit`): how a gRPC status becomes an
// outcome, the HTTP probes' parsing, the members' command lines, the client config and
// the backend options, the run's refusal of clock faults on etcd's servers, and the
// promise a lease's latest renewal makes (valid_ms).
#include <gtest/gtest.h>

#include <atomic>

#include "backends/etcd/etcd_connection.h"
#include "backends/etcd/etcd_keepalive.h"
#include "backends/etcd/etcd_lock_client.h"
#include "backends/etcd/etcd_probe.h"
#include "backends/etcd/etcd_server.h"
#include "backends/registry.h"
#include "harness/run/run_command.h"

namespace fencecheck {
namespace {

using grpc::Status;
using grpc::StatusCode;

TEST(EtcdStatusRule, AnswersAndSilencesBecomeOutcomes) {
  EXPECT_EQ(classify_etcd_status(Status::OK, true), EtcdEnd::kOk);
  // etcd refused before acting: the lease is gone, the request is malformed.
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::NOT_FOUND, "etcdserver: requested lease not found"), true),
            EtcdEnd::kRefused);
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::INVALID_ARGUMENT, "etcdserver: key is not provided"), true),
            EtcdEnd::kRefused);
  // No connection ever came up: nothing was sent.
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::UNAVAILABLE, "failed to connect to all addresses"), false),
            EtcdEnd::kNotSent);
  // A connected channel, or etcd's own UNAVAILABLE answers, may have applied the request.
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::UNAVAILABLE, "failed to connect to all addresses"), true),
            EtcdEnd::kUnknown);
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::UNAVAILABLE, "etcdserver: request timed out"), false),
            EtcdEnd::kUnknown);
  // etcd's own words may mention a connection: still an answer that may have been applied.
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::UNAVAILABLE,
                                        "etcdserver: request timed out, possibly due to connection lost"),
                                 false),
            EtcdEnd::kUnknown);
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::UNAVAILABLE, "connections to all backends failing"), false),
            EtcdEnd::kNotSent);
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::UNAVAILABLE, "Socket closed"), false), EtcdEnd::kUnknown);
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"), true),
            EtcdEnd::kUnknown);
  EXPECT_EQ(classify_etcd_status(Status(StatusCode::CANCELLED, ""), true), EtcdEnd::kUnknown);
}

TEST(EtcdProbe, HealthAndStatusAnswersAreParsed) {
  EXPECT_EQ(http_ok_body("HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\n{\"health\":\"true\"}"),
            "{\"health\":\"true\"}");
  EXPECT_FALSE(http_ok_body("HTTP/1.0 503 Service Unavailable\r\n\r\n{\"health\":\"false\"}"));
  EXPECT_FALSE(http_ok_body("garbage"));
  EXPECT_FALSE(http_ok_body("HTTP/1.1 200 OK\r\nno end of headers"));
  EXPECT_TRUE(etcd_health_body_ok("{\"health\":\"true\"}"));
  EXPECT_FALSE(etcd_health_body_ok("{\"health\":\"false\"}"));
  EXPECT_FALSE(etcd_health_body_ok("{\"health\":true"));

  // As etcd 3.4.23's gateway prints it (int64 values as strings).
  auto leader = parse_etcd_status(
      R"({"header":{"cluster_id":"324952591200643719","member_id":"3319814642761637952","revision":"1",)"
      R"("raft_term":"2"},"version":"3.4.23","leader":"3319814642761637952","raftTerm":"2"})");
  ASSERT_TRUE(leader);
  EXPECT_TRUE(leader->is_leader());
  EXPECT_EQ(leader->raft_term, 2);
  auto follower = parse_etcd_status(R"({"header":{"member_id":"11"},"leader":"12","raftTerm":"5"})");
  ASSERT_TRUE(follower);
  EXPECT_FALSE(follower->is_leader());
  auto orphan = parse_etcd_status(R"({"header":{"member_id":"11"},"raftTerm":"5"})");
  ASSERT_TRUE(orphan);
  EXPECT_FALSE(orphan->is_leader()) << "no leader known: \"0\"";
  EXPECT_FALSE(parse_etcd_status(R"({"leader":"1"})"));
  EXPECT_FALSE(parse_etcd_status(R"({"header":{"member_id":"1"},"raftTerm":"x"})"));
}

TEST(EtcdServerConfig, EveryMemberKnowsTheWholeClusterAndKeepsItsOwnData) {
  std::vector<EtcdMember> members = {
      {"n1", "10.1.0.1", 2379, 2380}, {"n2", "10.1.0.2", 2379, 2380}, {"n3", "10.1.0.3", 2379, 2380}};
  std::vector<std::string> argv = etcd_command_line("/usr/bin/etcd", members[1], members, "/run/x/nodes/n2/data");
  auto has = [&](const std::string& arg) { return std::find(argv.begin(), argv.end(), arg) != argv.end(); };
  EXPECT_EQ(argv.front(), "/usr/bin/etcd");
  EXPECT_TRUE(has("--name=n2"));
  EXPECT_TRUE(has("--data-dir=/run/x/nodes/n2/data"));
  EXPECT_TRUE(has("--listen-client-urls=http://10.1.0.2:2379"));
  EXPECT_TRUE(has("--listen-peer-urls=http://10.1.0.2:2380"));
  EXPECT_TRUE(has("--initial-cluster=n1=http://10.1.0.1:2380,n2=http://10.1.0.2:2380,n3=http://10.1.0.3:2380"));
}

TEST(EtcdClientConfigTest, ReadsWhatTheServerWritesAndNamesBadFields) {
  EtcdClientConfig c = EtcdClientConfig::from_json({{"endpoints", {"10.0.0.1:2379", "10.0.0.2:2379"}}});
  EXPECT_EQ(c.lock, "rpc");
  EXPECT_EQ(c.lease_ttl.count(), 2);
  EtcdClientConfig back = EtcdClientConfig::from_json(c.to_json());
  EXPECT_EQ(back.endpoints, c.endpoints);
  EXPECT_EQ(back.max_wait, c.max_wait);

  auto error_of = [](const nlohmann::json& j) {
    try {
      EtcdClientConfig::from_json(j);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(error_of({{"endpoints", nlohmann::json::array()}}).find("\"endpoints\""), std::string::npos);
  EXPECT_NE(error_of({{"endpoints", {"nohost"}}}).find("\"nohost\" is not"), std::string::npos);
  EXPECT_NE(error_of({{"endpoints", {"a:1"}}, {"lock", "spin"}}).find("\"lock\""), std::string::npos);
  EXPECT_NE(error_of({{"endpoints", {"a:1"}}, {"lock", 7}}).find("\"lock\""), std::string::npos);
  EXPECT_NE(error_of({{"endpoints", {"a:1"}}, {"lease_ttl_s", 0}}).find("\"lease_ttl_s\""), std::string::npos);
  EXPECT_NE(error_of({{"endpoints", {"a:1"}}, {"max_wait_ms", "soon"}}).find("\"max_wait_ms\""), std::string::npos);
}

TEST(EtcdLockKeys, AreTheRecipesKeys) {
  // clientv3/concurrency: <name>/ then the lease id in lowercase hex, no padding.
  EXPECT_EQ(EtcdLockClient::lock_prefix("lock-0"), "fc/lock-0/");
  EXPECT_EQ(EtcdLockClient::lock_key("lock-0", 0x694d7a1b2c3d4e5f), "fc/lock-0/694d7a1b2c3d4e5f");
  EXPECT_EQ(EtcdLockClient::lock_key("k", 10), "fc/k/a");
}

// A grant's valid_ms: the latest renewal's send + its TTL − the acquire's start; a renewal
// notice's valid: the same end counted from when the notice is made. Rounded down.
TEST(EtcdPromise, IsTheLatestRenewalsSendPlusItsTtlFromTheStart) {
  using namespace std::chrono_literals;
  using Renewal = EtcdKeepAlive::Renewal;
  const EtcdKeepAlive::Clock::time_point start{1000s};
  // Granted at once: the LeaseGrant's send (5 ms in) + 2 s.
  EXPECT_EQ((Renewal{start + 5ms, 2s}).valid_from(start), 2005ms);
  // Queued 4 s, kept alive meanwhile: the last answered keepalive, sent 3.4 s in.
  EXPECT_EQ((Renewal{start + 3400ms, 2s}).valid_from(start), 5400ms);
  // Frozen while waiting (etcd#11456): the last renewal before the freeze, 0.6 s in, promised
  // until 2.6 s; the grant came 9 s in, so valid_ms is below the acquire's duration.
  EXPECT_EQ((Renewal{start + 600ms, 2s}).valid_from(start), 2600ms);
  EXPECT_LT((Renewal{start + 600ms, 2s}).valid_from(start), 9000ms);
  // A renewal notice 40 ms after its keepalive was sent.
  EXPECT_EQ((Renewal{start, 2s}).valid_from(start + 40ms), 1960ms);
  // Never later than the client's own end: sub-ms parts round down, also below zero.
  EXPECT_EQ((Renewal{start + 1500us, 1s}).valid_from(start), 1001ms);
  EXPECT_EQ((Renewal{start, 1s}).valid_from(start + 2500us), 997ms);
  EXPECT_EQ((Renewal{start, 1s}).valid_from(start + 1000500us), -1ms);
}

// The keepalive's bookkeeping without a server: hold() gives what add() recorded until a
// renewal answers, and nothing for a lease it does not keep; no member, no notice.
TEST(EtcdPromise, HoldGivesTheLeasesGrantUntilDropped) {
  using namespace std::chrono_literals;
  EtcdConnection nowhere({"127.0.0.1:1"});
  EtcdKeepAlive keepalive(nowhere, 2s);
  std::atomic<int> notices{0};
  keepalive.set_listener([&](const LibraryNotice&) { ++notices; });
  const auto sent = EtcdKeepAlive::Clock::now();
  keepalive.add(7, {sent, 2s});
  auto held = keepalive.hold(7, "k", "7");
  ASSERT_TRUE(held);
  EXPECT_EQ(held->sent, sent);
  EXPECT_EQ(held->ttl, 2s);
  EXPECT_FALSE(keepalive.hold(8, "k", "8"));
  keepalive.drop(7);
  EXPECT_FALSE(keepalive.hold(7, "k", "7"));
  EXPECT_EQ(notices, 0);
}

TEST(EtcdBackendOptions, AreCheckedBeforeAnyServerStarts) {
  const BackendInfo& etcd = *find_backend("etcd");
  BackendOptions defaults = resolve_backend_options(etcd, {});
  EXPECT_EQ(defaults.at("lock"), "rpc");
  EXPECT_EQ(defaults.at("lease_ttl_s"), "2");
  EXPECT_THROW(resolve_backend_options(etcd, {"lock=spin"}), std::invalid_argument);
  // etcd's minimum TTL is 2 s here; 1 would be raised silently by the server.
  try {
    etcd.make_server(resolve_backend_options(etcd, {"lease_ttl_s=1"}));
    ADD_FAILURE() << "lease_ttl_s=1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("lease_ttl_s must be a whole number in 2..3600"), std::string::npos)
        << e.what();
  }
  auto server = etcd.make_server(resolve_backend_options(etcd, {"lock=mutex", "lease_ttl_s=3"}));
  EXPECT_EQ(server->nodes(), (std::vector<std::string>{"n1", "n2", "n3"}));
}

// A clock fault on etcd's servers could not move their clocks: refused before the run,
// saying why; aimed at the clients (C++ workers, which the library reaches) it is fine.
TEST(EtcdClockFaults, AreRefusedForTheServersWithTheReason) {
  for (const char* fault : {"clock-bump", "clock-strobe"}) {
    RunConfig c = parse_run_args({"--backend", "etcd", "--nemesis", fault});
    c.seed = 1;
    c.runtime = "netns";
    c.resolve();
    std::optional<std::string> problem = c.input_problem();
    ASSERT_TRUE(problem) << fault << " accepted on etcd's servers";
    EXPECT_NE(problem->find("needs a backend that lets the clock library reach its servers' wall clocks, which "
                            "--backend etcd cannot"),
              std::string::npos)
        << *problem;
    EXPECT_NE(problem->find("--nemesis-targets clients to aim it at the clients instead"), std::string::npos)
        << *problem;
    EXPECT_NE(problem->find("static Go binary"), std::string::npos) << *problem;

    RunConfig clients = parse_run_args({"--backend", "etcd", "--nemesis", fault, "--nemesis-targets", "clients"});
    clients.seed = 1;
    clients.runtime = "netns";
    clients.resolve();
    EXPECT_EQ(clients.input_problem(), std::nullopt);
  }
  RunConfig redis = parse_run_args({"--backend", "redis", "--nemesis", "clock-bump"});
  redis.seed = 1;
  redis.runtime = "netns";
  redis.resolve();
  EXPECT_EQ(redis.input_problem(), std::nullopt) << "redis-server's clock is reachable";
}

}  // namespace
}  // namespace fencecheck
