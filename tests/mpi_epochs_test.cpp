// MPI one-sided calls in the scenario language, and the epoch rules the semantics judges from them (issue 32
// item 3; MPI 4.1 sec. 12.5; checker/src/call_effects.cpp window_call, epochs_closed). Each rule in both
// outcomes on hand-written scenarios, in every interleaving of a rank's threads; the statements print and read
// back; bad input is refused. The imported form of the same calls: mpi_usage_rules_test.cpp.
#include <gtest/gtest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "collmc/model/print.h"
#include "collmc/model/source.h"
#include "collmc/report/check_report.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using model::Verdict;

// Two ranks, one window `w` on world; `body` is both ranks' calls between the window's creation and free.
std::string on_window(const std::string& rank0, const std::string& rank1 = "") {
  return "ranks 2\nset profile = mpi\ncomm world = all\nrank 0 {\n  register world w\n" + rank0 +
         "\n  deregister world w\n}\nrank 1 {\n  register world w\n" + rank1 + "\n  deregister world w\n}\n";
}

void expect_epoch_error(const std::string& text, const std::string& says) {
  const checker::CheckResult r = check_text(text);
  ASSERT_EQ(r.verdict, Verdict::UsageError) << text;
  ASSERT_TRUE(r.violation.has_value());
  EXPECT_NE(r.violation->message.find(says), std::string::npos) << r.violation->message;
  EXPECT_NE(r.violation->message.find("(MPI 4.1 sec. 12.5)"), std::string::npos) << r.violation->message;
  const auto j = nlohmann::json::parse(report::json_report(r));
  EXPECT_EQ(j["violation"]["mpi_rule"], "rma_epoch") << j.dump();
}

TEST(MpiEpochs, ATransferStandsInsideAnAccessEpoch) {
  expect_epoch_error(on_window("  put world 1 w"),
                     "put (MPI_Put) to rank 1 on 'w' of world outside any access epoch: no win_fence, win_lock, "
                     "win_lock_all or win_start opened one");
  expect_epoch_error(on_window("  get world 1 w call=Rget"), "get (MPI_Rget) to rank 1");
  // Each epoch kind opens one.
  EXPECT_EQ(verdict_of(on_window("  win_lock world 1 w\n  put world 1 w\n  win_unlock world 1 w")), Verdict::Safe);
  EXPECT_EQ(verdict_of(on_window("  win_lock_all world w\n  accumulate world 1 w op=sum\n  win_unlock_all world w")),
            Verdict::Safe);
  EXPECT_EQ(verdict_of(on_window("  win_start world w\n  put world 1 w\n  win_complete world w")), Verdict::Safe);
  EXPECT_EQ(verdict_of(on_window("  win_fence world w\n  get world 1 w\n  win_fence world w mode=nosucceed",
                                 "  win_fence world w\n  win_fence world w mode=nosucceed")),
            Verdict::Safe);
  // A lock of another target opens no epoch at this one.
  expect_epoch_error(on_window("  win_lock world 0 w\n  put world 1 w\n  win_unlock world 0 w"), "outside any access");
  // Inside a group (the import's nonblocking calls one wait completes, a put made among them) the same.
  expect_epoch_error(on_window("  group {\n    send world 1 x\n    put world 1 w\n  }", "  recv world 0 x"),
                     "outside any access epoch");
  // A fence with MPI_MODE_NOSUCCEED opens none.
  expect_epoch_error(
      on_window("  win_fence world w mode=nosucceed\n  put world 1 w", "  win_fence world w mode=nosucceed"),
      "outside any access epoch");
}

TEST(MpiEpochs, AccessEpochsAtOneProcessAreDisjoint) {
  expect_epoch_error(on_window("  win_lock world 1 w\n  win_lock world 1 w mode=shared"),
                     "win_lock (MPI_Win_lock) of rank 1 on 'w' of world while this rank already holds a lock of it");
  expect_epoch_error(on_window("  win_lock_all world w\n  win_lock world 1 w"), "already holds win_lock_all");
  expect_epoch_error(on_window("  win_lock world 0 w\n  win_lock_all world w"), "already holds a lock");
  expect_epoch_error(on_window("  win_start world w\n  win_start world w"), "inside an access epoch it started before");
  expect_epoch_error(on_window("", "  win_post world w\n  win_post world w"), "inside an exposure epoch it posted");
  // Locks of two targets at once are one passive-target epoch each: allowed (MPI 4.1 sec. 12.5.3).
  EXPECT_EQ(verdict_of(on_window("  win_lock world 0 w\n  win_lock world 1 w mode=shared\n  win_unlock world 1 w\n"
                                 "  win_unlock world 0 w")),
            Verdict::Safe);
  // A lock epoch inside a fence epoch is its own epoch (MPICH's test/mpi/rma/mixedsync.c; SEMANTICS_NOTES.md).
  EXPECT_EQ(verdict_of(on_window("  win_fence world w\n  win_lock world 1 w\n  put world 1 w\n  win_unlock world 1 w\n"
                                 "  win_fence world w",
                                 "  win_fence world w\n  win_fence world w")),
            Verdict::Safe);
}

TEST(MpiEpochs, AnEpochIsClosedOnlyWhenOpen) {
  expect_epoch_error(on_window("  win_unlock world 1 w"),
                     "win_unlock (MPI_Win_unlock) of rank 1 on 'w' of world, which "
                     "this rank has not locked");
  expect_epoch_error(on_window("  win_unlock_all world w"), "without win_lock_all");
  expect_epoch_error(on_window("  win_flush world 1 w"), "outside a passive-target epoch");
  expect_epoch_error(on_window("  win_lock world 0 w\n  win_flush_all world w mode=local\n  win_unlock world 0 w\n"
                               "  win_flush_all world w"),
                     "win_flush_all (MPI_Win_flush_all) on 'w' of world outside a passive-target epoch");
  expect_epoch_error(on_window("  win_complete world w"), "without win_start");
  expect_epoch_error(on_window("", "  win_wait world w"), "without win_post");
  EXPECT_EQ(verdict_of(on_window("  win_lock world 1 w\n  put world 1 w\n  win_flush world 1 w mode=local\n"
                                 "  win_flush world 1 w\n  win_unlock world 1 w",
                                 "  win_post world w\n  win_wait world w")),
            Verdict::Safe);
}

TEST(MpiEpochs, AWindowIsFreedAndTheRankFinalizedWithEveryEpochClosed) {
  expect_epoch_error(on_window("  win_lock world 1 w"),
                     "win_free (MPI_Win_free) of 'w' of world while its epoch from a win_lock of rank 1 is still open");
  expect_epoch_error(on_window("  win_lock_all world w"), "its epoch from win_lock_all is still open");
  expect_epoch_error(on_window("  win_start world w"), "its epoch from win_start is still open");
  // Transfers of a fence epoch need a fence to complete them before the free (MPI 4.1 sec. 12.5.1).
  expect_epoch_error(on_window("  win_fence world w\n  put world 1 w", "  win_fence world w"),
                     "with RMA calls after its last win_fence and no fence to complete them");
  // An open fence epoch with no transfer in it is no error (every fence opens one, the last too).
  EXPECT_EQ(verdict_of(on_window("  win_fence world w\n  put world 1 w\n  win_fence world w",
                                 "  win_fence world w\n  win_fence world w")),
            Verdict::Safe);
  // MPI_Finalize with a window never freed: its epochs are judged there; without mpi_finalize nothing is.
  const std::string never_freed =
      "ranks 1\nset profile = mpi\ncomm world = all\nrank 0 {\n  register world w\n  win_lock world 0 w\n";
  expect_epoch_error(never_freed + "  mpi_finalize\n}\n",
                     "mpi_finalize of 'w' of world while its epoch from a win_lock");
  EXPECT_EQ(verdict_of(never_freed + "}\n"), Verdict::Safe);
  EXPECT_EQ(verdict_of(never_freed + "  win_unlock world 0 w\n  mpi_finalize\n}\n"), Verdict::Safe);
}

TEST(MpiEpochs, ACallOnNoWindowIsAnArgumentError) {
  const checker::CheckResult r = check_text(
      "ranks 2\nset profile = mpi\ncomm world = all\nrank 0 { register world w\n deregister world w\n"
      " win_lock world 1 w }\nrank 1 { register world w\n deregister world w }\n");
  ASSERT_EQ(r.verdict, Verdict::UsageError);
  EXPECT_NE(r.violation->message.find("win_lock (MPI_Win_lock) on 'w' of world, which is no window of this rank"),
            std::string::npos)
      << r.violation->message;
  EXPECT_EQ(nlohmann::json::parse(report::json_report(r))["violation"]["mpi_rule"], "rma_argument");
}

// A rank's epochs are its process's: two threads that open and use one epoch are explored in every order, and
// the order in which a put comes before the other thread's lock is found.
TEST(MpiEpochs, ThreadsOfARankAreJudgedInEveryInterleaving) {
  const std::string racy =
      "ranks 2\nset profile = mpi\ncomm world = all\nrank 0 {\n  register world w\n"
      "  thread a { win_lock world 1 w }\n  thread b { put world 1 w }\n}\nrank 1 { register world w }\n";
  expect_epoch_error(racy, "outside any access epoch");
  const std::string ordered =
      "ranks 2\nset profile = mpi\ncomm world = all\nrank 0 {\n  register world w\n"
      "  thread a { win_lock world 1 w\n store_set \"locked\" }\n  thread b { store_wait \"locked\"\n put world 1 w }\n"
      "}\nrank 1 { register world w }\n";
  EXPECT_EQ(verdict_of(ordered), Verdict::Safe);
}

// The fence is collective over the window's comm: a fence a rank does not reach is a deadlock, as a barrier
// is, and it matches only another fence.
TEST(MpiEpochs, TheFenceIsACollectiveOfItsWindow) {
  EXPECT_EQ(verdict_of(on_window("  win_fence world w", "  recv world 0 x")), Verdict::Deadlock);
  EXPECT_EQ(verdict_of(on_window("  win_fence world w", "  barrier world")), Verdict::Mismatch);
  EXPECT_EQ(verdict_of(on_window("  win_fence world w", "")), Verdict::Mismatch);  // against MPI_Win_free
}

TEST(MpiEpochs, TheStatementsPrintAndReadBack) {
  const std::string text = on_window(
      "  win_fence world w\n  put world 1 w call=Rput\n  get world 1 w\n  accumulate world 1 w op=max "
      "call=Fetch_and_op\n"
      "  win_fence world w mode=nosucceed\n  win_lock world 1 w mode=shared\n  win_flush world 1 w mode=local\n"
      "  win_unlock world 1 w\n  win_lock_all world w\n  win_flush_all world w\n  win_unlock_all world w\n"
      "  win_start world w\n  win_complete world w\n  win_post world w\n  win_wait world w",
      "  win_fence world w\n  win_fence world w mode=nosucceed");
  const model::World w = world_from(text);
  const std::string printed = model::print_world(w);
  for (const char* line : {"put world 1 w call=Rput", "accumulate world 1 w op=max call=Fetch_and_op",
                           "win_fence world w mode=nosucceed", "win_lock world 1 w mode=shared",
                           "win_flush world 1 w mode=local", "win_flush_all world w", "win_wait world w"})
    EXPECT_NE(printed.find(line), std::string::npos) << line << "\n" << printed;
  EXPECT_EQ(model::print_world(world_from(printed)), printed);
  EXPECT_EQ(verdict_of(printed), Verdict::Safe) << printed;
}

TEST(MpiEpochs, BadInputIsRefusedWithWhatWasExpected) {
  auto input_error = [](const std::string& text, const std::string& says) {
    try {
      (void)world_from(text);
      ADD_FAILURE() << "no error for: " << text;
    } catch (const model::InputError& e) {
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  input_error(on_window("  win_lock world 1 w mode=local"),
              "unknown mode 'local' of win_lock: expected exclusive or shared");
  input_error(on_window("  win_fence world w mode=shared"), "unknown mode 'shared' of win_fence: expected nosucceed");
  input_error(on_window("  put world 1 w mode=local"), "unknown argument 'mode'");
  input_error(on_window("  win_unlock_all world w call=Rput"), "unknown argument 'call'");
  input_error("ranks 2\ncomm world = all\nrank * { register world w\n win_lock_all world w }",
              "'win_lock_all' (MPI_Win_lock_all) needs an mpi communicator");
  input_error("ranks 1\ncomm world = all\nrank 0 { mpi_finalize }", "needs 'set profile = mpi'");
}

}  // namespace
}  // namespace collmc::testing
