// Issue 23: what NCCL 2.29 and 2.30 do (the first one-sided call's rendezvous, register errors per
// release, shrink, grow, revoke, abort before 2.24), the releases `nccl_version` knows, and MPI's weak
// progress (`mpi_progress`). Each rule in both outcomes; the sources are in docs/SEMANTICS_NOTES.md
// ("Issue 23", "MPI progress").
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "collmc/checker/check.h"
#include "collmc/model/parser.h"
#include "collmc/model/print.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"

namespace collmc::testing {
namespace {

using model::Verdict;

model::World world_of(const std::string& text) { return model::resolve(model::parse_string(text, "t.cmc")); }
Verdict verdict_of(const std::string& text) { return checker::check(world_of(text), {}).verdict; }
std::string report_of(const std::string& text) {
  const model::World w = world_of(text);
  return report::text_report(checker::check(w, {}));
}

const std::string kTwo = "ranks 2\nset nccl_version = 2.30.7\ncomm A = [0, 1]\n";
const std::string kWindows = "alloc w\n alloc x\n register A w\n register A x\n";

// `rank * { COMMON when rank in [R] { ... } ... }`: every rank's body (a rank may have one header).
std::string bodies(const std::string& common, const std::vector<std::pair<std::string, std::string>>& parts) {
  std::string out = "rank * {\n" + common;
  for (const auto& [ranks, text] : parts) out += "when rank in [" + ranks + "] {\n" + text + "\n}\n";
  return out + "}\n";
}

TEST(NcclReleases, KnownReleasesAndTheWarning) {
  EXPECT_TRUE(model::known_nccl_release(model::nccl_version_code(2, 30, 7)));
  EXPECT_TRUE(model::known_nccl_release(model::nccl_version_code(2, 29, 0)));  // `2.29`: the 2.29 line
  EXPECT_TRUE(model::known_nccl_release(model::nccl_version_code(2, 17, 1)));
  EXPECT_FALSE(model::known_nccl_release(model::nccl_version_code(2, 29, 5)));
  EXPECT_FALSE(model::known_nccl_release(model::nccl_version_code(2, 16, 0)));
  EXPECT_EQ(model::nearest_known_nccl_release(model::nccl_version_code(2, 29, 6)), model::nccl_version_code(2, 29, 7));
  EXPECT_EQ(model::nearest_known_nccl_release(model::nccl_version_code(2, 40, 0)), model::nccl_version_code(2, 32, 6));
  EXPECT_EQ(model::nearest_known_nccl_release(model::nccl_version_code(2, 12, 0)), model::nccl_version_code(2, 17, 1));

  EXPECT_TRUE(world_of("ranks 1\nset nccl_version = 2.28.9\n").warnings.empty());
  EXPECT_TRUE(world_of("ranks 1\n").warnings.empty());
  const auto w = world_of("ranks 1\nset nccl_version = 2.33.1\n");
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_EQ(w.warnings[0].loc.str(), "t.cmc:2:20");
  EXPECT_NE(w.warnings[0].message.find("NCCL 2.33.1 is not a release collmc knows; the nearest known is 2.32.6"),
            std::string::npos)
      << w.warnings[0].message;
  EXPECT_EQ(w.knobs.nccl_version, model::nccl_version_code(2, 33, 1));  // applied by number
  ASSERT_EQ(w.notes.size(), 1u);
}

TEST(NcclReleases, FirstOneSidedCallIsACollective) {
  // Both ranks issue a first one-sided call: the signal-window registration meets.
  EXPECT_EQ(verdict_of(kTwo + bodies(kWindows, {{"0", "put_signal A 1 x -> w\n sync main"},
                                                {"1", "wait_signal A 0\n sync main"}})),
            Verdict::Safe);
  // Rank 1 never issues one: rank 0 blocks on the host in its put (not merely at its sync).
  const std::string alone = kTwo + bodies(kWindows, {{"0", "put_signal A 1 x -> w\n sync main"}});
  EXPECT_EQ(verdict_of(alone), Verdict::Deadlock);
  EXPECT_NE(report_of(alone).find("waits for host slot 2 of A"), std::string::npos) << report_of(alone);
  // Only the first call per comm: a second put after both met needs nothing of rank 1's host.
  EXPECT_EQ(verdict_of(kTwo + bodies(kWindows, {{"0", "signal A 1\n put_signal A 1 x -> w\n sync main"},
                                                {"1", "wait_signal A 0 count=2\n sync main"}})),
            Verdict::Safe);
  // A first one-sided call on one rank where the other registers a window: the registrations cross.
  EXPECT_EQ(verdict_of(kTwo + bodies("alloc w\n alloc x\n register A w\n",
                                     {{"0", "register A x\n signal A 1\n sync main"},
                                      {"1", "wait_signal A 0\n register A x\n sync main"}})),
            Verdict::Mismatch);
  // In a group, the group's registrations come first, whatever order the group lists them in.
  EXPECT_EQ(verdict_of(kTwo + bodies("alloc w\n alloc x\n register A w\n",
                                     {{"0", "group { signal A 1\n register A x }\n sync main"},
                                      {"1", "register A x\n wait_signal A 0\n sync main"}})),
            Verdict::Safe);
}

TEST(NcclReleases, PutSignalSourceMustBeSymmetric) {
  const std::string body = bodies("alloc w\n register A w\n", {{"0", "put_signal A 1 plain -> w\n sync main"},
                                                               {"1", "wait_signal A 0\n sync main"}});
  EXPECT_EQ(verdict_of(kTwo + body), Verdict::UsageError);
  EXPECT_NE(report_of(kTwo + body).find("not in a symmetric window on A"), std::string::npos);
  // A `default` (non-symmetric) window is no source either.
  EXPECT_EQ(
      verdict_of(kTwo + bodies("alloc w\n alloc x\n register A w\n register A x default\n",
                               {{"0", "put_signal A 1 x -> w\n sync main"}, {"1", "wait_signal A 0\n sync main"}})),
      Verdict::UsageError);
}

TEST(NcclReleases, RegisterSizeZeroAndSizesPerRelease) {
  const std::string zero = "comm A = [0, 1]\nrank 0 { alloc z 0\n register A z }\nrank 1 { alloc z\n register A z }\n";
  EXPECT_EQ(verdict_of("ranks 2\n" + zero), Verdict::Deadlock);  // 2.28.3, calibrated
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.28.9\n" + zero), Verdict::Deadlock);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.29\n" + zero), Verdict::UsageError);
  const std::string sizes =
      "comm A = [0, 1]\nrank 0 { alloc w 1048576\n register A w }\nrank 1 { alloc w 2097152\n register A w }\n";
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.29.7\n" + sizes), Verdict::Mismatch);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.30\n" + sizes), Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\nset profile = mpi\n" + sizes), Verdict::Safe);  // MPI_Win_create: any size
  EXPECT_NE(report_of("ranks 2\nset nccl_version = 2.29.7\n" + sizes).find("window sizes 1048576 and 2097152 bytes"),
            std::string::npos);
}

TEST(NcclReleases, Shrink) {
  const std::string head = "ranks 3\nset nccl_version = 2.30.7\ncomm A = [0, 1, 2]\ncomm S = [0, 1] uninit\n";
  const std::string warm = "all_reduce A warm\n sync main\n";
  const std::pair<std::string, std::string> survivors{
      "0, 1", "shrink A -> S\n all_reduce S x\n sync main\n destroy S\n destroy A"};
  EXPECT_EQ(verdict_of(head + bodies(warm, {survivors, {"2", "destroy A"}})), Verdict::Safe);
  EXPECT_EQ(verdict_of(head + bodies(warm, {survivors, {"2", "abort A"}})), Verdict::Safe);
  EXPECT_EQ(verdict_of(head + bodies(warm, {survivors})), Verdict::Deadlock);  // the excluded rank never destroys A
  // Static checks: the child is the parent less at least one rank; the release has it.
  EXPECT_EQ(
      verdict_of("ranks 2\nset nccl_version = 2.30.7\ncomm A = all\ncomm S = all uninit\nrank * { shrink A -> S }\n"),
      Verdict::UsageError);
  EXPECT_EQ(
      verdict_of("ranks 2\nset nccl_version = 2.26\ncomm A = all\ncomm S = [0] uninit\nrank 0 { shrink A -> S }\n"),
      Verdict::UsageError);
  // A sequence that differs: different child numbers of A for one child.
  EXPECT_EQ(verdict_of("ranks 3\nset nccl_version = 2.30.7\ncomm A = [0, 1, 2]\ncomm S = [0, 1] uninit\n"
                       "comm T = [0, 2] uninit\nrank 0 { shrink A -> S\n shrink A -> T }\nrank 1 { shrink A -> S }\n"
                       "rank 2 { shrink A -> T }\n"),
            Verdict::Mismatch);
  // It prints back as written.
  const auto w =
      world_of("ranks 2\nset nccl_version = 2.30.7\ncomm A = all\ncomm S = [0] uninit\nrank 0 { shrink A -> S }\n");
  EXPECT_NE(model::print_world(w, "").find("shrink A -> S"), std::string::npos);
}

TEST(NcclReleases, GrowAndItsId) {
  const std::string head = "ranks 3\nset nccl_version = 2.30.7\ncomm A = [0, 1]\ncomm G = [0, 1, 2] uninit\n";
  const std::string use = "\n all_reduce G x\n sync main }\n";
  const std::string grow = "rank 1 { grow A -> G" + use + "rank 2 { grow none -> G" + use;
  EXPECT_EQ(verdict_of(head + "rank 0 { grow_id A\n grow A -> G" + use + grow), Verdict::Safe);
  const std::string no_id = head + "rank 0 { grow A -> G" + use + grow;
  EXPECT_EQ(verdict_of(no_id), Verdict::Deadlock);
  // Every rank of the grow waits for the id, the new one too: G's bootstrap cannot start without it
  // (measured on 2.30.7: tests/calibration-probes/grow_without_id.cmc).
  const std::string text = report_of(no_id);
  EXPECT_NE(text.find("waits in the grow of A for its grow id 1 (ncclCommGetUniqueId: `grow_id A`)"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 2 main: in `grow none -> G`"), std::string::npos) << text;
  // Before 2.29 there is no grow; a child that is not larger than the parent is refused.
  EXPECT_EQ(verdict_of("ranks 3\nset nccl_version = 2.28.9\ncomm A = [0, 1]\ncomm G = [0, 1, 2] uninit\n"
                       "rank 0 { grow_id A\n grow A -> G" +
                       use + grow),
            Verdict::UsageError);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.30.7\ncomm A = [0, 1]\ncomm G = [0, 1] uninit\n"
                       "rank * { grow A -> G }\n"),
            Verdict::UsageError);
  const auto w = world_of(head + "rank 0 { grow_id A\n grow A -> G" + use + grow);
  const std::string printed = model::print_world(w, "");
  EXPECT_NE(printed.find("grow none -> G"), std::string::npos) << printed;
  EXPECT_NE(printed.find("grow_id A"), std::string::npos) << printed;
}

TEST(NcclReleases, Revoke) {
  const std::string warm = "all_reduce A warm\n sync main\n";
  // The revoke stops rank 0's all_reduce that rank 1 never joins; both destroy.
  EXPECT_EQ(verdict_of(kTwo + bodies(warm, {{"0", "all_reduce A x\n revoke A\n destroy A"}, {"1", "destroy A"}})),
            Verdict::Safe);
  // Without the revoke, the destroy waits for its device work to drain: never.
  EXPECT_EQ(verdict_of(kTwo + bodies(warm, {{"0", "all_reduce A x\n destroy A"}, {"1", "destroy A"}})),
            Verdict::Deadlock);
  EXPECT_EQ(verdict_of(kTwo + bodies(warm, {{"0", "revoke A\n all_reduce A x"}})), Verdict::UsageError);
  EXPECT_EQ(verdict_of(kTwo + bodies(warm, {{"0", "revoke A\n revoke A"}})), Verdict::UsageError);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.28.3\ncomm A = all\nrank * { revoke A }\n"), Verdict::UsageError);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.28.7\ncomm A = all\nrank * { revoke A\n destroy A }\n"),
            Verdict::Safe);
}

TEST(NcclReleases, AbortBefore224WaitsForThePeers) {
  const std::string warm = "comm A = [0, 1]\n";
  const std::string body = warm + bodies("all_reduce A warm\n sync main\n", {{"0", "abort A"}});
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.23.4\n" + body), Verdict::Deadlock);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.23.4\n" + warm +
                       bodies("all_reduce A warm\n sync main\n", {{"0", "abort A"}, {"1", "abort A"}})),
            Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.23.4\n" + warm +
                       bodies("all_reduce A warm\n sync main\n", {{"0", "abort A"}, {"1", "destroy A"}})),
            Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.24.3\n" + body), Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\n" + body), Verdict::Safe);  // the calibrated 2.28.3
  const std::string text = report_of("ranks 2\nset nccl_version = 2.23.4\n" + body);
  EXPECT_NE(text.find("abort is an intra-node collective"), std::string::npos) << text;
  // A comm never connected: the abort is local in every release (as its destroy is).
  EXPECT_EQ(verdict_of("ranks 2\nset nccl_version = 2.20.3\ncomm A = all\nrank 0 { abort A }\n"), Verdict::Safe);
}

TEST(NcclReleases, NcclOnlyCallsOnMpiComms) {
  EXPECT_EQ(verdict_of("ranks 2\nset profile = mpi\ncomm A = all\nrank * { revoke A }\n"), Verdict::UsageError);
  EXPECT_EQ(verdict_of("ranks 2\nset profile = mpi\ncomm A = all\nrank 0 { grow_id A }\n"), Verdict::UsageError);
}

TEST(MpiProgress, TheEarlyRanksOfARootedCollectiveLeaveUnlessSync) {
  // Cross-ordered one-int broadcasts rooted at rank 0: with sync a deadlock, with strong or weak
  // progress rank 0 leaves both at once (and with weak, its next broadcast moves the first).
  const std::string body =
      "set profile = mpi\ncomm A = all\ncomm B = all\nrank 0 {\n broadcast A x root=0\n broadcast B x root=0\n}\n"
      "rank 1 {\n broadcast B x root=0\n broadcast A x root=0\n}\n";
  EXPECT_EQ(verdict_of("ranks 2\n" + body), Verdict::Deadlock);
  EXPECT_EQ(verdict_of("ranks 2\nset mpi_progress = strong\n" + body), Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\nset mpi_progress = weak\n" + body), Verdict::Safe);
  // A reduce's early ranks are the others; its root waits for them: two roots, cross-ordered, hang.
  const std::string reduce =
      "set profile = mpi\ncomm A = all\ncomm B = all\nrank 0 {\n reduce A x root=0\n"
      " reduce B x root=1\n}\nrank 1 {\n reduce B x root=1\n reduce A x root=0\n}\n";
  EXPECT_EQ(verdict_of("ranks 2\nset mpi_progress = strong\n" + reduce), Verdict::Deadlock);
}

TEST(MpiProgress, WeakProgressNeedsTheEarlyRankBackInMpi) {
  // Rank 1 leaves its reduce early, then waits outside MPI (a host key) for the root to be done.
  const std::string head = "set profile = mpi\ncomm A = all\nrank 0 {\n reduce A x root=0\n store_set done\n}\n";
  const std::string waits = "rank 1 {\n reduce A x root=0\n store_wait done\n}\n";
  EXPECT_EQ(verdict_of("ranks 2\nset mpi_progress = sync\n" + head + waits), Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\nset mpi_progress = strong\n" + head + waits), Verdict::Safe);
  EXPECT_EQ(verdict_of("ranks 2\n" + head + waits), Verdict::Deadlock);  // the default: weak's hang (issue 32)
  const std::string weak = "ranks 2\nset mpi_progress = weak\n" + head + waits;
  EXPECT_EQ(verdict_of(weak), Verdict::Deadlock);
  const std::string text = report_of(weak);
  EXPECT_NE(text.find("waits in reduce on A for the ranks that left it early to enter MPI again"), std::string::npos)
      << text;
  EXPECT_NE(text.find("rank 1 (in `store_wait done`"), std::string::npos) << text;
  // Any MPI call moves the early rank's messages, even one where it blocks; so does its end.
  const std::string mpi_first =
      "ranks 2\nset profile = mpi\nset mpi_progress = weak\ncomm A = all\n"
      "rank 0 {\n reduce A x root=0\n store_set done\n barrier A\n}\n";
  EXPECT_EQ(verdict_of(mpi_first + "rank 1 {\n reduce A x root=0\n barrier A\n store_wait done\n}\n"), Verdict::Safe);
  EXPECT_EQ(verdict_of(mpi_first + "rank 1 {\n reduce A x root=0\n store_wait done\n barrier A\n}\n"),
            Verdict::Deadlock);
  EXPECT_EQ(verdict_of("ranks 2\nset mpi_progress = weak\n" + head + "rank 1 {\n reduce A x root=0\n}\n"),
            Verdict::Safe);
}

TEST(MpiProgress, PrintsBackAndNotesTheAssumption) {
  const auto w =
      world_of("ranks 2\nset profile = mpi\nset mpi_progress = weak\ncomm A = all\nrank * { broadcast A x }\n");
  EXPECT_NE(model::print_world(w, "").find("set mpi_progress = weak"), std::string::npos);
  ASSERT_FALSE(w.notes.empty());
  EXPECT_NE(w.notes.front().find("mpi_progress = weak"), std::string::npos) << w.notes.front();
}

}  // namespace
}  // namespace collmc::testing
