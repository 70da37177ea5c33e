// `history COMM [device=N] [host=N] [connected]` (LANGUAGE.md, "What a comm has behind it"): how it parses,
// resolves, prints back, what input it refuses (file, line, column), and what the checker makes of it: the
// slots the comm's calls take count on from N, and a connected comm is warm (its destroy waits for the
// peers', its first collective has no connect), exactly as after the calls it stands for.
#include <gtest/gtest.h>

#include <string>

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/print.h"
#include "collmc/model/world.h"
#include "trace_runs.h"

namespace collmc::testing {
namespace {

model::World world_of(const std::string& text) { return model::resolve(model::parse_string(text, "t.cmc")); }

std::string input_error(const std::string& text) {
  try {
    world_of(text);
  } catch (const model::InputError& e) {
    return e.what();
  }
  return "";
}

checker::CheckResult check_of(const model::World& w) { return checker::check(w, {}); }

// What a check finds, less line numbers (trace_runs.h): the verdict, every wait with its slot, the edges.
std::string waits_of(const std::string& text) { return check_outcome(text); }

TEST(CommHistory, ParsesResolvesAndPrintsBack) {
  const auto w = world_of(
      "ranks 2\ncomm A = [0, 1]\ncomm B = [0, 1] uninit\nhistory A device=133 connected\nhistory B host=2\n"
      "rank * { split A -> B\n all_reduce A x\n sync main }\n");
  ASSERT_EQ(w.comms.size(), 2u);
  EXPECT_EQ(w.comms[0].start_device, 133u);
  EXPECT_EQ(w.comms[0].start_host, 0u);
  EXPECT_TRUE(w.comms[0].start_connected);
  EXPECT_EQ(w.comms[1].start_host, 2u);
  EXPECT_FALSE(w.comms[1].start_connected);
  const std::string printed = model::print_world(w);
  EXPECT_NE(printed.find("history A device=133 connected\n"), std::string::npos) << printed;
  EXPECT_NE(printed.find("history B host=2\n"), std::string::npos) << printed;
  const auto again = world_of(printed);
  EXPECT_EQ(again.comms[0].start_device, 133u);
  EXPECT_TRUE(again.comms[0].start_connected);
  // A family's instances all start so.
  const auto fam = world_of("ranks 4\ncomm dp = {[0, 2], [1, 3]}\nhistory dp device=4\n");
  EXPECT_EQ(fam.comms[0].start_device, 4u);
  EXPECT_EQ(fam.comms[1].start_device, 4u);
}

TEST(CommHistory, RefusesWhatItCannotMean) {
  EXPECT_NE(
      input_error("ranks 2\ncomm A = [0, 1]\nhistory Z device=1\n").find("t.cmc:3:9: error: unknown communicator 'Z'"),
      std::string::npos)
      << input_error("ranks 2\ncomm A = [0, 1]\nhistory Z device=1\n");
  EXPECT_NE(input_error("ranks 2\ncomm A = [0, 1]\nhistory A device=1\nhistory A connected\n")
                .find("t.cmc:4:1: error: a second 'history' of 'A' (first at t.cmc:3:1)"),
            std::string::npos);
  EXPECT_NE(input_error("ranks 2\ncomm A = [0, 1]\nhistory A slots=1\n")
                .find("t.cmc:3:11: error: expected 'device=N', 'host=N', 'connected' or end of statement"),
            std::string::npos)
      << input_error("ranks 2\ncomm A = [0, 1]\nhistory A slots=1\n");
  EXPECT_NE(input_error("ranks 2\ncomm A = [0, 1]\nhistory A device=x\n").find("t.cmc:3:18: error: expected a count"),
            std::string::npos)
      << input_error("ranks 2\ncomm A = [0, 1]\nhistory A device=x\n");
  EXPECT_NE(input_error("ranks 2\ncomm A = [0, 1]\nhistory A device=1 device=2\n").find("'device' given twice"),
            std::string::npos);
  EXPECT_NE(input_error("ranks 2\nset profile = mpi\ncomm W = [0, 1]\nhistory W connected\n").find("an mpi comm"),
            std::string::npos);
}

TEST(CommHistory, AConnectedHistoryMakesTheDestroyWaitAsTheCollectiveDid) {
  // SEMANTICS.md §2: a destroy of a connected comm waits for every member's destroy. Cross-ordered destroys
  // of two warm comms hang; of two cold ones they complete.
  const std::string body =
      "rank 0 { split W -> A\n split W -> B\n destroy A\n destroy B }\n"
      "rank 1 { split W -> A\n split W -> B\n destroy B\n destroy A }\n";
  const std::string head = "ranks 2\ncomm W = [0, 1]\ncomm A = [0, 1] uninit\ncomm B = [0, 1] uninit\n";
  EXPECT_EQ(check_of(world_of(head + body)).verdict, model::Verdict::Safe);
  const std::string warm = head + "history A device=1 connected\nhistory B device=1 connected\n" + body;
  EXPECT_EQ(check_of(world_of(warm)).verdict, model::Verdict::Deadlock);
  // The same as the collectives themselves, wait by wait.
  const std::string ran =
      "rank 0 { split W -> A\n split W -> B\n all_reduce A x\n all_reduce B x\n sync device\n destroy A\n "
      "destroy B }\n"
      "rank 1 { split W -> A\n split W -> B\n all_reduce A x\n all_reduce B x\n sync device\n destroy B\n "
      "destroy A }\n";
  EXPECT_EQ(waits_of(head + ran), waits_of(warm));
  // Without `connected` only the slots count on: cold, the destroys complete.
  EXPECT_EQ(check_of(world_of(head + "history A device=1\nhistory B device=1\n" + body)).verdict, model::Verdict::Safe);
}

TEST(CommHistory, SlotsCountOnFromTheHistory) {
  // Rank 1 never makes its third all-reduce on A: rank 0's op waits in device slot 2 (with two before it).
  const std::string head = "ranks 2\ncomm A = [0, 1]\n";
  const std::string full = head + "rank 0 { all_reduce A x\n all_reduce A x\n all_reduce A x\n sync main }\n" +
                           "rank 1 { all_reduce A x\n all_reduce A x\n sync main }\n";
  const std::string cut =
      head + "history A device=2 connected\nrank 0 { all_reduce A x\n sync main }\nrank 1 { sync main }\n";
  EXPECT_EQ(check_of(world_of(full)).verdict, model::Verdict::Deadlock);
  EXPECT_EQ(waits_of(full), waits_of(cut));
  EXPECT_NE(waits_of(cut).find("device slot 2 of A"), std::string::npos) << waits_of(cut);
  // Cold (no `connected`), the first collective kept would wait in the connect instead: another story.
  const std::string cold = head + "history A device=2\nrank 0 { all_reduce A x\n sync main }\n";
  EXPECT_NE(waits_of(cold).find("connect"), std::string::npos) << waits_of(cold);
  // Host slots likewise: a register waits in host slot 3.
  const std::string reg = "ranks 2\ncomm A = [0, 1]\nhistory A host=3\nrank 0 { alloc w\n register A w }\n";
  EXPECT_NE(waits_of(reg).find("host slot 3 of A"), std::string::npos) << waits_of(reg);
}

TEST(CommHistory, ACommCreatedLaterStartsFromItsHistoryWhenCreated) {
  // split creates B; B's first kept collective is its device slot 5, warm.
  const std::string r =
      "ranks 2\ncomm W = [0, 1]\ncomm B = [0, 1] uninit\nhistory B device=5 connected\n"
      "rank 0 { split W -> B\n all_reduce B x\n sync main }\nrank 1 { split W -> B\n sync main }\n";
  EXPECT_EQ(check_of(world_of(r)).verdict, model::Verdict::Deadlock);
  EXPECT_NE(waits_of(r).find("device slot 5 of B"), std::string::npos) << waits_of(r);
  EXPECT_EQ(waits_of(r).find("connect"), std::string::npos) << waits_of(r);
}

}  // namespace
}  // namespace collmc::testing
