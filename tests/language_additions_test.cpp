// Issue 14's language additions: per_rank communicators and init member lists, comm profiles, the
// nccl_version knob, store statements and one-sided calls: how they parse, resolve, print back, and
// which input they refuse (file, line, column).
#include <gtest/gtest.h>

#include <string>

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/print.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"

namespace collmc::testing {
namespace {

using model::OpKind;

model::World world_of(const std::string& text) { return model::resolve(model::parse_string(text, "t.cmc")); }

std::string input_error(const std::string& text) {
  try {
    world_of(text);
  } catch (const model::InputError& e) {
    return e.what();
  }
  return "";
}

model::Verdict verdict_of(const std::string& text) { return checker::check(world_of(text), {}).verdict; }

TEST(PerRankComm, MembersAreTheJoinersLists) {
  const auto w = world_of(
      "ranks 4\ncomm G = per_rank\nrank 0, 1 { init G [0, 1, 2] }\nrank 2 { init G [0, 1, 2] }\n"
      "rank 3 { init G [0, 1] }\n");
  ASSERT_EQ(w.comms.size(), 1u);
  EXPECT_TRUE(w.comms[0].per_rank);
  EXPECT_TRUE(w.comms[0].uninit);
  EXPECT_EQ(w.comms[0].members, (std::vector<int>{0, 1, 2}));
  // Rank 3 names a list without itself: it joins nothing and issues no call.
  EXPECT_TRUE(w.programs[3].threads[0].body.children.empty());
  for (const auto& c : w.calls) {
    if (c.kind == OpKind::Init) {
      EXPECT_EQ(c.members_view, (std::vector<int>{0, 1, 2}));
    }
  }
}

TEST(PerRankComm, VerdictsInBothOutcomes) {
  const std::string head = "ranks 2\ncomm G = per_rank\n";
  EXPECT_EQ(verdict_of(head + "rank * { init G [0, 1]\n all_reduce G x\n sync main }\n"), model::Verdict::Safe);
  EXPECT_EQ(verdict_of(head + "rank 0 { init G [0, 1] }\nrank 1 { init G all }\n"), model::Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 3\ncomm G = per_rank\nrank 0 { init G [0, 1] }\nrank 1, 2 { init G [0, 1, 2] }\n"),
            model::Verdict::Mismatch);
  EXPECT_EQ(verdict_of("ranks 3\ncomm G = per_rank\nrank 0, 1 { init G [0, 1, 2] }\n"), model::Verdict::Deadlock);
}

TEST(PerRankComm, MismatchNamesBothLists) {
  const model::World world1 =
      world_of("ranks 3\ncomm G = per_rank\nrank 0 { init G [0, 1] }\nrank 1, 2 { init G [0, 1, 2] }\n");
  auto r = checker::check(world1, {});
  ASSERT_EQ(r.verdict, model::Verdict::Mismatch);
  const std::string text = report::text_report(r);
  EXPECT_NE(text.find("passes [0, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("passes [0, 1, 2]"), std::string::npos) << text;
}

TEST(PerRankComm, BadInputSaysWhere) {
  EXPECT_NE(input_error("ranks 2\ncomm G = per_rank\nrank * { init G }\n").find("t.cmc:3:15"), std::string::npos)
      << input_error("ranks 2\ncomm G = per_rank\nrank * { init G }\n");
  EXPECT_NE(input_error("ranks 2\ncomm G = per_rank\nrank * { alloc x }\n").find("no rank joins"), std::string::npos);
  EXPECT_NE(input_error("ranks 2\ncomm P = all\ncomm G = per_rank\nrank * { split P -> G }\n").find("per_rank"),
            std::string::npos);
}

TEST(PerRankComm, PrintsBackToTheSameWorld) {
  const std::string text = "ranks 3\ncomm G = per_rank\nrank 0, 1 { init G [0, 1] }\nrank 2 { init G [0, 1] }\n";
  const auto w = world_of(text);
  const std::string printed = model::print_world(w, "");
  EXPECT_NE(printed.find("comm G = per_rank"), std::string::npos) << printed;
  EXPECT_NE(printed.find("init G [0, 1]"), std::string::npos) << printed;
  const auto again = world_of(printed);
  EXPECT_EQ(again.comms[0].members, w.comms[0].members);
}

TEST(CommProfile, PerCommunicatorLibrary) {
  const auto w = world_of("ranks 2\ncomm W = all mpi\ncomm G = all\nrank * { all_reduce W x\n all_reduce G y }\n");
  EXPECT_EQ(w.comms[0].profile, model::Profile::Mpi);
  EXPECT_EQ(w.comms[1].profile, model::Profile::Nccl);
  EXPECT_TRUE(w.mixed_profiles());
  EXPECT_EQ(w.profile_of(w.calls[0]), model::Profile::Mpi);
  EXPECT_EQ(w.profile_of(w.calls[1]), model::Profile::Nccl);
  EXPECT_NE(model::print_world(w, "").find("comm W = [0, 1] mpi"), std::string::npos);
  EXPECT_NE(input_error("ranks 2\ncomm W = all mpi nccl\n").find("given twice"), std::string::npos);
}

TEST(CommProfile, MpiCollectiveBlocksTheHostNcclOneDoesNot) {
  // Cross-ordered all-reduces on two comms: NCCL's are stream-ordered (warm comms on two streams
  // complete), MPI's are host-blocking (they hang).
  const std::string body =
      "rank 0 { all_reduce A x\n all_reduce B y on s2\n sync main\n sync s2 }\n"
      "rank 1 { all_reduce B y on s2\n all_reduce A x\n sync main\n sync s2 }\n";
  EXPECT_EQ(verdict_of("ranks 2\nset runtime_connect = off\ncomm A = all\ncomm B = all\n" + body),
            model::Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\nset runtime_connect = off\ncomm A = all mpi\ncomm B = all mpi\n" + body),
            model::Verdict::Deadlock);
}

TEST(NcclVersion, ParsesPrintsAndRefuses) {
  EXPECT_EQ(world_of("ranks 1\n").knobs.nccl_version, model::kCalibratedNcclVersion);
  EXPECT_EQ(world_of("ranks 1\nset nccl_version = 2.29\n").knobs.nccl_version, 22900u);
  EXPECT_EQ(world_of("ranks 1\nset nccl_version = 2.30.7\n").knobs.nccl_version, 23007u);
  EXPECT_NE(model::print_world(world_of("ranks 1\nset nccl_version = 2.31.2\n"), "").find("set nccl_version = 2.31.2"),
            std::string::npos);
  EXPECT_NE(input_error("ranks 1\nset nccl_version = 3.1\n").find("t.cmc:2:20"), std::string::npos);
  EXPECT_NE(input_error("ranks 1\nset nccl_version = latest\n").find("NCCL release"), std::string::npos);
  // A rank range still lexes as before.
  EXPECT_EQ(world_of("ranks 4\ncomm A = [0..3]\n").comms[0].members.size(), 4u);
}

TEST(OneSided, VersionGateAndStaticWindowCheck) {
  const std::string comms = "ranks 2\ncomm A = all\n";
  const std::string good =
      "rank 0 { alloc w\n alloc x\n register A w\n register A x\n put_signal A 1 x -> w\n sync main }\n"
      "rank 1 { alloc w\n alloc x\n register A w\n register A x\n wait_signal A 0\n sync main }\n";
  EXPECT_EQ(verdict_of(comms + good), model::Verdict::UsageError);  // 2.28 has no ncclPutSignal
  EXPECT_EQ(verdict_of("set nccl_version = 2.29\n" + comms + good), model::Verdict::Safe);
  EXPECT_EQ(
      verdict_of("ranks 2\nset nccl_version = 2.29\ncomm A = all\nrank 1 { wait_signal A 0 count=2\n sync main }\n"
                 "rank 0 { signal A 1\n sync main }\n"),
      model::Verdict::Deadlock);
  const auto w = world_of("ranks 2\nset nccl_version = 2.29\n" + comms.substr(8) + good);
  const std::string printed = model::print_world(w, "");
  EXPECT_NE(printed.find("put_signal A 1 x -> w"), std::string::npos) << printed;
  EXPECT_NE(printed.find("wait_signal A 0"), std::string::npos) << printed;
  EXPECT_NE(input_error("ranks 2\ncomm A = all\nrank 0 { put_signal A 1 x }\n").find("'->'"), std::string::npos);
}

TEST(Store, FormsAndVerdicts) {
  const auto w = world_of("ranks 2\nrank * { host_barrier \"rdzv 1\"\n store_set k }\n");
  EXPECT_EQ(w.keys.size(), 2u);
  EXPECT_EQ(w.calls[0].members_view, (std::vector<int>{0, 1}));
  EXPECT_NE(model::print_world(w, "").find("host_barrier \"rdzv 1\" [0, 1]"), std::string::npos);
  EXPECT_EQ(verdict_of("ranks 2\nrank * { host_barrier b1 }\n"), model::Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\nrank 0 { host_barrier b1 }\nrank 1 { host_barrier b2 }\n"), model::Verdict::Deadlock);
  // A reused key: the second barrier passes at once (c10d's counter stays).
  EXPECT_EQ(verdict_of("ranks 2\nrank 0 { host_barrier b\n host_barrier b }\nrank 1 { host_barrier b }\n"),
            model::Verdict::Safe);
  const model::World world2 = world_of("ranks 2\nrank 1 { store_wait ready }\nrank 0 { maybe { store_set ready } }\n");
  auto r = checker::check(world2, {});
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  EXPECT_NE(report::text_report(r).find("host store key \"ready\""), std::string::npos) << report::text_report(r);
}

TEST(Threads, TwoThreadsInsideOneCommIsAUsageError) {
  const model::World world = world_of(
      "ranks 2\ncomm A = all\nrank 0 { alloc wa\n thread ta { register A wa }\n thread tb { all_reduce A x\n "
      "sync main } }\nrank 1 { alloc wa\n all_reduce A x\n sync main\n register A wa }\n");
  auto r = checker::check(world, {});  // the result points at the world
  ASSERT_EQ(r.verdict, model::Verdict::UsageError);
  const std::string text = report::text_report(r);
  EXPECT_NE(text.find("two host threads inside A"), std::string::npos) << text;
  // MPI (MPI_THREAD_MULTIPLE) allows two threads in point-to-point calls on one comm, not in two collectives
  // at once (MPI 4.1 sec. 11.6.2: the threads must order them).
  const model::World mpi_world = world_of(
      "ranks 2\nset profile = mpi\ncomm A = all\nrank 0 { thread ta { barrier A }\n "
      "thread tb { barrier A } }\nrank 1 { barrier A\n barrier A }\n");
  auto mpi = checker::check(mpi_world, {});
  ASSERT_EQ(mpi.verdict, model::Verdict::UsageError);
  EXPECT_NE(report::text_report(mpi).find("two threads in collectives on A at once"), std::string::npos)
      << report::text_report(mpi);
  EXPECT_EQ(checker::check(world_of("ranks 2\nset profile = mpi\ncomm A = all\nrank 0 { thread ta { recv A 1 x }\n "
                                    "thread tb { send A 1 y } }\nrank 1 { send A 0 x\n recv A 0 y }\n"),
                           {})
                .verdict,
            model::Verdict::Safe);
}

// Issue 14 item 4: `process P = [..]`, ranks one host thread drives.
TEST(Process, ParsesResolvesAndPrintsBack) {
  const std::string text = "ranks 4\nprocess node0 = [0, 1]\nprocess node1 = [2, 3]\ncomm A = all\nrank * { }\n";
  const auto w = world_of(text);
  ASSERT_EQ(w.processes.size(), 2u);
  EXPECT_EQ(w.processes[1].name, "node1");
  EXPECT_EQ(w.processes[1].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(w.process_of(0), 0);
  EXPECT_EQ(w.process_of(3), 1);
  const std::string printed = model::print_world(w, "");
  EXPECT_NE(printed.find("process node1 = [2, 3]"), std::string::npos) << printed;
  EXPECT_EQ(world_of(printed).processes[0].ranks, w.processes[0].ranks);
  // A process of one rank is what every rank is anyway.
  EXPECT_TRUE(world_of("ranks 2\nprocess p = [1]\nrank * { }\n").processes.empty());
}

TEST(Process, BadInputSaysWhere) {
  EXPECT_NE(input_error("ranks 2\nprocess p = [0, 1]\nprocess q = [1]\n").find("t.cmc:3:13"), std::string::npos)
      << input_error("ranks 2\nprocess p = [0, 1]\nprocess q = [1]\n");
  EXPECT_NE(input_error("ranks 2\nprocess p = [0, 1]\nprocess p = [0]\n").find("declared twice"), std::string::npos);
  EXPECT_NE(input_error("process p = [0, 1]\nranks 2\n").find("before 'ranks N'"), std::string::npos);
  EXPECT_NE(input_error("ranks 2\nprocess p = [0, 1]\nrank 0 { thread t { alloc x } }\n").find("`thread` block"),
            std::string::npos);
  EXPECT_NE(input_error("ranks 2\nprocess p = 0\n").find("a rank set"), std::string::npos);
}

TEST(Process, OneThreadBlocksTheProcessUnlessTheCallsAreGrouped) {
  const std::string two = "ranks 2\nprocess host = [0, 1]\n";
  // ncclCommInitRank per device in a loop: the first blocks the thread.
  EXPECT_EQ(verdict_of(two + "comm A = all uninit\nrank * { init A }\n"), model::Verdict::Deadlock);
  EXPECT_EQ(verdict_of(two + "comm A = all uninit\nrank * { group { init A } }\n"), model::Verdict::Safe);
  // Without the process each rank is its own process: the same loop completes.
  EXPECT_EQ(verdict_of("ranks 2\ncomm A = all uninit\nrank * { init A }\n"), model::Verdict::Safe);
  // A cold all-reduce waits in the connect; a warm one (runtime_connect = off) is only enqueued.
  EXPECT_EQ(verdict_of(two + "comm A = all\nrank * { all_reduce A x; sync main }\n"), model::Verdict::Deadlock);
  EXPECT_EQ(verdict_of(two + "comm A = all\nrank * { group { all_reduce A x }; sync main }\n"), model::Verdict::Safe);
  EXPECT_EQ(verdict_of(two + "set runtime_connect = off\ncomm A = all\nrank * { all_reduce A x; sync main }\n"),
            model::Verdict::Safe);
  // The thread issues the ranks' calls in turn: rank 0's sync comes after rank 1's all-reduce.
  EXPECT_EQ(verdict_of(two + "set runtime_connect = off\ncomm A = all\nrank * { all_reduce A x\n sync main }\n"),
            model::Verdict::Safe);
  // A group of rank 0 followed by a call of rank 1 outside any group: rank 0's group end blocks.
  EXPECT_EQ(verdict_of(two + "comm A = all uninit\nrank 0 { group { init A } }\nrank 1 { init A }\n"),
            model::Verdict::Deadlock);
  // Two rounds of groups: the second round waits for the first.
  EXPECT_EQ(
      verdict_of(two + "comm A = all uninit\ncomm B = all uninit\nrank * { group { init A }; group { init B } }\n"),
      model::Verdict::Safe);
  // A rank whose body ended is skipped.
  EXPECT_EQ(verdict_of(two + "set runtime_connect = off\ncomm A = all\nrank 0 { all_reduce A x; sync main; alloc z }\n"
                             "rank 1 { all_reduce A x }\n"),
            model::Verdict::Safe);
}

TEST(Process, TheReportNamesTheRankHoldingTheThread) {
  const model::World world = world_of("ranks 2\nprocess host = [0, 1]\ncomm A = all uninit\nrank * { init A }\n");
  auto r = checker::check(world, {});  // the result points at the world
  ASSERT_EQ(r.verdict, model::Verdict::Deadlock);
  const std::string text = report::text_report(r);
  EXPECT_NE(text.find("host thread of process host, which is blocked in rank 0's `init A`"), std::string::npos) << text;
}

}  // namespace
}  // namespace collmc::testing
