// The linearizable checker compares register values as JSON, not as text: key order and
// the form of a number do not make a read differ from the write it saw.
#include <gtest/gtest.h>

#include "tests/linear/test_history.h"

namespace fencecheck {
namespace {

using testing::TestHistory;
using testing::check_linearizable;

// A register write of `written` by process 1, then a read by process 2 returning `read`.
CheckResult write_then_read(const std::string& written, const std::string& read, const std::string& model) {
  TestHistory h;
  const std::string value = model == "cas-register" ? R"({"expect":null,"value":)" + written + "}"
                                                    : R"({"token":null,"value":)" + written + "}";
  h.inv(0, 1, model == "cas-register" ? "cas" : "write", value).ok(1, 1);
  h.inv(2, 2, "read").ok(3, 2, read);
  return check_linearizable(h.events, model);
}

TEST(LinearCanonical, KeyOrderDoesNotMatter) {
  for (const std::string model : {"register", "cas-register"}) {
    auto same = write_then_read(R"({"b":1,"a":2})", R"({"a":2,"b":1})", model);
    EXPECT_EQ(same.verdict, Verdict::kValid) << model << ": " << same.summary;
    auto other = write_then_read(R"({"b":1,"a":2})", R"({"a":2,"b":3})", model);
    EXPECT_EQ(other.verdict, Verdict::kInvalid) << model << ": " << other.summary;
  }
}

TEST(LinearCanonical, EqualNumbersAndEscapesMatch) {
  auto r = write_then_read(R"([1.0,{"y":"\u00e9","x":-0.0}])", R"([1,{"x":0,"y":"é"}])", "register");
  EXPECT_EQ(r.verdict, Verdict::kValid) << r.summary;
  auto other = write_then_read("1.5", "1", "register");
  EXPECT_EQ(other.verdict, Verdict::kInvalid) << other.summary;
}

TEST(LinearCanonical, CasExpectIsCanonicalToo) {
  TestHistory h;  // write {"b":1,"a":2}, then a cas expecting it with the keys swapped
  h.inv(0, 1, "write", R"({"token":null,"value":{"b":1,"a":2}})").ok(1, 1);
  h.inv(2, 2, "cas", R"({"expect":{"a":2,"b":1.0},"value":7})").ok(3, 2);
  h.inv(4, 3, "read").ok(5, 3, "7");
  EXPECT_EQ(check_linearizable(h.events, "cas-register").verdict, Verdict::kValid);
}

}  // namespace
}  // namespace fencecheck
