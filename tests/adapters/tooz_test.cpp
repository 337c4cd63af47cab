// The tooz adapter's findings that are not the conformance suite's: what tooz 3.1.0 does on
// Debian's servers, on real servers started as the conformance suite starts them.
//  - etcd: tooz's default API path /v3alpha is gone since etcd 3.4, and init says so in one
//    sentence naming the option that fixes it (never a run that looks valid);
//  - postgresql: tooz keys an advisory lock by the first 2 bytes of md5(name), so unrelated
//    names block each other: "l12" and "l440" (of l0..l999, 10 pairs collide; of l0..l399, none).
#include "tests/adapters/conformance_fixture.h"

namespace fencecheck {
namespace {

class ToozOnEtcd : public AdapterConformanceTest {};
class ToozOnPostgres : public AdapterConformanceTest {};

TEST_P(ToozOnEtcd, TheLibrarysDefaultApiPathFailsInitNamingItAndTheFix) {
  AdapterSettings s = settings("c1");
  s.options["etcd_api"] = "library-default";
  std::string error;
  try {
    AdapterLockClient c(s);
  } catch (const AdapterBroken& e) {
    error = e.what();
  }
  ASSERT_FALSE(error.empty()) << "tooz's default /v3alpha path started against etcd 3.4";
  EXPECT_NE(error.find("/v3alpha"), std::string::npos) << error;
  EXPECT_NE(error.find("--client-opt etcd_api=v3"), std::string::npos) << error;
}

TEST_P(ToozOnPostgres, NamesWithTheSameTwoMd5BytesBlockEachOther) {
  AdapterLockClient& a = client("c1");
  AdapterLockClient& b = client("c2");
  LockResult held = a.acquire("l12", kLongTtl);
  ASSERT_EQ(held.outcome, Outcome::kOk) << describe(held);
  LockResult other = b.acquire("l13", kLongTtl);
  EXPECT_EQ(other.outcome, Outcome::kOk) << "an unrelated name is free: " << describe(other);
  LockResult collided = b.acquire("l440", kLongTtl);  // md5("l440")[0:2] == md5("l12")[0:2]
  EXPECT_EQ(collided.outcome, Outcome::kFail) << "l440 shares l12's advisory key: " << describe(collided);
  ASSERT_EQ(a.release(*held.grant).outcome, Outcome::kOk);
  LockResult freed = acquire_until_ok(b, "l440", kLongTtl, 5000ms);
  EXPECT_EQ(freed.outcome, Outcome::kOk) << "l440 once l12 is released: " << describe(freed);
}

INSTANTIATE_TEST_SUITE_P(Tooz, ToozOnEtcd, ::testing::Values("tooz:etcd"));
INSTANTIATE_TEST_SUITE_P(Tooz, ToozOnPostgres, ::testing::Values("tooz:postgres"));

}  // namespace
}  // namespace fencecheck
