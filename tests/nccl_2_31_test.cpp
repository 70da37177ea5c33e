// Issue 36: the rules of NCCL 2.31 (read in the 2.31.0a16 source, measured on one shared H200) and 2.32
// (from the release notes), and the mechanisms real reports show (one comm on several streams, the P2P
// operations of one group, a framework-level group shared by threads). Each rule in both outcomes; the
// sources (file:line) are in docs/SEMANTICS_NOTES.md ("NCCL 2.31 and 2.32").
#include <gtest/gtest.h>

#include <string>

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/print.h"
#include "collmc/model/source.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"

namespace collmc::testing {
namespace {

using model::Verdict;

model::World world_of(const std::string& text) { return model::resolve(model::parse_string(text, "t.cmc")); }
Verdict verdict_of(const std::string& text) { return checker::check(world_of(text), {}).verdict; }
std::string report_of(const std::string& text) { return report::text_report(checker::check(world_of(text), {})); }

// Two ranks on comm A (and B) at NCCL VERSION.
std::string two(const std::string& version, const std::string& comms = "comm A = [0, 1]\n") {
  return "ranks 2\nset nccl_version = " + version + "\n" + comms;
}
// `rank * { COMMON when rank in [0] { R0 } when rank in [1] { R1 } }` (`rank *` is only for ranks without a
// body of their own, so a common part and per-rank parts go into one body).
std::string bodies(const std::string& common, const std::string& r0, const std::string& r1) {
  return "rank * {\n" + common + "when rank in [0] {\n" + r0 + "}\nwhen rank in [1] {\n" + r1 + "}\n}\n";
}
const std::string k230 = "2.30.7";
const std::string k231 = "2.31.0a16";

TEST(Nccl231, TheReleasesItKnows) {
  const auto w = world_of("ranks 1\nset nccl_version = 2.31.0a16\n");
  EXPECT_TRUE(w.warnings.empty());
  EXPECT_EQ(w.knobs.nccl_version, model::nccl_version_code(2, 31, 0));  // NCCL_VERSION_CODE 23100
  EXPECT_NE(model::print_world(w, "").find("set nccl_version = 2.31.0a16"), std::string::npos);
  for (const char* v : {"2.31.2", "2.32.3", "2.32.6", "2.32"})
    EXPECT_TRUE(world_of(std::string("ranks 1\nset nccl_version = ") + v + "\n").warnings.empty()) << v;
  const auto near = world_of("ranks 1\nset nccl_version = 2.32.1\n");
  ASSERT_EQ(near.warnings.size(), 1u);
  EXPECT_NE(near.warnings[0].message.find("the nearest known is 2.32.3"), std::string::npos)
      << near.warnings[0].message;
  // A pre-release suffix belongs to a full 2.MINOR.PATCH.
  try {
    world_of("ranks 1\nset nccl_version = 2.31a16\n");
    ADD_FAILURE() << "2.31a16 accepted";
  } catch (const model::InputError& e) {
    EXPECT_EQ(e.loc().str(), "t.cmc:2:20");
    EXPECT_NE(std::string(e.what()).find("2.MINOR.PATCHaN"), std::string::npos) << e.what();
  }
}

TEST(Nccl231, DestroyRunsAnIntraNodeBarrierWarmOrCold) {
  const std::string cold = "rank 0 {\n destroy A\n}\n";
  EXPECT_EQ(verdict_of(two(k230) + cold), Verdict::Safe);  // measured on 2.28.3 and 2.30.7
  EXPECT_EQ(verdict_of(two(k231) + cold), Verdict::Deadlock);
  EXPECT_NE(report_of(two(k231) + cold).find("intra-node barrier of ncclCommDestroy"), std::string::npos)
      << report_of(two(k231) + cold);
  EXPECT_EQ(verdict_of(two(k231) + "rank * {\n destroy A\n}\n"), Verdict::Safe);
  // Destroys of two comms in opposite orders: each rank waits in a different barrier.
  const std::string cross = "rank 0 {\n destroy A\n destroy B\n}\nrank 1 {\n destroy B\n destroy A\n}\n";
  const std::string ab = "comm A = [0, 1]\ncomm B = [0, 1]\n";
  EXPECT_EQ(verdict_of(two(k230, ab) + cross), Verdict::Safe);
  EXPECT_EQ(verdict_of(two(k231, ab) + cross), Verdict::Deadlock);
}

TEST(Nccl231, AnAbortNeverJoinsTheDestroyBarrier) {
  const std::string warm = bodies(" all_reduce A warm\n sync main\n", " abort A\n", " destroy A\n");
  EXPECT_EQ(verdict_of(two(k230) + warm), Verdict::Safe);  // up to 2.30.x the abort counts
  EXPECT_EQ(verdict_of(two(k231) + warm), Verdict::Deadlock);
  EXPECT_EQ(verdict_of(two("2.31.2") + warm), Verdict::Deadlock);
  EXPECT_NE(report_of(two(k231) + warm).find("never joins"), std::string::npos) << report_of(two(k231) + warm);
  // Both abort: nobody waits.
  EXPECT_EQ(verdict_of(two(k231) + "rank * {\n all_reduce A warm\n sync main\n abort A\n}\n"), Verdict::Safe);
  // A revoked comm is finalized: its destroy runs no barrier, and its peers' barrier misses it.
  const std::string revoke = "rank 0 {\n revoke A\n destroy A\n}\nrank 1 {\n destroy A\n}\n";
  EXPECT_EQ(verdict_of(two(k230) + revoke), Verdict::Safe);
  EXPECT_EQ(verdict_of(two(k231) + revoke), Verdict::Deadlock);
  EXPECT_EQ(verdict_of(two(k231) + "rank 0 {\n revoke A\n destroy A\n}\n"), Verdict::Safe);
}

TEST(Nccl231, FinalizeIsAnIntraNodeCollective) {
  const std::string idle = "rank 0 {\n finalize A\n}\n";
  EXPECT_EQ(verdict_of(two(k230) + idle), Verdict::Safe);
  EXPECT_EQ(verdict_of(two(k231) + idle), Verdict::Deadlock);
  EXPECT_NE(report_of(two(k231) + idle).find("intra-node barrier of ncclCommFinalize"), std::string::npos);
  // The documented teardown, and a finalize meeting the peer's destroy: the destroy after finalize is local.
  EXPECT_EQ(verdict_of(two(k231) + "rank * {\n finalize A\n destroy A\n}\n"), Verdict::Safe);
  EXPECT_EQ(verdict_of(two(k231) + "rank 0 {\n finalize A\n destroy A\n}\nrank 1 {\n destroy A\n}\n"), Verdict::Safe);
  // Finalizes of two comms in opposite orders hang (the language has no finalize inside a group, which
  // the user guide asks for when one thread finalizes several comms).
  const std::string ab = "comm A = [0, 1]\ncomm B = [0, 1]\n";
  EXPECT_EQ(
      verdict_of(two(k231, ab) + "rank 0 {\n finalize A\n finalize B\n}\nrank 1 {\n finalize B\n finalize A\n}\n"),
      Verdict::Deadlock);
  // A nonblocking finalize returns at once; the destroy after it waits for the barrier.
  const std::string nb = "comm A = [0, 1] nonblocking\n";
  EXPECT_EQ(verdict_of(two(k231, nb) + "rank 0 {\n finalize A\n}\n"), Verdict::Safe);
  EXPECT_EQ(verdict_of(two(k231, nb) + "rank 0 {\n finalize A\n destroy A\n}\n"), Verdict::Deadlock);
  EXPECT_EQ(verdict_of(two(k231, nb) + "rank 0 {\n finalize A\n destroy A\n}\nrank 1 {\n destroy A\n}\n"),
            Verdict::Safe);
}

TEST(Nccl231, SignalsNeedAWindowOrEagerInit) {
  const std::string bare = "rank 0 {\n signal A 1\n sync main\n}\nrank 1 {\n wait_signal A 0\n sync main\n}\n";
  EXPECT_EQ(verdict_of(two(k230) + bare), Verdict::Safe);  // the first one-sided call is the rendezvous
  EXPECT_EQ(verdict_of(two(k231) + bare), Verdict::UsageError);
  EXPECT_NE(report_of(two(k231) + bare).find("before RMA is initialized"), std::string::npos);
  EXPECT_EQ(verdict_of(two(k231) + "set rma_eager_init = on\n" + bare), Verdict::Safe);
  EXPECT_EQ(verdict_of(two(k231) + bodies(" alloc w\n register A w\n", " signal A 1\n sync main\n",
                                          " wait_signal A 0\n sync main\n")),
            Verdict::Safe);
  // In one group with the registration: the setup runs at the group's end, after the signal was enqueued.
  EXPECT_EQ(verdict_of(two(k231) + "rank 0 {\n alloc w\n group { register A w; signal A 1 }\n sync main\n}\n"
                                   "rank 1 {\n alloc w\n register A w\n wait_signal A 0\n sync main\n}\n"),
            Verdict::UsageError);
  // The knob prints back.
  EXPECT_NE(model::print_world(world_of(two(k231) + "set rma_eager_init = on\n"), "").find("set rma_eager_init = on"),
            std::string::npos);
}

TEST(Nccl231, TheFirstOneSidedCallIsNoLongerARendezvous) {
  const std::string windows = " alloc w\n alloc x\n register A w\n register A x\n";
  const std::string put_alone = bodies(windows, " put_signal A 1 x -> w\n sync main\n", "");
  EXPECT_EQ(verdict_of(two(k230) + put_alone), Verdict::Deadlock);  // rank 1 never joins the signal window
  EXPECT_EQ(verdict_of(two(k231) + put_alone), Verdict::Safe);
  // tests/calibration-probes/rma_first_before_peer_registers: a mismatch up to 2.30.x, safe from 2.31.
  const std::string between =
      "rank 0 {\n alloc w\n alloc x\n register A w\n register A x\n put_signal A 1 x -> w\n"
      " sync main\n}\nrank 1 {\n alloc w\n alloc x\n register A w\n wait_signal A 0\n"
      " register A x\n sync main\n}\n";
  EXPECT_EQ(verdict_of(two(k230) + between), Verdict::Mismatch);
  EXPECT_EQ(verdict_of(two(k231) + between), Verdict::Safe);
}

TEST(Nccl231, PerCollectiveConfigMustMatch) {
  const std::string differs =
      "rank 0 {\n all_reduce A x config=maxctas1\n}\nrank 1 {\n all_reduce A x config=maxctas4\n}\n";
  EXPECT_EQ(verdict_of(two(k231) + differs), Verdict::Mismatch);
  EXPECT_NE(report_of(two(k231) + differs).find("per-collective config maxctas1 and maxctas4"), std::string::npos)
      << report_of(two(k231) + differs);
  EXPECT_EQ(verdict_of(two(k231) + "rank * {\n all_reduce A x config=maxctas2\n sync main\n}\n"), Verdict::Safe);
  // A config on one rank only is a difference too (the other passes NULL).
  EXPECT_EQ(verdict_of(two(k231) + "rank 0 {\n all_reduce A x config=maxctas2\n}\nrank 1 {\n all_reduce A x\n}\n"),
            Verdict::Mismatch);
  EXPECT_EQ(verdict_of(two(k230) + "rank * {\n all_reduce A x config=maxctas2\n}\n"), Verdict::UsageError);
  // It prints back.
  EXPECT_NE(model::print_world(world_of(two(k231) + "rank * {\n all_reduce A x config=maxctas2\n}\n"), "")
                .find("all_reduce A x config=maxctas2"),
            std::string::npos);
}

TEST(Nccl231, LaunchOrderImplicitMustNotOverlapWithCommsWithoutIt) {
  const std::string comms = "comm A = [0, 1] launch_order_implicit\ncomm B = [0, 1]\n";
  const std::string overlap = "rank * {\n all_reduce A x on s1\n all_reduce B y on s2\n sync device\n}\n";
  EXPECT_EQ(verdict_of(two(k231, comms) + overlap), Verdict::UsageError);
  EXPECT_NE(report_of(two(k231, comms) + overlap).find("must not overlap"), std::string::npos);
  EXPECT_EQ(verdict_of(two(k231, comms) + "rank * {\n all_reduce A x on s1\n sync s1\n all_reduce B y on s2\n"
                                          " sync device\n}\n"),
            Verdict::Safe);
  // Both comms alike: no rule.
  EXPECT_EQ(
      verdict_of(two(k231, "comm A = [0, 1] launch_order_implicit\ncomm B = [0, 1] launch_order_implicit\n") + overlap),
      Verdict::Safe);
  // Before 2.31 there is no such setting: a warning, and no effect.
  const auto w = world_of(two(k230, comms) + overlap);
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_EQ(checker::check(w, {}).verdict, Verdict::Safe);
}

TEST(Nccl232, GinOnlyWindows) {
  const std::string one_gin = bodies(" alloc w\n", " register A w gin\n all_reduce A w\n sync main\n",
                                     " register A w\n all_reduce A w\n sync main\n");
  EXPECT_EQ(verdict_of(two("2.32.6") + one_gin), Verdict::DivergentKernel);
  EXPECT_EQ(verdict_of(two("2.32.6") + "rank * {\n alloc w\n register A w gin\n all_reduce A w\n sync main\n}\n"),
            Verdict::Safe);
  EXPECT_EQ(verdict_of(two("2.31.2") + "rank * {\n alloc w\n register A w gin\n}\n"), Verdict::UsageError);
  // Not a source for a put (ncclPutSignal wants a symmetric window).
  EXPECT_EQ(verdict_of(two("2.32.6") + bodies(" alloc w\n alloc x\n register A w\n register A x gin\n",
                                              " put_signal A 1 x -> w\n sync main\n", "")),
            Verdict::UsageError);
  EXPECT_NE(model::print_world(world_of(two("2.32.6") + "rank * {\n alloc w\n register A w gin\n}\n"), "")
                .find("register A w gin"),
            std::string::npos);
}

TEST(Mechanisms, OneCommOnSeveralStreams) {
  // NCCL orders a comm's kernels (measured on 2.30.7, one shared GPU, two and four streams): the same
  // order on every rank completes.
  const std::string same = "rank * {\n all_reduce A x on s1\n all_reduce A y on s2\n sync device\n}\n";
  EXPECT_EQ(verdict_of(two(k231) + same), Verdict::Safe);
  // The ranks issue them in different orders: the device slots pair different collectives.
  EXPECT_EQ(verdict_of(two(k231) + bodies(" cuda_malloc x 4MiB\n cuda_malloc y 8MiB\n",
                                          " all_reduce A x on s1\n all_reduce A y on s2\n sync device\n",
                                          " all_reduce A y on s2\n all_reduce A x on s1\n sync device\n")),
            Verdict::Mismatch);
}

TEST(Mechanisms, P2pOperationsOfOneGroupProgressTogether) {
  // Both directions of the pair set up alike (one group of a send and a receive on each rank): safe.
  EXPECT_EQ(verdict_of(two(k231) + bodies(" all_reduce A warm\n sync main\n",
                                          " group { send A 1 c; recv A 1 c }\n sync main\n",
                                          " group { recv A 0 c; send A 0 c }\n sync main\n")),
            Verdict::Safe);
  // Rank 0 groups a receive with a send, rank 1 receives first and sends later, once the pair's
  // connections exist: the group's parts progress together.
  const std::string up0 = " group { send A 1 c; recv A 1 c }\n sync main\n";
  const std::string up1 = " group { recv A 0 c; send A 0 c }\n sync main\n";
  EXPECT_EQ(verdict_of(two(k231) + bodies("", up0 + " group { recv A 1 y; send A 1 x }\n sync main\n",
                                          up1 + " recv A 0 x\n send A 0 y\n sync main\n")),
            Verdict::Safe);
  // Not grouped: each rank's receive waits at the head of its stream for a send queued behind the peer's.
  EXPECT_EQ(verdict_of(two(k231) + bodies("", up0 + " recv A 1 y\n send A 1 x\n sync main\n",
                                          up1 + " recv A 0 x\n send A 0 y\n sync main\n")),
            Verdict::Deadlock);
  // The pair's first calls set up different directions (measured: NCCL fails in the connect): mismatch.
  const std::string cold =
      "rank 0 {\n group { recv A 1 y; send A 1 x }\n sync main\n}\n"
      "rank 1 {\n recv A 0 x\n send A 0 y\n sync main\n}\n";
  EXPECT_EQ(verdict_of(two(k231) + cold), Verdict::Mismatch);
  EXPECT_EQ(verdict_of(two(k230) + cold), Verdict::Mismatch);
  EXPECT_NE(report_of(two(k231) + cold).find("sets up different connections"), std::string::npos)
      << report_of(two(k231) + cold);
  // Alike on both ranks: a send and a receive each, or a lone send against a lone receive.
  EXPECT_EQ(verdict_of(two(k231) + "rank 0 {\n group { recv A 1 y; send A 1 x }\n sync main\n}\n"
                                   "rank 1 {\n group { recv A 0 x; send A 0 y }\n sync main\n}\n"),
            Verdict::Safe);
  EXPECT_EQ(verdict_of(two(k231) + "rank 0 {\n send A 1 x\n sync main\n}\nrank 1 {\n recv A 0 x\n sync main\n}\n"),
            Verdict::Safe);
  // With runtime_connect = off the connections exist before: no rule.
  EXPECT_EQ(verdict_of(two(k231) + "set runtime_connect = off\n" + cold), Verdict::Safe);
}

TEST(Mechanisms, SerializedGroupsSharedByThreads) {
  const std::string program =
      "rank * {\n cuda_malloc a 4MiB\n cuda_malloc b 8MiB\n thread t1 {\n all_reduce pg a\n }\n"
      " thread t2 {\n all_reduce pg b\n }\n}\n";
  // A plain NCCL comm: the second thread calls into the comm while the first waits in its connect (the
  // buffers of one size here, so that no mismatch is reachable).
  std::string same_size = program;
  same_size.replace(same_size.find("8MiB"), 4, "4MiB");
  EXPECT_EQ(verdict_of("ranks 2\ncomm pg = [0, 1]\n" + same_size), Verdict::UsageError);
  EXPECT_EQ(verdict_of("ranks 2\ncomm pg = [0, 1] serialized\n" + same_size), Verdict::Safe);
  // A framework-level group serialises the threads: what remains is the order on each rank.
  EXPECT_EQ(verdict_of("ranks 2\ncomm pg = [0, 1] serialized\n" + program), Verdict::Mismatch);
  EXPECT_EQ(verdict_of("ranks 2\ncomm pg = [0, 1] serialized\nrank * {\n cuda_malloc a 4MiB\n cuda_malloc b 8MiB\n"
                       " thread t1 {\n all_reduce pg a\n all_reduce pg b\n }\n}\n"),
            Verdict::Safe);
  // A thread's call waits while the other is inside a host-blocking call on the group.
  const std::string regs =
      "rank * {\n alloc a\n alloc b\n thread t1 {\n register pg a\n }\n thread t2 {\n"
      " register pg b\n }\n}\n";
  EXPECT_EQ(verdict_of("ranks 2\ncomm pg = [0, 1] serialized\n" + regs), Verdict::Safe);
  EXPECT_NE(model::print_world(world_of("ranks 2\ncomm pg = [0, 1] serialized\n" + regs), "")
                .find("comm pg = [0, 1] serialized"),
            std::string::npos);
}

}  // namespace
}  // namespace collmc::testing
