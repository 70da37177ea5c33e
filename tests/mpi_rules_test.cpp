// The MPI usage rules the semantics judges (issue 32 item 3; model/include/collmc/model/mpi_rules.def,
// model/src/resolve.cpp check_mpi_arguments): a statement carries the arguments the program passed (a null
// communicator, datatype or operation, a tag), and the check decides. Each rule in both outcomes on
// hand-written scenarios; the imported form of the same calls is tested in mpi_usage_rules_test.cpp.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "collmc/model/operations.h"
#include "collmc/model/print.h"
#include "collmc/model/source.h"
#include "collmc/report/check_report.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using model::MpiRule;
using model::MpiRuleJudge;
using model::Verdict;

std::string mpi(const std::string& body, const std::string& knobs = "") {
  return "ranks 2\nset profile = mpi\n" + knobs + "comm world = all\n" + body;
}

// The verdict and, for a violation, its message.
std::pair<Verdict, std::string> outcome(const std::string& text) {
  const checker::CheckResult r = check_text(text);
  return {r.verdict, r.violation ? r.violation->message : std::string()};
}

void expect_usage_error(const std::string& text, const std::string& says, const std::string& section) {
  const auto [v, message] = outcome(text);
  EXPECT_EQ(v, Verdict::UsageError) << text;
  EXPECT_NE(message.find(says), std::string::npos) << message;
  EXPECT_NE(message.find("(MPI 4.1 sec. " + section + ")"), std::string::npos) << message;
}

TEST(MpiRules, TheTableNamesEveryRuleOnceWithItsSection) {
  std::set<std::string> names;
  for (size_t k = 0; k < model::kMpiRuleCount; ++k) {
    const auto rule = static_cast<MpiRule>(k);
    const model::MpiRuleInfo& info = model::mpi_rule_info(rule);
    EXPECT_EQ(info.rule, rule);
    EXPECT_TRUE(names.insert(std::string(info.name)).second) << info.name;
    EXPECT_EQ(model::mpi_rule_named(info.name), rule);
    EXPECT_FALSE(info.section.empty()) << info.name;
    EXPECT_FALSE(info.what.empty()) << info.name;
  }
  EXPECT_FALSE(model::mpi_rule_named("no_such_rule"));
  EXPECT_EQ(model::mpi_rule_info(MpiRule::NullDatatype).judged_by, MpiRuleJudge::Semantics);
  EXPECT_EQ(model::mpi_rule_info(MpiRule::RmaEpoch).judged_by, MpiRuleJudge::Semantics);
  EXPECT_EQ(model::mpi_rule_info(MpiRule::RmaRace).judged_by, MpiRuleJudge::Import);
  EXPECT_EQ(model::mpi_rule_message(MpiRule::NullOperation, "MPI_Reduce"),
            "MPI_Reduce: a null handle is no valid operation (MPI 4.1 sec. 2.5.4, 6.9)");
}

TEST(MpiRules, ACollectiveOnTheNullCommunicator) {
  expect_usage_error(mpi("rank * { barrier null }"),
                     "barrier on MPI_COMM_NULL ('null'): a null handle is no valid "
                     "communicator",
                     "2.5.4");
  // Only the rank that passes MPI_COMM_NULL errs; the other's barrier on world then waits for nobody.
  expect_usage_error(mpi("rank 0 { all_reduce null x }\nrank 1 { }"), "all_reduce on MPI_COMM_NULL", "2.5.4");
  EXPECT_EQ(verdict_of(mpi("rank * { barrier world }")), Verdict::Safe);
}

TEST(MpiRules, ANullDatatypeOrOperation) {
  expect_usage_error(mpi("rank * { all_reduce world x dtype=null }"),
                     "all_reduce with dtype=null (MPI_DATATYPE_NULL): a null handle is no valid datatype",
                     "2.5.4, 3.2.2");
  expect_usage_error(mpi("rank * { reduce world x root=0 op=null }"),
                     "reduce with op=null (MPI_OP_NULL): a null handle is no valid operation", "2.5.4, 6.9");
  expect_usage_error(mpi("rank 0 { send world 1 x dtype=null }\nrank 1 { recv world 0 x }"), "send with dtype=null",
                     "2.5.4, 3.2.2");
  EXPECT_EQ(verdict_of(mpi("rank * { all_reduce world x dtype=int32 op=max }")), Verdict::Safe);
  EXPECT_EQ(verdict_of(mpi("rank * { reduce world x root=0 op=sum }")), Verdict::Safe);
}

TEST(MpiRules, TagsOutsideZeroToTheUpperBound) {
  expect_usage_error(mpi("rank 0 { send world 1 x tag=-3 }\nrank 1 { recv world 0 x tag=any }"),
                     "send with tag -3: a send's tag is 0 to MPI_TAG_UB, never negative", "3.2.3");
  expect_usage_error(mpi("rank 0 { send world 1 x tag=3 }\nrank 1 { recv world 0 x tag=-2 }"),
                     "recv with tag -2: a receive's tag is 0 to MPI_TAG_UB or MPI_ANY_TAG", "3.2.3");
  // Above 32767, the least MPI_TAG_UB every library guarantees, unless the scenario says its library's.
  const std::string big = "rank 0 { send world 1 x tag=40000 }\nrank 1 { recv world 0 x tag=40000 }";
  expect_usage_error(mpi(big), "send with tag 40000 above MPI_TAG_UB 32767", "3.2.3, 9.1.1");
  EXPECT_EQ(verdict_of(mpi(big, "set mpi_tag_ub = 8388607\n")), Verdict::Safe);
  expect_usage_error(mpi(big, "set mpi_tag_ub = 39999\n"), "above MPI_TAG_UB 39999", "3.2.3, 9.1.1");
  EXPECT_EQ(verdict_of(mpi("rank 0 { send world 1 x tag=32767 }\nrank 1 { recv world 0 x tag=any }")), Verdict::Safe);
  // Inside a group (MPI_Isend ... MPI_Wait) the erroneous call is reported too.
  expect_usage_error(mpi("rank 0 { group { send world 1 x tag=-1 } }\nrank 1 { recv world 0 x }"), "send with tag -1",
                     "3.2.3");
}

// A group holds what a rank posted and has not waited for (its end is the wait): MPI_Finalize inside one
// leaves requests never completed (MPI 4.1 sec. 3.7.3, 11.2.2). On every rank that does, whichever reaches it.
TEST(MpiRules, FinalizeBeforeTheRequestsOfItsGroupComplete) {
  expect_usage_error(
      mpi("rank 0 { group { send world 1 x\n mpi_finalize } }\nrank 1 { recv world 0 x\n mpi_finalize }"),
      "mpi_finalize inside 'group', whose nonblocking operations were never completed: every request "
      "is completed by a wait or test, or freed",
      "3.7.3, 11.2.2");
  expect_usage_error(
      mpi("rank 0 { group { recv world 1 x\n send world 1 y\n mpi_finalize } }\nrank 1 { send world 0 x\n"
          " recv world 0 y\n mpi_finalize }"),
      "mpi_finalize inside 'group'", "3.7.3, 11.2.2");
  // Completed first (the group ends before MPI_Finalize), or no MPI_Finalize at all: nothing erroneous.
  EXPECT_EQ(
      verdict_of(mpi("rank 0 { group { send world 1 x }\n mpi_finalize }\nrank 1 { recv world 0 x\n mpi_finalize }")),
      Verdict::Safe);
  EXPECT_EQ(verdict_of(mpi("rank 0 { group { send world 1 x } }\nrank 1 { recv world 0 x }")), Verdict::Safe);
  EXPECT_EQ(model::mpi_rule_info(MpiRule::RequestNotCompleted).judged_by, MpiRuleJudge::Semantics);
  // JSON names the rule; the printed scenario keeps the statement inside its group and reads back.
  const checker::CheckResult r =
      check_text(mpi("rank 0 { group { send world 1 x\n mpi_finalize } }\nrank 1 { recv world 0 x }"));
  const auto j = nlohmann::json::parse(report::json_report(r));
  EXPECT_EQ(j["violation"]["mpi_rule"], "request_not_completed") << j.dump();
  EXPECT_EQ(verdict_of(model::print_world(*r.world)), Verdict::UsageError) << model::print_world(*r.world);
}

TEST(MpiRules, AnMpiRootOutsideItsCommunicatorNamesTheSection) {
  expect_usage_error("ranks 3\nset profile = mpi\ncomm g = [0, 1]\nrank 0, 1 { broadcast g x root=2 }",
                     "root 2 is not a member of 'g': the root must be a rank of the group", "6.1, 6.4");
}

TEST(MpiRules, WhatIsBadInputRatherThanAnErroneousProgram) {
  auto input_error = [](const std::string& text, const std::string& says) {
    try {
      (void)world_from(text);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const model::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  input_error(mpi("rank * { barrier world }", "set mpi_tag_ub = 100\n"), "MPI_TAG_UB is at least 32767");
  input_error("ranks 2\nset profile = mpi\ncomm null = all\nrank * { barrier null }", "'null' is MPI_COMM_NULL");
  input_error("ranks 2\ncomm world = all\nrank * { all_reduce world x dtype=null }", "needs an mpi communicator");
  input_error("ranks 2\ncomm world = all\nrank * { all_reduce null x }", "needs 'set profile = mpi'");
  input_error("ranks 2\ncomm world = all\nrank * { all_reduce world x op=null }", "needs an mpi communicator");
}

// The rules the MPI trace reader still judges (races with the program's loads and stores, ...):
// its `mpi_error RULE "TEXT"` names the rule, which the JSON result gives beside the message.
TEST(MpiRules, AnErrorTheImportFoundNamesItsRule) {
  const std::string text =
      mpi("rank 0 { mpi_error rma_race \"MPI_Put to rank 1 on world/win1 races with rank 1's load (MPI 4.1 sec. "
          "12.7)\" }\n"
          "rank 1 { }");
  const checker::CheckResult r = check_text(text);
  ASSERT_EQ(r.verdict, Verdict::UsageError);
  const auto j = nlohmann::json::parse(report::json_report(r));
  EXPECT_EQ(j["violation"]["mpi_rule"], "rma_race") << j.dump();
  EXPECT_EQ(j["violation"]["message"], "MPI_Put to rank 1 on world/win1 races with rank 1's load (MPI 4.1 sec. 12.7)");
  // The printed scenario (shrink, reports) keeps the rule, and reads back.
  const std::string printed = model::print_world(*r.world);
  EXPECT_NE(printed.find("mpi_error rma_race \"MPI_Put"), std::string::npos) << printed;
  EXPECT_EQ(verdict_of(printed), Verdict::UsageError) << printed;
  // A rule the semantics judged is named too.
  const auto null_type =
      nlohmann::json::parse(report::json_report(check_text(mpi("rank * { all_reduce world x dtype=null }"))));
  EXPECT_EQ(null_type["violation"]["mpi_rule"], "null_datatype") << null_type.dump();
  // No rule for a violation that is not an MPI usage error.
  const auto mismatch = nlohmann::json::parse(report::json_report(
      check_text(mpi("rank 0 { all_reduce world x count=1 }\nrank 1 { all_reduce world x count=2 }"))));
  EXPECT_EQ(mismatch["violation"]["verdict"], "mismatch") << mismatch.dump();
  EXPECT_FALSE(mismatch["violation"].contains("mpi_rule")) << mismatch.dump();
  // An old trace's `mpi_error "TEXT"` (no rule) still reads; an unknown rule is bad input.
  EXPECT_EQ(verdict_of(mpi("rank 0 { mpi_error \"MPI_Put outside any access epoch\" }\nrank 1 { }")),
            Verdict::UsageError);
  try {
    (void)world_from(mpi("rank 0 { mpi_error no_such_rule \"x\" }\nrank 1 { }"));
    ADD_FAILURE() << "an unknown rule was taken";
  } catch (const model::InputError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown MPI rule 'no_such_rule': expected null_communicator, null_datatype"),
              std::string::npos)
        << e.what();
  }
}

TEST(MpiRules, APrintedNullCommunicatorCallReadsBack) {
  const checker::CheckResult r = check_text(mpi("rank * { barrier null }"));
  const std::string printed = model::print_world(*r.world);
  EXPECT_NE(printed.find("barrier null"), std::string::npos) << printed;
  EXPECT_EQ(verdict_of(printed), Verdict::UsageError) << printed;
}

}  // namespace
}  // namespace collmc::testing
