// The one-pass pipeline and its report: how many violations are shown, checkers that
// throw, histories with nothing to judge, and reasons that keep a run from being valid.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "checkers/safety.h"
#include "platform/errors.h"
#include "tests/checkers/history_builder.h"

namespace fencecheck::testing {
namespace {

// `holders` processes each holding l0 from their acquire to the end of the history.
HistoryBuilder overlapping_holds(int holders) {
  HistoryBuilder h;
  for (int p = 1; p <= holders; ++p) h.acquire(p, "l0", 2 * p, 2 * p + 1);
  h.nemesis("pause", 100);
  return h;
}

// Three locks, each held by one process to the end of the history and taken by another
// inside that hold: three violations of exclusion.
HistoryBuilder three_overlapped_locks() {
  HistoryBuilder h;
  for (int k = 1; k <= 3; ++k) h.acquire(k, "l" + std::to_string(k), 2 * k, 2 * k + 1);
  for (int k = 1; k <= 3; ++k) h.acquire(10 + k, "l" + std::to_string(k), 20 + k, 21 + k);
  h.nemesis("pause", 100);
  return h;
}

TEST(CheckReport, ViolationsSayHowManyWereKept) {
  HistoryBuilder h = three_overlapped_locks();
  CheckRequest req;
  req.history = h.history_path();
  req.checkers = {"exclusion"};
  req.options.max_violations = 2;
  CheckReport report = run_checks(req);
  const CheckResult& r = report.results.at(0).second;
  ASSERT_EQ(r.count, 3u);
  auto j = report.to_json(req)["checkers"]["exclusion"];
  EXPECT_EQ(j["count"], 3);
  EXPECT_EQ(j["shown"], 2);
  EXPECT_EQ(j["violations"].size(), 2u);
  EXPECT_NE(report.summary().find("exclusion     invalid  3 holds overlapped by 3 acquires (showing 2 of 3), first: "),
            std::string::npos)
      << report.summary();

  req.options.max_violations = 10;  // nothing cut: no "showing"
  CheckReport all = run_checks(req);
  EXPECT_EQ(all.to_json(req)["checkers"]["exclusion"]["shown"], 3);
  EXPECT_EQ(all.summary().find("showing"), std::string::npos) << all.summary();
  EXPECT_NE(all.summary().find("3 holds overlapped by 3 acquires, first: "), std::string::npos) << all.summary();
}

// A checker without a count_text counts plain violations; one with it is read its way.
TEST(CheckReport, TheSummaryLineReadsTheCountAsTheCheckerSays) {
  CheckReport report;
  CheckResult plain;
  plain.verdict = Verdict::kInvalid;
  plain.count = 2;
  plain.violations = json::array({json::object(), json::object()});
  plain.summary = "first";
  report.results.emplace_back("resource", plain);
  CheckResult grouped = plain;
  grouped.count = 1;
  grouped.violations = json::array({json::object()});
  grouped.count_text = "1 hold overlapped by 7 acquires";
  report.results.emplace_back("exclusion", grouped);
  EXPECT_EQ(report.summary(),
            "resource      invalid  2 violations, first: first\n"
            "exclusion     invalid  1 hold overlapped by 7 acquires: first\n");
  EXPECT_EQ(grouped.to_json()["count_text"], "1 hold overlapped by 7 acquires");
  EXPECT_FALSE(plain.to_json().contains("count_text"));
}

// A checker that throws `T` from observe() at event `at`, or from finish() when at < 0.
template <typename T>
class Throwing : public Checker {
 public:
  explicit Throwing(int at, int* observed = nullptr) : at_(at), observed_(observed) {}
  void observe(const Event&) override {
    if (observed_ != nullptr) ++*observed_;
    if (seen_++ == at_) throw_it();
  }
  CheckResult finish() override {
    if (at_ < 0) throw_it();
    return CheckResult{};
  }

 private:
  static void throw_it() {
    if constexpr (std::is_same_v<T, std::bad_alloc>) {
      throw std::bad_alloc();
    } else {
      throw T("boom");
    }
  }
  int at_;
  int* observed_;
  int seen_ = 0;
};

TEST(RunChecks, AThrowingCheckerIsUnknownAloneAndTheOthersCarryOn) {
  HistoryBuilder h = overlapping_holds(2);
  CheckRequest req;
  req.history = h.history_path();
  int observed = 0;
  std::vector<NamedChecker> checkers;
  checkers.push_back({"early", std::make_unique<Throwing<std::runtime_error>>(1, &observed)});
  checkers.push_back({"exclusion", make_exclusion_checker(req.options)});
  checkers.push_back({"hungry", std::make_unique<Throwing<std::bad_alloc>>(-1)});
  checkers.push_back({"fine", std::make_unique<Throwing<std::runtime_error>>(1000)});
  CheckReport report = run_checks(req, std::move(checkers));

  ASSERT_EQ(report.results.size(), 4u);
  const CheckResult& early = report.results[0].second;
  EXPECT_EQ(early.verdict, Verdict::kUnknown);
  EXPECT_EQ(early.summary, "the early checker failed: boom");
  EXPECT_EQ(observed, 2) << "a checker that threw is fed no more events";
  EXPECT_EQ(report.results[1].second.verdict, Verdict::kInvalid);
  EXPECT_EQ(report.results[1].second.count, 1u);
  const CheckResult& hungry = report.results[2].second;
  EXPECT_EQ(hungry.verdict, Verdict::kUnknown);
  EXPECT_EQ(hungry.summary, "the hungry checker failed: out of memory (std::bad_alloc)");
  EXPECT_EQ(report.results[3].second.verdict, Verdict::kValid);
  EXPECT_EQ(report.overall(), Verdict::kInvalid);  // a real violation still wins

  std::vector<NamedChecker> only_throwing;
  only_throwing.push_back({"early", std::make_unique<Throwing<std::logic_error>>(0)});
  EXPECT_EQ(run_checks(req, std::move(only_throwing)).exit_code(), 2);
}

TEST(RunChecks, BadInputStillThrowsWithTheSeam) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).raw("not json");
  CheckRequest req;
  req.history = h.history_path();
  std::vector<NamedChecker> checkers;
  checkers.push_back({"fine", std::make_unique<Throwing<std::runtime_error>>(1000)});
  EXPECT_THROW(run_checks(req, std::move(checkers)), InputError);
}

TEST(RunChecks, AHistoryWithoutClientOperationsIsUnknown) {
  HistoryBuilder empty;
  HistoryBuilder nemesis_only;
  nemesis_only.nemesis("pause", 1).nemesis("resume", 2);
  for (const HistoryBuilder* h : {&empty, &nemesis_only}) {
    CheckReport report = h->check();
    EXPECT_EQ(report.client_events, 0u);
    EXPECT_EQ(report.overall(), Verdict::kUnknown);
    EXPECT_EQ(report.exit_code(), 2);
    EXPECT_EQ(report.unknown_reasons, std::vector<std::string>{"the history has no client operations"});
    EXPECT_NE(report.summary().find("\nundecided: the history has no client operations\n"), std::string::npos)
        << report.summary();
    auto j = report.to_json(CheckRequest{});
    EXPECT_EQ(j["valid"], "unknown");
    EXPECT_EQ(j["unknown_reasons"], nlohmann::json::array({"the history has no client operations"}));
  }
}

TEST(RunChecks, CountsClientEvents) {
  HistoryBuilder h;
  h.acquire(1, "l0", 0, 1).nemesis("pause", 2).release(1, "l0", 3, 4);
  CheckReport report = h.check();
  EXPECT_EQ(report.events, 5u);
  EXPECT_EQ(report.client_events, 4u);
  EXPECT_TRUE(report.unknown_reasons.empty());
  EXPECT_EQ(report.overall(), Verdict::kValid);
  EXPECT_EQ(report.to_json(CheckRequest{})["history"]["client_events"], 4);
  EXPECT_EQ(report.to_json(CheckRequest{})["unknown_reasons"], nlohmann::json::array());
}

TEST(CheckReport, UnknownReasonsMakeAValidRunUnknownButNotAnInvalidOne) {
  CheckReport report;
  report.results.emplace_back("tokens", CheckResult{});
  EXPECT_EQ(report.overall(), Verdict::kValid);
  report.unknown_reasons.push_back("the run was interrupted");
  EXPECT_EQ(report.overall(), Verdict::kUnknown);
  EXPECT_NE(report.summary().find("undecided: the run was interrupted\n"), std::string::npos);
  CheckResult bad;
  bad.verdict = Verdict::kInvalid;
  report.results.emplace_back("exclusion", bad);
  EXPECT_EQ(report.overall(), Verdict::kInvalid);
}

}  // namespace
}  // namespace fencecheck::testing
