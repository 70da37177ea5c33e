// The step relation against SEMANTICS.md, one rule at a time: §2 (every row of the nccl table), §3
// (steps 1-8), §4 (every verdict, every usage_error case) and §6 (the mpi profile). Each rule gets a
// small inline scenario with its verdict and, where it matters, a minimally different scenario whose
// verdict flips, so that the test shows the rule is what decides.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "collmc/report/check_report.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using checker::CheckResult;
using checker::SearchOptions;
using checker::StepKind;
using model::Verdict;

::testing::AssertionResult has_verdict(const std::string& text, Verdict expected, const SearchOptions& options = {}) {
  CheckResult r = check_text(text, options);
  if (r.verdict == expected) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "expected " << model::verdict_name(expected) << ", got "
                                       << model::verdict_name(r.verdict) << "\n--- scenario ---\n"
                                       << text << "\n--- report ---\n"
                                       << report::text_report(r);
}

#define EXPECT_VERDICT(text, verdict) EXPECT_TRUE(has_verdict((text), (verdict)))

// Two ranks, comms A and B over both; `r0` and `r1` are the rank bodies.
std::string two_ranks(const std::string& header, const std::string& r0, const std::string& r1) {
  return "ranks 2\n" + header + "\ncomm A = [0, 1]\ncomm B = [0, 1]\nrank 0 {\n" + r0 + "\n}\nrank 1 {\n" + r1 +
         "\n}\n";
}

// Connects A and B in the same order on every rank (the calibration set's warm-up).
const std::string kWarmAB = "all_reduce A plain; sync main; all_reduce B plain; sync main\n";

// =============================================================================================
// §2 register: HBC on the comm, a full-comm barrier.

TEST(SemanticsRegister, CrossOrderDeadlocksSameOrderIsSafe) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; register A wa; register B wb",
                           "alloc wa; alloc wb; register B wb; register A wa"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; register A wa; register B wb",
                           "alloc wa; alloc wb; register A wa; register B wb"),
                 Verdict::Safe);
}

TEST(SemanticsRegister, IsABarrierEvenWithNothingAfterIt) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa", ""), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa", "alloc wa; register A wa"), Verdict::Safe);
}

TEST(SemanticsRegister, WaitsForEveryMemberOfTheCommOnly) {
  // Every member of A must call; a rank outside A need not.
  EXPECT_VERDICT(R"(ranks 3
comm A = [0, 1, 2]
rank 0, 1 { alloc wa; register A wa }
)",
                 Verdict::Deadlock);
  EXPECT_VERDICT(R"(ranks 3
comm A = [0, 1]
rank 0, 1 { alloc wa; register A wa }
)",
                 Verdict::Safe);
}

TEST(SemanticsRegister, SizeZeroJoinsNothing) {
  // Calibration register_size_zero: the size-0 rank returns at once, its peer waits forever.
  EXPECT_VERDICT(two_ranks("", "alloc wa 0; register A wa", "alloc wa; register A wa"), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wa 0; register A wa", "alloc wa 0; register A wa"), Verdict::Safe);
  // It takes no slot: the next real registration pairs with the peer's first.
  EXPECT_VERDICT(two_ranks("", "alloc z 0; alloc wa; register A z; register A wa", "alloc wa; register A wa"),
                 Verdict::Safe);
}

TEST(SemanticsRegister, RegisteringOneBufferTwiceIsAllowed) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; register A wa; all_reduce A wa; sync main",
                           "alloc wa; register A wa; register A wa; all_reduce A wa; sync main"),
                 Verdict::Safe);
  // Slots match by count: one registration too many leaves its caller waiting.
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; register A wa; all_reduce A wa; sync main",
                           "alloc wa; register A wa; all_reduce A wa; sync main"),
                 Verdict::Deadlock);
}

TEST(SemanticsRegister, NeedsMemoryFromAlloc) {
  EXPECT_VERDICT(two_ranks("", "cuda_malloc wa; register A wa", "cuda_malloc wa; register A wa"), Verdict::UsageError);
  EXPECT_VERDICT(two_ranks("", "register A plain", "register A plain"), Verdict::UsageError);
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa", "alloc wa; register A wa"), Verdict::Safe);
}

TEST(SemanticsRegister, RegisterLocalAndDeregisterLocalAreLocal) {
  EXPECT_VERDICT(two_ranks("",
                           "alloc wa; alloc wb; register_local A wa; register_local B wb; "
                           "deregister_local A wa; deregister_local B wb",
                           "alloc wa; alloc wb; register_local B wb; register_local A wa; "
                           "deregister_local B wb; deregister_local A wa"),
                 Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", "alloc wa; register_local A wa; deregister_local A wa", ""), Verdict::Safe);
  // The window version of the same program is a barrier.
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; deregister A wa", ""), Verdict::Deadlock);
}

// =============================================================================================
// §2 deregister: LOCAL in nccl.

TEST(SemanticsDeregister, IsLocalInNccl) {
  // Calibration deregister_cross_order.
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; register A wa; register B wb; deregister A wa; deregister B wb",
                           "alloc wa; alloc wb; register A wa; register B wb; deregister B wb; deregister A wa"),
                 Verdict::Safe);
  // One rank deregisters, the other never does.
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; deregister A wa", "alloc wa; register A wa"), Verdict::Safe);
}

TEST(SemanticsDeregister, WithoutAWindowOnThatCommIsUsageError) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; deregister B wa", "alloc wa; register A wa"),
                 Verdict::UsageError);
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; register A wa; deregister A wb", "alloc wa; register A wa"),
                 Verdict::UsageError);
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; deregister A wa", "alloc wa; register A wa"), Verdict::Safe);
}

TEST(SemanticsDeregister, EachRegistrationIsDeregisteredOnce) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; register A wa; deregister A wa; deregister A wa",
                           "alloc wa; register A wa; register A wa"),
                 Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; deregister A wa; deregister A wa", "alloc wa; register A wa"),
                 Verdict::UsageError);
}

TEST(SemanticsDeregister, WhileAnOpOnTheBufferIsPendingIsUseAfterDeregister) {
  const std::string racy = "alloc wa; register A wa; all_reduce A wa; deregister A wa; sync main";
  EXPECT_VERDICT(two_ranks("", racy, racy), Verdict::UseAfterDeregister);
  const std::string synced = "alloc wa; register A wa; all_reduce A wa; sync main; deregister A wa";
  EXPECT_VERDICT(two_ranks("", synced, synced), Verdict::Safe);
}

TEST(SemanticsDeregister, OnlyTheStreamHoldingTheOpMatters) {
  const std::string wrong_sync =
      "alloc wa; register A wa; all_reduce A wa on side; sync main; deregister A wa; sync side";
  EXPECT_VERDICT(two_ranks("", wrong_sync, wrong_sync), Verdict::UseAfterDeregister);
  const std::string right_sync = "alloc wa; register A wa; all_reduce A wa on side; sync side; deregister A wa";
  EXPECT_VERDICT(two_ranks("", right_sync, right_sync), Verdict::Safe);
}

TEST(SemanticsDeregister, PendingNonSymmetricOpCountsToo) {
  // A `default` window: the kernel is regular, but the op still uses the buffer.
  const std::string racy = "alloc wa; register A wa default; all_reduce A wa; deregister A wa; sync main";
  EXPECT_VERDICT(two_ranks("", racy, racy), Verdict::UseAfterDeregister);
}

TEST(SemanticsDeregister, CalibrationWarmDeregisterPendingColl) {
  EXPECT_VERDICT(
      two_ranks("",
                "alloc wa; alloc wb\n" + kWarmAB +
                    "register A wa; all_reduce A wa; deregister A wa; register B wb; sync main",
                "alloc wa; alloc wb\n" + kWarmAB + "register A wa; register B wb; all_reduce A wa; sync main"),
      Verdict::UseAfterDeregister);
}

// =============================================================================================
// §2 alloc, free, cuda_malloc: LOCAL; cuda_free: DEVSYNC on the whole device.

// Rank 0 has all_reduce A pending on its device while `between` runs, then registers on B; rank 1
// registers on B before its all_reduce A. Without the runtime connect, only a wait for the device in
// `between` can hang.
std::string pending_then(const std::string& between, const std::string& stream = "main") {
  return two_ranks("set runtime_connect = off",
                   "alloc wb; alloc x; cuda_malloc s\nall_reduce A plain on " + stream + "\n" + between +
                       "\nregister B wb; sync device",
                   "alloc wb; register B wb; all_reduce A plain on " + stream + "; sync device");
}

TEST(SemanticsMemory, AllocFreeAndCudaMallocDoNotWaitForTheDevice) {
  EXPECT_VERDICT(pending_then("alloc y"), Verdict::Safe);
  EXPECT_VERDICT(pending_then("cuda_malloc y"), Verdict::Safe);
  EXPECT_VERDICT(pending_then("free x"), Verdict::Safe);
}

TEST(SemanticsMemory, CudaFreeWaitsForTheWholeDevice) {
  EXPECT_VERDICT(pending_then("cuda_free s"), Verdict::Deadlock);
  EXPECT_VERDICT(pending_then("cuda_free s", "side"), Verdict::Deadlock);  // any stream
  EXPECT_VERDICT(pending_then("sync device"), Verdict::Deadlock);
}

TEST(SemanticsMemory, CalibrationCudaFreeWhileCollPending) {
  EXPECT_VERDICT(
      two_ranks("",
                "alloc wb; cuda_malloc scratch 1MiB\n" + kWarmAB +
                    "all_reduce A plain; cuda_free scratch; register B wb; sync main",
                "alloc wb; cuda_malloc scratch 1MiB\n" + kWarmAB + "register B wb; all_reduce A plain; sync main"),
      Verdict::Deadlock);
  EXPECT_VERDICT(
      two_ranks("",
                "alloc wb; cuda_malloc scratch 1MiB\n" + kWarmAB +
                    "all_reduce A plain; cuda_malloc extra; register B wb; sync main",
                "alloc wb; cuda_malloc scratch 1MiB\n" + kWarmAB + "register B wb; all_reduce A plain; sync main"),
      Verdict::Safe);
}

TEST(SemanticsMemory, FreeWhileAnOpMayUseTheBufferIsUseAfterFree) {
  const std::string racy = "alloc x; all_reduce A x; free x; sync main";
  EXPECT_VERDICT(two_ranks("", racy, racy), Verdict::UseAfterFree);
  const std::string synced = "alloc x; all_reduce A x; sync main; free x";
  EXPECT_VERDICT(two_ranks("", synced, synced), Verdict::Safe);
}

TEST(SemanticsMemory, FreeOfAnOutputBufferWhilePendingIsUseAfterFree) {
  const std::string racy = "alloc x; alloc y; all_reduce A x -> y; free y; sync main";
  EXPECT_VERDICT(two_ranks("", racy, racy), Verdict::UseAfterFree);
  const std::string other = "alloc x; alloc y; alloc z; all_reduce A x -> y; free z; sync main";
  EXPECT_VERDICT(two_ranks("", other, other), Verdict::Safe);
}

TEST(SemanticsMemory, CudaFreeDrainsTheDeviceBeforeFreeing) {
  // Same program with cudaMalloc memory: cuda_free waits, so the buffer is never freed under the op.
  const std::string drained = "cuda_malloc x; all_reduce A x; cuda_free x";
  EXPECT_VERDICT(two_ranks("", drained, drained), Verdict::Safe);
}

TEST(SemanticsMemory, FreeOfMemoryNotFromAllocIsUsageError) {
  EXPECT_VERDICT("ranks 1\nrank 0 { cuda_malloc x; free x }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 1\nrank 0 { free plain }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 1\nrank 0 { alloc x; free x }", Verdict::Safe);
}

TEST(SemanticsMemory, CudaFreeOfAllocMemoryIsUsageError) {
  EXPECT_VERDICT("ranks 1\nrank 0 { alloc x; cuda_free x }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 1\nrank 0 { cuda_malloc x; cuda_free x }", Verdict::Safe);
  EXPECT_VERDICT("ranks 1\nrank 0 { cuda_free plain }", Verdict::Safe);  // plain buffers are cudaMalloc'ed
}

TEST(SemanticsMemory, DoubleFreeIsUsageError) {
  EXPECT_VERDICT("ranks 1\nrank 0 { alloc x; free x; free x }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 1\nrank 0 { cuda_malloc x; cuda_free x; cuda_free x }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 1\nrank 0 { alloc x; free x; cuda_free x }", Verdict::UsageError);
}

TEST(SemanticsMemory, UseAfterFreeIsUsageError) {
  const std::string header = "ranks 2\ncomm A = [0, 1]\n";
  EXPECT_VERDICT(header + "rank * { alloc x; free x; all_reduce A x; sync main }", Verdict::UsageError);
  EXPECT_VERDICT(header + "rank * { alloc x; free x; register A x }", Verdict::UsageError);
  EXPECT_VERDICT(header + "rank * { alloc x; register A x; free x; deregister A x }", Verdict::UsageError);
  EXPECT_VERDICT(header + "rank 0 { alloc x; free x; send A 1 x }\nrank 1 { alloc x; recv A 0 x }",
                 Verdict::UsageError);
  EXPECT_VERDICT(header + "rank * { alloc x; all_reduce A x; sync main; free x }", Verdict::Safe);
}

// =============================================================================================
// §2 init, split, finalize, destroy, abort.

TEST(SemanticsInit, CrossOrderDeadlocksSameOrderIsSafe) {
  const std::string header = "ranks 2\ncomm A = [0, 1] uninit\ncomm B = [0, 1] uninit\n";
  EXPECT_VERDICT(header + "rank 0 { init A; init B }\nrank 1 { init B; init A }", Verdict::Deadlock);
  EXPECT_VERDICT(header + "rank * { init A; init B }", Verdict::Safe);
}

TEST(SemanticsInit, SkippedByOneRankDeadlocks) {
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1] uninit\nrank 0 { init A }", Verdict::Deadlock);
}

TEST(SemanticsInit, UseBeforeInitIsUsageError) {
  const std::string header = "ranks 2\ncomm A = [0, 1] uninit\n";
  EXPECT_VERDICT(header + "rank * { all_reduce A plain; init A }", Verdict::UsageError);
  EXPECT_VERDICT(header + "rank * { alloc wa; register A wa; init A }", Verdict::UsageError);
  // Creation is per rank: rank 0's init does not create A for rank 1.
  EXPECT_VERDICT(header +
                     "rank 0 { init A; all_reduce A plain; sync main }\n"
                     "rank 1 { all_reduce A plain; init A; sync main }",
                 Verdict::UsageError);
  EXPECT_VERDICT(header + "rank * { init A; all_reduce A plain; sync main }", Verdict::Safe);
}

TEST(SemanticsInit, InitOfAnExistingCommIsUsageError) {
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1]\nrank * { init A }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1] uninit\nrank * { init A; init A }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1] uninit\nrank * { init A }", Verdict::Safe);
}

TEST(SemanticsComm, RankNotAMemberIsUsageError) {
  EXPECT_VERDICT("ranks 3\ncomm A = [0, 1]\nrank * { all_reduce A plain; sync main }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 3\ncomm A = [0, 1]\nrank * { alloc wa; register A wa }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 3\ncomm A = all\nrank * { all_reduce A plain; sync main }", Verdict::Safe);
  EXPECT_VERDICT("ranks 3\ncomm A = [0, 1]\nrank 0, 1 { all_reduce A plain; sync main }", Verdict::Safe);
}

TEST(SemanticsComm, PeerOrRootOutsideTheCommIsUsageError) {
  EXPECT_VERDICT("ranks 3\ncomm A = [0, 1]\nrank 0 { send A 2 x }\nrank 2 { }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 3\ncomm A = [0, 1]\nrank 0, 1 { broadcast A x root=2; sync main }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 3\ncomm A = [0, 1]\nrank 0, 1 { broadcast A x root=1; sync main }", Verdict::Safe);
}

TEST(SemanticsSplit, MatchingChildrenAreSafe) {
  EXPECT_VERDICT(R"(ranks 2
comm P = [0, 1]
comm X = [0] uninit
comm Y = [1] uninit
rank 0 { split P -> X; all_reduce X plain; sync main }
rank 1 { split P -> Y; all_reduce Y plain; sync main }
)",
                 Verdict::Safe);
  // A family child: every rank names its own instance.
  EXPECT_VERDICT(R"(ranks 4
comm P = all
comm X = {[0, 1], [2, 3]} uninit
rank * { split P -> X; all_reduce X plain; sync main }
)",
                 Verdict::Safe);
}

TEST(SemanticsSplit, CrossOrderedSplitsMismatch) {
  EXPECT_VERDICT(R"(ranks 2
comm P = [0, 1]
comm X = [0, 1] uninit
comm Y = [0, 1] uninit
rank 0 { split P -> X; split P -> Y }
rank 1 { split P -> Y; split P -> X }
)",
                 Verdict::Mismatch);
  EXPECT_VERDICT(R"(ranks 2
comm P = [0, 1]
comm X = [0, 1] uninit
comm Y = [0, 1] uninit
rank * { split P -> X; split P -> Y }
)",
                 Verdict::Safe);
}

TEST(SemanticsSplit, AMemberThatJoinsNoChildIsAMismatch) {
  const std::string header = "ranks 2\ncomm P = [0, 1]\ncomm X = [0, 1] uninit\n";
  EXPECT_VERDICT(header + "rank 0 { split P -> X }\nrank 1 { split P -> none }", Verdict::Mismatch);
  EXPECT_VERDICT(header + "rank * { split P -> X }", Verdict::Safe);
}

TEST(SemanticsSplit, SkippedByOneRankDeadlocks) {
  const std::string header = "ranks 2\ncomm P = [0, 1]\ncomm X = [0] uninit\n";
  EXPECT_VERDICT(header + "rank 0 { split P -> X }", Verdict::Deadlock);
  // `-> none` still takes part in the split.
  EXPECT_VERDICT(header + "rank 0 { split P -> X }\nrank 1 { split P -> none }", Verdict::Safe);
}

TEST(SemanticsSplit, IsHostBlockingOnTheParent) {
  const std::string header = "ranks 2\ncomm P = [0, 1]\ncomm B = [0, 1]\ncomm X = [0] uninit\n";
  EXPECT_VERDICT(header +
                     "rank 0 { alloc wb; split P -> X; register B wb }\n"
                     "rank 1 { alloc wb; register B wb; split P -> none }",
                 Verdict::Deadlock);
  EXPECT_VERDICT(header +
                     "rank 0 { alloc wb; split P -> X; register B wb }\n"
                     "rank 1 { alloc wb; split P -> none; register B wb }",
                 Verdict::Safe);
}

TEST(SemanticsSplit, ChildUsedBeforeTheSplitIsUsageError) {
  EXPECT_VERDICT(R"(ranks 2
comm P = [0, 1]
comm X = [0, 1] uninit
rank * { all_reduce X plain; split P -> X }
)",
                 Verdict::UsageError);
}

TEST(SemanticsSplit, ChildThatAlreadyExistsIsUsageError) {
  EXPECT_VERDICT("ranks 2\ncomm P = [0, 1]\ncomm X = [0, 1]\nrank * { split P -> X }", Verdict::UsageError);
  EXPECT_VERDICT("ranks 2\ncomm P = [0, 1]\ncomm X = [0, 1] uninit\nrank * { split P -> X; split P -> X }",
                 Verdict::UsageError);
}

TEST(SemanticsSplit, RankNamingAChildItIsNotInIsUsageError) {
  EXPECT_VERDICT("ranks 2\ncomm P = [0, 1]\ncomm X = [0] uninit\nrank * { split P -> X }", Verdict::UsageError);
}

// Rank 0 has all_reduce A pending, then `call`, then registers on B; rank 1 registers on B first.
std::string pending_on_a_then(const std::string& call) {
  return "ranks 2\nset runtime_connect = off\ncomm A = [0, 1]\ncomm B = [0, 1]\ncomm C = [0, 1]\n"
         "rank 0 { alloc wb; all_reduce A plain; " +
         call +
         "; register B wb; sync device }\n"
         "rank 1 { alloc wb; register B wb; all_reduce A plain; sync device }\n";
}

TEST(SemanticsFinalize, WaitsForThisRanksPendingWorkOnTheComm) {
  EXPECT_VERDICT(pending_on_a_then("finalize A"), Verdict::Deadlock);
  EXPECT_VERDICT(pending_on_a_then("finalize C"), Verdict::Safe);  // only its own comm's work
}

TEST(SemanticsDestroy, FinalizesFirst) {
  EXPECT_VERDICT(pending_on_a_then("destroy A"), Verdict::Deadlock);
  // C has no work pending, but under runtime_connect = off it is connected from its creation, so its
  // destroy waits for rank 1's, which never comes (measured, docs/HARDWARE.md 2026-12-02).
  EXPECT_VERDICT(pending_on_a_then("destroy C"), Verdict::Deadlock);
  EXPECT_VERDICT(pending_on_a_then("finalize C"), Verdict::Safe);
}

TEST(SemanticsDestroy, AfterFinalizeIsAllowed) {
  const std::string prog = "all_reduce A plain; finalize A; destroy A";
  EXPECT_VERDICT(two_ranks("", prog, prog), Verdict::Safe);
}

TEST(SemanticsDestroy, CrossOrderIsSafeOnlyWhileTheCommsAreNotConnected) {
  EXPECT_VERDICT(two_ranks("", "destroy A; destroy B", "destroy B; destroy A"), Verdict::Safe);
  // Measured on 2x H200 (docs/HARDWARE.md): a connected comm's destroy waits for the peers' destroy.
  EXPECT_VERDICT(two_ranks("", kWarmAB + "destroy A; destroy B", kWarmAB + "destroy B; destroy A"), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", kWarmAB + "destroy A; destroy B", kWarmAB + "destroy A; destroy B"), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", kWarmAB + "destroy A", kWarmAB), Verdict::Deadlock);
}

TEST(SemanticsDestroy, WaitsWhateverRuntimeConnectAndCommModeAre) {
  // SEMANTICS.md §2: a connected comm's destroy waits for the peers' destroy also with
  // runtime_connect = off and on nonblocking comms (measured on one shared H200, NCCL 2.30.7:
  // tests/calibration-probes/destroy_warm_*, docs/HARDWARE.md).
  for (const std::string header : {"set runtime_connect = off", "set comm_mode = nonblocking"}) {
    SCOPED_TRACE(header);
    EXPECT_VERDICT(two_ranks(header, kWarmAB + "destroy A", kWarmAB), Verdict::Deadlock);
    EXPECT_VERDICT(two_ranks(header, kWarmAB + "destroy A", kWarmAB + "destroy A"), Verdict::Safe);
    EXPECT_VERDICT(two_ranks(header, kWarmAB + "destroy A; destroy B", kWarmAB + "destroy B; destroy A"),
                   Verdict::Deadlock);
    EXPECT_VERDICT(two_ranks(header, "destroy A", "destroy A"), Verdict::Safe);
  }
  // Never connected (no collective ran on it): destroyed locally, while NCCL connects at runtime.
  EXPECT_VERDICT(two_ranks("set comm_mode = nonblocking", "destroy A", ""), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", "alloc w; register A w; all_reduce A w; sync main; destroy A",
                           "alloc w; register A w; all_reduce A w; sync main"),
                 Verdict::Safe)
      << "a symmetric all-reduce sets up no connections";
  // With runtime_connect = off NCCL connects every comm at its creation: a cold destroy waits too
  // (measured: tests/calibration-probes/destroy_cold_peer_idle_noconnect hangs).
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "destroy A", ""), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "alloc w; register A w; all_reduce A w; sync main; destroy A",
                           "alloc w; register A w; all_reduce A w; sync main"),
                 Verdict::Deadlock);
}

TEST(SemanticsAbort, WaitsForAnIdleGpuSoAnotherCommsStuckKernelHoldsIt) {
  // Measured on one shared H200 with NCCL 2.30.7 (docs/HARDWARE.md, tests/calibration-probes/abort_*):
  // ncclCommAbort returns once the rank's GPU is idle (its free of device memory synchronizes the
  // device). Rank 0's A kernel is stuck (rank 1 never joins A); B's is queued behind it.
  const std::string stuck = kWarmAB + "all_reduce A xa; all_reduce B xb; ";
  const std::string peer = kWarmAB + "all_reduce B xb; abort B; abort A";
  EXPECT_VERDICT(two_ranks("", stuck + "abort B; abort A", peer), Verdict::Deadlock);
  // Aborting the stuck comm first frees the stream, but B's kernel then waits for rank 1, which aborted
  // B: the GPU never idles (abort_stuck_comm_first hangs in `abort A`).
  EXPECT_VERDICT(two_ranks("", stuck + "abort A; abort B", peer), Verdict::Deadlock);
  // Both in one group: every aborted comm's kernels exit first (abort_grouped_behind_stuck_kernel completes).
  EXPECT_VERDICT(two_ranks("", stuck + "group { abort B; abort A }", peer), Verdict::Safe);
  // B on its own stream completes, but A's stuck kernel keeps the GPU busy: `abort B` hangs too
  // (abort_two_streams).
  EXPECT_VERDICT(two_ranks("", kWarmAB + "all_reduce A xa; all_reduce B xb on side; abort B; abort A",
                           kWarmAB + "all_reduce B xb on side; abort B; abort A"),
                 Verdict::Deadlock);
  // The aborted comm's own kernels exit: with no other work, the abort returns.
  EXPECT_VERDICT(two_ranks("", kWarmAB + "all_reduce A xa; all_reduce A ya; abort A", kWarmAB), Verdict::Safe);
  // Behind a kernel that completes later, the abort waits for it and then returns.
  EXPECT_VERDICT(two_ranks("", kWarmAB + "all_reduce A xa; all_reduce B xb; abort B; sync main",
                           kWarmAB + "all_reduce A xa; sync main"),
                 Verdict::Safe);
}

TEST(SemanticsAbort, ReleasesAPendingCallOnANonblockingComm) {
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1] nonblocking\nrank 0 { alloc wa; register A wa; abort A }", Verdict::Safe);
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1] nonblocking\nrank 0 { alloc wa; register A wa }", Verdict::Deadlock);
}

TEST(SemanticsAbort, ReleasesThisRanksWorkOnTheComm) {
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "all_reduce A plain; abort A; sync main", ""), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "all_reduce A plain; sync main", ""), Verdict::Deadlock);
}

// =============================================================================================
// §2 collectives, barrier, sync, end of program.

TEST(SemanticsCollective, IsStreamOrderedWithoutTheConnect) {
  // Calibration noconnect_coll_then_register: the host returns once the kernel is enqueued.
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "alloc wb; all_reduce A plain; register B wb; sync main",
                           "alloc wb; register B wb; all_reduce A plain; sync main"),
                 Verdict::Safe);
}

TEST(SemanticsCollective, CrossOrderedOnOneStreamDeadlocksOnTheDevice) {
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "all_reduce A plain; all_reduce B plain; sync main",
                           "all_reduce B plain; all_reduce A plain; sync main"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(
      two_ranks("set runtime_connect = off", "all_reduce A plain on main; all_reduce B wb on side; sync device",
                "all_reduce B wb on side; all_reduce A plain on main; sync device"),
      Verdict::Safe);
  // Calibration warm_coll_cross_same_stream.
  EXPECT_VERDICT(two_ranks("", kWarmAB + "all_reduce A plain; all_reduce B plain; sync main",
                           kWarmAB + "all_reduce B plain; all_reduce A plain; sync main"),
                 Verdict::Deadlock);
}

TEST(SemanticsCollective, EveryKindIsStreamOrdered) {
  for (const std::string op : {"all_reduce A plain", "all_gather A plain", "reduce_scatter A plain",
                               "broadcast A plain root=0", "reduce A plain root=1", "all_to_all A plain"}) {
    SCOPED_TRACE(op);
    EXPECT_VERDICT(two_ranks("set runtime_connect = off", "alloc wb; " + op + "; register B wb; sync main",
                             "alloc wb; register B wb; " + op + "; sync main"),
                   Verdict::Safe);
    EXPECT_VERDICT(
        two_ranks("set runtime_connect = off", op + "; sync main; " + op + "; sync main", op + "; sync main"),
        Verdict::Deadlock);
  }
}

TEST(SemanticsCollective, EndOfProgramWaitsForTheDevice) {
  // A rank that issued an unmatched collective and ended cannot exit past the hung kernel.
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "all_reduce A plain", ""), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "all_reduce A plain", "all_reduce A plain"), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", kWarmAB + "all_reduce A plain", kWarmAB), Verdict::Deadlock);
}

TEST(SemanticsBarrier, IsAnAllReduceThenAWait) {
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "alloc wb; barrier A; register B wb",
                           "alloc wb; register B wb; barrier A"),
                 Verdict::Deadlock);
  // The same all-reduce without the wait does not hang.
  EXPECT_VERDICT(
      two_ranks("set runtime_connect = off", "alloc wb; all_reduce A plain count=1; register B wb; sync main",
                "alloc wb; register B wb; all_reduce A plain count=1; sync main"),
      Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", "barrier A; barrier B", "barrier A; barrier B"), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "barrier A; barrier B", "barrier B; barrier A"),
                 Verdict::Deadlock);
}

TEST(SemanticsSync, StreamSyncWaitsOnlyForItsStream) {
  auto scenario = [](const std::string& sync) {
    return two_ranks("set runtime_connect = off",
                     "alloc wb; all_reduce A plain on side; " + sync + "; register B wb; sync side",
                     "alloc wb; register B wb; all_reduce A plain on side; sync side");
  };
  EXPECT_VERDICT(scenario("sync main"), Verdict::Safe);
  EXPECT_VERDICT(scenario("sync side"), Verdict::Deadlock);
  EXPECT_VERDICT(scenario("sync device"), Verdict::Deadlock);
}

TEST(SemanticsSync, CalibrationSyncBeforePeerColl) {
  EXPECT_VERDICT(two_ranks("", "alloc wb\n" + kWarmAB + "all_reduce A plain; sync main; register B wb",
                           "alloc wb\n" + kWarmAB + "register B wb; all_reduce A plain; sync main"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wb\n" + kWarmAB + "all_reduce A plain; register B wb; sync main",
                           "alloc wb\n" + kWarmAB + "register B wb; all_reduce A plain; sync main"),
                 Verdict::Safe);
}

// =============================================================================================
// §3.1 HBC slots and mismatches; §4 mismatch on kind, count, dtype, op, root.

TEST(SemanticsHostSlot, DifferentKindsInOneSlotMismatch) {
  EXPECT_VERDICT(R"(ranks 2
comm P = [0, 1]
rank 0 { alloc wa; register P wa }
rank 1 { split P -> none }
)",
                 Verdict::Mismatch);
}

// Two ranks each issuing one statement on A (connect off, so that only the slot decides).
std::string coll_pair(const std::string& op0, const std::string& op1) {
  return two_ranks("set runtime_connect = off", op0 + "; sync main", op1 + "; sync main");
}

TEST(SemanticsMismatch, Kind) {
  EXPECT_VERDICT(coll_pair("all_reduce A plain", "all_gather A plain"), Verdict::Mismatch);
  EXPECT_VERDICT(coll_pair("all_gather A plain", "all_gather A plain"), Verdict::Safe);
}

TEST(SemanticsMismatch, Count) {
  EXPECT_VERDICT(coll_pair("all_reduce A plain count=1", "all_reduce A plain count=2"), Verdict::Mismatch);
  EXPECT_VERDICT(coll_pair("all_reduce A plain count=2", "all_reduce A plain count=2"), Verdict::Safe);
  // The count of a collective without count= comes from its buffer's size.
  EXPECT_VERDICT(coll_pair("alloc x 4MiB; all_reduce A x", "alloc x 1MiB; all_reduce A x"), Verdict::Mismatch);
  EXPECT_VERDICT(coll_pair("alloc x 1MiB; all_reduce A x", "alloc x 1MiB; all_reduce A x"), Verdict::Safe);
}

TEST(SemanticsMismatch, Dtype) {
  EXPECT_VERDICT(coll_pair("all_reduce A plain count=8 dtype=float32", "all_reduce A plain count=8 dtype=float16"),
                 Verdict::Mismatch);
  EXPECT_VERDICT(coll_pair("all_reduce A plain count=8 dtype=float16", "all_reduce A plain count=8 dtype=half"),
                 Verdict::Safe);
}

TEST(SemanticsMismatch, ReductionOp) {
  EXPECT_VERDICT(coll_pair("all_reduce A plain op=sum", "all_reduce A plain op=max"), Verdict::Mismatch);
  EXPECT_VERDICT(coll_pair("all_reduce A plain op=max", "all_reduce A plain op=max"), Verdict::Safe);
}

TEST(SemanticsMismatch, Root) {
  EXPECT_VERDICT(coll_pair("broadcast A plain root=0", "broadcast A plain root=1"), Verdict::Mismatch);
  EXPECT_VERDICT(coll_pair("reduce A plain root=0", "reduce A plain root=1"), Verdict::Mismatch);
  EXPECT_VERDICT(coll_pair("broadcast A plain root=1", "broadcast A plain root=1"), Verdict::Safe);
}

// =============================================================================================
// §3.2 the runtime connect.

TEST(SemanticsConnect, ColdCrossOrderedCollectivesOnTwoStreams) {
  const std::string r0 = "alloc wb; all_reduce A plain on main; all_reduce B wb on side; sync main; sync side";
  const std::string r1 = "alloc wb; all_reduce B wb on side; all_reduce A plain on main; sync main; sync side";
  EXPECT_VERDICT(two_ranks("", r0, r1), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = on", r0, r1), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", r0, r1), Verdict::Safe);
  // Warm comms were connected earlier: calibration warm_coll_cross_two_streams.
  EXPECT_VERDICT(two_ranks("", kWarmAB + r0, kWarmAB + r1), Verdict::Safe);
}

TEST(SemanticsConnect, IsOncePerComm) {
  auto scenario = [](const std::string& warm) {
    return two_ranks("", "alloc wb; " + warm + "; all_reduce A plain; register B wb; sync main",
                     "alloc wb; " + warm + "; register B wb; all_reduce A plain; sync main");
  };
  EXPECT_VERDICT(scenario("all_reduce A plain; sync main"), Verdict::Safe);      // A connected
  EXPECT_VERDICT(scenario("all_reduce B plain; sync main"), Verdict::Deadlock);  // only B connected
}

TEST(SemanticsConnect, ASymmetricCollectiveNeedsNoConnect) {
  // Cold comms; the all_reduce on A is symmetric on both ranks, so rank 0 moves on to register B.
  auto scenario = [](const std::string& flag) {
    return two_ranks("", "alloc wa; alloc wb; register A wa " + flag + "; all_reduce A wa; register B wb; sync main",
                     "alloc wa; alloc wb; register A wa " + flag + "; register B wb; all_reduce A wa; sync main");
  };
  EXPECT_VERDICT(scenario("symmetric"), Verdict::Safe);
  EXPECT_VERDICT(scenario(""), Verdict::Safe);  // the flag defaults to symmetric
  // A `default` window does not make the kernel symmetric: rank 0 waits for the connect.
  EXPECT_VERDICT(scenario("default"), Verdict::Deadlock);
}

// =============================================================================================
// §3 host and device slots are two sequences.

TEST(SemanticsSlots, HostAndDeviceSlotsAreSeparateSequences) {
  const std::string r0 = "alloc wa; all_reduce A plain; register A wa; sync main";
  const std::string r1 = "alloc wa; register A wa; all_reduce A plain; sync main";
  EXPECT_VERDICT(two_ranks("", kWarmAB + r0, kWarmAB + r1), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", r0, r1), Verdict::Safe);
  // Cold: rank 0's all_reduce waits in the connect while rank 1 waits in register A.
  EXPECT_VERDICT(two_ranks("", r0, r1), Verdict::Deadlock);
}

// =============================================================================================
// §3.3 device progress: stream_progress.

TEST(SemanticsProgress, SerializedMakesCrossOrderedCollectivesOnTwoStreamsDeadlock) {
  const std::string r0 =
      "alloc wb\n" + kWarmAB + "all_reduce A plain on main; all_reduce B wb on side; sync main; sync side";
  const std::string r1 =
      "alloc wb\n" + kWarmAB + "all_reduce B wb on side; all_reduce A plain on main; sync main; sync side";
  EXPECT_VERDICT(two_ranks("", r0, r1), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set stream_progress = independent", r0, r1), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set stream_progress = serialized", r0, r1), Verdict::Deadlock);
}

TEST(SemanticsProgress, SerializedRunsInIssueOrderAcrossStreams) {
  const std::string r0 = "alloc wb; all_reduce A plain on main; all_reduce B wb on side; sync device";
  EXPECT_VERDICT(two_ranks("set runtime_connect = off\nset stream_progress = serialized", r0,
                           "alloc wb; all_reduce A plain on main; all_reduce B wb on side; sync device"),
                 Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off\nset stream_progress = serialized", r0,
                           "alloc wb; all_reduce B wb on side; all_reduce A plain on main; sync device"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", r0,
                           "alloc wb; all_reduce B wb on side; all_reduce A plain on main; sync device"),
                 Verdict::Safe);
}

// =============================================================================================
// §3.4 symmetric kernels.

TEST(SemanticsSymmetric, BothRanksInAWindowIsSafe) {
  const std::string both = "alloc wa; register A wa; all_reduce A wa; sync main";
  EXPECT_VERDICT(two_ranks("", both, both), Verdict::Safe);
}

TEST(SemanticsSymmetric, OneRankSymmetricTheOtherNotIsDivergent) {
  // Calibration symmetric_divergent_buffer.
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa; all_reduce A wa; sync main",
                           "alloc wa; register A wa; all_reduce A plain; sync main"),
                 Verdict::DivergentKernel);
}

TEST(SemanticsSymmetric, OnlyAWindowOnThatSameCommCounts) {
  // Both ranks hold x in a window on A and y in a window on B.
  auto scenario = [](const std::string& buf0, const std::string& buf1) {
    return two_ranks("", "alloc x; alloc y; register A x; register B y; all_reduce A " + buf0 + "; sync main",
                     "alloc x; alloc y; register A x; register B y; all_reduce A " + buf1 + "; sync main");
  };
  EXPECT_VERDICT(scenario("x", "y"), Verdict::DivergentKernel);
  EXPECT_VERDICT(scenario("y", "y"), Verdict::Safe);  // the window is on another comm for both
  EXPECT_VERDICT(scenario("x", "x"), Verdict::Safe);
}

TEST(SemanticsSymmetric, DefaultFlagDoesNotMakeAKernelSymmetric) {
  auto scenario = [](const std::string& flag0, const std::string& flag1) {
    return two_ranks("", "alloc wa; register A wa " + flag0 + "; all_reduce A wa; sync main",
                     "alloc wa; register A wa " + flag1 + "; all_reduce A wa; sync main");
  };
  EXPECT_VERDICT(scenario("default", "symmetric"), Verdict::DivergentKernel);
  EXPECT_VERDICT(scenario("default", "default"), Verdict::Safe);
  EXPECT_VERDICT(scenario("symmetric", "symmetric"), Verdict::Safe);
}

TEST(SemanticsSymmetric, EveryBufferOfTheOpMustBeInAWindow) {
  auto scenario = [](const std::string& second_on_rank1) {
    return two_ranks(
        "", "alloc x; alloc y; register A x; register A y; all_reduce A x -> y; sync main",
        "alloc x; alloc y; register A x; register A " + second_on_rank1 + "; all_reduce A x -> y; sync main");
  };
  EXPECT_VERDICT(scenario("x"), Verdict::DivergentKernel);  // rank 1: y is in no window
  EXPECT_VERDICT(scenario("y"), Verdict::Safe);
}

// =============================================================================================
// §3.5 DEVSYNC (above), §3.6 group.

TEST(SemanticsGroup, CrossOrderedRegistrationsComplete) {
  // Calibration group_register_cross.
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; group { register A wa; register B wb }",
                           "alloc wa; alloc wb; group { register B wb; register A wa }"),
                 Verdict::Safe);
  // One group against a plain sequence in the other order: the group's HBCs run concurrently.
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; group { register A wa; register B wb }",
                           "alloc wa; alloc wb; register B wb; register A wa"),
                 Verdict::Safe);
}

TEST(SemanticsGroup, TheThreadWaitsForEveryHbcOfTheGroup) {
  EXPECT_VERDICT(
      two_ranks("", "alloc wa; alloc wb; group { register A wa; register B wb }", "alloc wa; alloc wb; register A wa"),
      Verdict::Deadlock);
}

TEST(SemanticsGroup, CrossOrderedCollectivesOnOneStreamComplete) {
  EXPECT_VERDICT(two_ranks("", "group { all_reduce A plain; all_reduce B plain }; sync main",
                           "group { all_reduce B plain; all_reduce A plain }; sync main"),
                 Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", kWarmAB + "group { all_reduce A plain; all_reduce B plain }; sync main",
                           kWarmAB + "group { all_reduce B plain; all_reduce A plain }; sync main"),
                 Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", kWarmAB + "all_reduce A plain; all_reduce B plain; sync main",
                           kWarmAB + "all_reduce B plain; all_reduce A plain; sync main"),
                 Verdict::Deadlock);
}

TEST(SemanticsGroup, CrossOrderedCollectivesOnTwoStreamsComplete) {
  // Calibration warm_group_cross, and the same cold (the group reaches both connects at once).
  const std::string r0 =
      "alloc wb; group { all_reduce A plain on main; all_reduce B wb on side }; sync main; sync side";
  const std::string r1 =
      "alloc wb; group { all_reduce B wb on side; all_reduce A plain on main }; sync main; sync side";
  EXPECT_VERDICT(two_ranks("", kWarmAB + r0, kWarmAB + r1), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", r0, r1), Verdict::Safe);
}

// =============================================================================================
// §3.7 nonblocking comms.

TEST(SemanticsNonblocking, CrossOrderedRegistrationsComplete) {
  const std::string r0 = "alloc wa; alloc wb; register A wa; register B wb";
  const std::string r1 = "alloc wa; alloc wb; register B wb; register A wa";
  EXPECT_VERDICT(two_ranks("set comm_mode = nonblocking", r0, r1), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set comm_mode = blocking", r0, r1), Verdict::Deadlock);
  // The per-comm mode: one nonblocking comm is enough.
  EXPECT_VERDICT(
      "ranks 2\ncomm A = [0, 1] nonblocking\ncomm B = [0, 1]\nrank 0 {\n" + r0 + "\n}\nrank 1 {\n" + r1 + "\n}\n",
      Verdict::Safe);
  EXPECT_VERDICT(
      "ranks 2\ncomm A = [0, 1]\ncomm B = [0, 1] nonblocking\nrank 0 {\n" + r0 + "\n}\nrank 1 {\n" + r1 + "\n}\n",
      Verdict::Safe);
}

TEST(SemanticsNonblocking, TheNextCallOnTheCommWaitsForThePreviousOne) {
  auto scenario = [](const std::string& r0) {
    return "ranks 2\ncomm A = [0, 1] nonblocking\ncomm B = [0, 1]\n"
           "rank 0 { alloc wa; alloc wa2; alloc wb; " +
           r0 +
           " }\n"
           "rank 1 { alloc wa; alloc wa2; alloc wb; register B wb; register A wa; register A wa2 }\n";
  };
  // Rank 0's second call on A waits for the first, which needs rank 1, which waits in register B.
  EXPECT_VERDICT(scenario("register A wa; register A wa2; register B wb"), Verdict::Deadlock);
  EXPECT_VERDICT(scenario("register A wa; register B wb; register A wa2"), Verdict::Safe);
}

TEST(SemanticsNonblocking, TheConnectDoesNotBlockTheHost) {
  const std::string r0 = "alloc wb; all_reduce A plain; register B wb; sync main";
  const std::string r1 = "alloc wb; register B wb; all_reduce A plain; sync main";
  const std::string nb = "ranks 2\ncomm A = [0, 1] nonblocking\ncomm B = [0, 1]\n";
  EXPECT_VERDICT(nb + "rank 0 {\n" + r0 + "\n}\nrank 1 {\n" + r1 + "\n}\n", Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", r0, r1), Verdict::Deadlock);  // blocking: calibration cold_coll_then_register
  // ... but the next call on the nonblocking comm waits for the connect to complete.
  EXPECT_VERDICT(nb + "rank 0 { alloc wb; all_reduce A plain; all_reduce A plain; register B wb; sync main }\n"
                      "rank 1 { alloc wb; register B wb; all_reduce A plain; all_reduce A plain; sync main }\n",
                 Verdict::Deadlock);
}

TEST(SemanticsNonblocking, APostedCallNeverMatchedIsUnfinished) {
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1] nonblocking\nrank 0 { alloc wa; register A wa }", Verdict::Deadlock);
  EXPECT_VERDICT("ranks 2\ncomm A = [0, 1] nonblocking\nrank * { alloc wa; register A wa }", Verdict::Safe);
}

// =============================================================================================
// §3.8 threads and choices.

TEST(SemanticsThreads, TwoThreadsRegisterIndependently) {
  // One thread per comm on rank 0: rank 1's order is served by whichever thread it needs.
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb\nthread t1 { register A wa }\nthread t2 { register B wb }",
                           "alloc wa; alloc wb; register B wb; register A wa"),
                 Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; register A wa; register B wb",
                           "alloc wa; alloc wb; register B wb; register A wa"),
                 Verdict::Deadlock);
}

TEST(SemanticsThreads, OppositeOrdersInTwoThreadsAgainstOnePeerOrder) {
  // Rank 0: t1 registers A then B, t2 registers B then A. Rank 1 registers A, B, B, A in one thread.
  // On MPI comms (windows: MPI_Win_create is collective over the comm) two threads must order their
  // collective calls on one comm (MPI 4.1 sec. 11.6.2); here nothing orders t1's B against t2's B (nor the A's),
  // so both programs are a usage error, whatever rank 1 does: t1 calls register B while t2 is inside B.
  const std::string r0 =
      "alloc a1; alloc b1; alloc a2; alloc b2\n"
      "thread t1 { register A a1; register B b1 }\n"
      "thread t2 { register B b2; register A a2 }";
  const std::string r1_abba =
      "alloc a1; alloc b1; alloc a2; alloc b2; register A a1; register B b1; register B b2; register A a2";
  const std::string r1_abab =
      "alloc a1; alloc b1; alloc a2; alloc b2; register A a1; register B b1; register A a2; register B b2";
  EXPECT_VERDICT(two_ranks("set profile = mpi", r0, r1_abba), Verdict::UsageError);
  EXPECT_VERDICT(two_ranks("set profile = mpi", r0, r1_abab), Verdict::UsageError);
  // On NCCL comms the same program is a usage error first (issue 14): t1 calls register B while t2 is
  // blocked inside B, and NCCL communicators are not thread-safe.
  EXPECT_VERDICT(two_ranks("", r0, r1_abba), Verdict::UsageError);
  EXPECT_VERDICT(two_ranks("", r0, r1_abab), Verdict::UsageError);
}

TEST(SemanticsChoices, AnyOrderIsExploredExhaustively) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; any_order { register A wa; register B wb }",
                           "alloc wa; alloc wb; register A wa; register B wb"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; any_order { register A wa; register B wb }",
                           "alloc wa; alloc wb; register B wb; register A wa"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; register A wa; register B wb",
                           "alloc wa; alloc wb; register A wa; register B wb"),
                 Verdict::Safe);
  // Orders of local calls never matter.
  EXPECT_VERDICT(two_ranks("", "alloc wa; alloc wb; any_order { register_local A wa; register_local B wb }",
                           "alloc wa; alloc wb; register_local A wa; register_local B wb"),
                 Verdict::Safe);
}

TEST(SemanticsChoices, EitherExploresEveryAlternative) {
  const std::string r1 = "alloc wa; alloc wb; register A wa; register B wb";
  // The bad alternative listed last and listed first.
  EXPECT_VERDICT(
      two_ranks("", "alloc wa; alloc wb\neither { register A wa; register B wb } or { register B wb; register A wa }",
                r1),
      Verdict::Deadlock);
  EXPECT_VERDICT(
      two_ranks("", "alloc wa; alloc wb\neither { register B wb; register A wa } or { register A wa; register B wb }",
                r1),
      Verdict::Deadlock);
  EXPECT_VERDICT(
      two_ranks("", "alloc wa; alloc wb\neither { register A wa; register B wb } or { register A wb; register B wa }",
                r1),
      Verdict::Safe);
  // A mismatch reachable through one alternative of three.
  EXPECT_VERDICT(two_ranks("set runtime_connect = off",
                           "either { all_reduce A plain count=1 } or { all_reduce A plain count=1 } or { all_reduce A "
                           "plain count=2 }; sync main",
                           "all_reduce A plain count=1; sync main"),
                 Verdict::Mismatch);
}

TEST(SemanticsChoices, MaybeSkippedByOneRankLeavesThePeerWaiting) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; maybe { register A wa }", "alloc wa; register A wa"), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wa; maybe { register A wa }", "alloc wa; maybe { register A wa }"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc wa; register A wa", "alloc wa; register A wa"), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", "alloc wa; maybe { register_local A wa }", "alloc wa"), Verdict::Safe);
}

TEST(SemanticsChoices, RepeatUnrolls) {
  EXPECT_VERDICT(two_ranks("", "alloc wa; repeat 3 { register A wa }", "alloc wa; repeat 2 { register A wa }"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(
      two_ranks("", "alloc wa; repeat 3 { register A wa }", "alloc wa; register A wa; repeat 2 { register A wa }"),
      Verdict::Safe);
}

// =============================================================================================
// §3.3 send/recv pairs (nccl).

TEST(SemanticsP2p, MatchedPairsComplete) {
  EXPECT_VERDICT(two_ranks("", "send A 1 x; sync main", "recv A 0 x; sync main"), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "send A 1 x; sync main", "recv A 0 x; sync main"),
                 Verdict::Safe);
}

TEST(SemanticsP2p, ASendWithoutARecvDeadlocks) {
  EXPECT_VERDICT(two_ranks("", "send A 1 x; sync main", ""), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "send A 1 x", ""), Verdict::Deadlock);
  // Two sends facing each other are no pair.
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "send A 1 x; sync main", "send A 0 x; sync main"),
                 Verdict::Deadlock);
  // Pairs match by count of earlier pairs: the second send has no partner.
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "send A 1 x; send A 1 x; sync main", "recv A 0 x; sync main"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(
      two_ranks("set runtime_connect = off", "send A 1 x; send A 1 x; sync main", "recv A 0 x; recv A 0 x; sync main"),
      Verdict::Safe);
}

TEST(SemanticsP2p, CountsMustAgree) {
  EXPECT_VERDICT(
      two_ranks("set runtime_connect = off", "send A 1 x count=1; sync main", "recv A 0 x count=2; sync main"),
      Verdict::Mismatch);
  EXPECT_VERDICT(
      two_ranks("set runtime_connect = off", "send A 1 x count=2; sync main", "recv A 0 x count=2; sync main"),
      Verdict::Safe);
}

TEST(SemanticsP2p, AnExchangeOnOneStreamNeedsAGroup) {
  EXPECT_VERDICT(
      two_ranks("set runtime_connect = off", "send A 1 x; recv A 1 y; sync main", "send A 0 x; recv A 0 y; sync main"),
      Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "group { send A 1 x; recv A 1 y }; sync main",
                           "group { send A 0 x; recv A 0 y }; sync main"),
                 Verdict::Safe);
  EXPECT_VERDICT(
      two_ranks("set runtime_connect = off", "send A 1 x; recv A 1 y; sync main", "recv A 0 y; send A 0 x; sync main"),
      Verdict::Safe);
}

TEST(SemanticsP2p, CountsFromBufferSizesMustAgree) {
  // A pair fills one slot; without count= the count comes from the buffer's size, as for collectives.
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "alloc x 4MiB; send A 1 x; sync main",
                           "alloc x 1MiB; recv A 0 x; sync main"),
                 Verdict::Mismatch);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "alloc x 1MiB; send A 1 x; sync main",
                           "alloc x 1MiB; recv A 0 x; sync main"),
                 Verdict::Safe);
}

TEST(SemanticsP2p, DtypesMustAgree) {
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "send A 1 x count=4 dtype=float32; sync main",
                           "recv A 0 x count=4 dtype=float16; sync main"),
                 Verdict::Mismatch);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "send A 1 x count=4 dtype=float16; sync main",
                           "recv A 0 x count=4 dtype=float16; sync main"),
                 Verdict::Safe);
}

TEST(SemanticsP2p, IsStreamOrderedInNccl) {
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", "alloc wb; send A 1 x; register B wb; sync main",
                           "alloc wb; register B wb; recv A 0 x; sync main"),
                 Verdict::Safe);
}

// =============================================================================================
// §6 profile mpi.

const std::string kMpi = "set profile = mpi";

TEST(SemanticsMpi, RegisterIsHostBlocking) {
  EXPECT_VERDICT(
      two_ranks(kMpi, "alloc w 4KiB; register A w; register B w", "alloc w 4KiB; register B w; register A w"),
      Verdict::Deadlock);
  EXPECT_VERDICT(
      two_ranks(kMpi, "alloc w 4KiB; register A w; register B w", "alloc w 4KiB; register A w; register B w"),
      Verdict::Safe);
  EXPECT_VERDICT(two_ranks(kMpi, "alloc w 4KiB; register A w", ""), Verdict::Deadlock);
}

TEST(SemanticsMpi, RegisterNeedsNoVmmMemory) {
  const std::string prog = "cuda_malloc w; register A w";
  EXPECT_VERDICT(two_ranks(kMpi, prog, prog), Verdict::Safe);
  EXPECT_VERDICT(two_ranks("", prog, prog), Verdict::UsageError);
  EXPECT_VERDICT(two_ranks(kMpi, "register A plain", "register A plain"), Verdict::Safe);
}

TEST(SemanticsMpi, SizeZeroRegisterStillJoins) {
  // MPI_Win_create is collective whatever the size.
  EXPECT_VERDICT(two_ranks(kMpi, "alloc w 0; register A w", "alloc w; register A w"), Verdict::Safe);
}

TEST(SemanticsMpi, DeregisterIsCollective) {
  const std::string r0 = "alloc w; register A w; register B w; deregister A w; deregister B w";
  const std::string r1 = "alloc w; register A w; register B w; deregister B w; deregister A w";
  EXPECT_VERDICT(two_ranks(kMpi, r0, r1), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", r0, r1), Verdict::Safe);
  EXPECT_VERDICT(two_ranks(kMpi, r0, r0), Verdict::Safe);
  // One rank frees its window, the other never does.
  EXPECT_VERDICT(two_ranks(kMpi, "alloc w; register A w; deregister A w", "alloc w; register A w"), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("", "alloc w; register A w; deregister A w", "alloc w; register A w"), Verdict::Safe);
}

TEST(SemanticsMpi, DeregisterWithoutAWindowIsUsageError) {
  EXPECT_VERDICT(two_ranks(kMpi, "alloc w; deregister A w", "alloc w; deregister A w"), Verdict::UsageError);
}

TEST(SemanticsMpi, CollectivesAreHostBlocking) {
  EXPECT_VERDICT(two_ranks(kMpi, "all_reduce A x count=1; all_reduce B x count=1",
                           "all_reduce B x count=1; all_reduce A x count=1"),
                 Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks(kMpi, "all_reduce A x count=1; all_reduce B x count=1",
                           "all_reduce A x count=1; all_reduce B x count=1"),
                 Verdict::Safe);
  // No streams: what is safe on two NCCL streams without the connect hangs in MPI.
  const std::string r0 = "all_reduce A plain on main; all_reduce B plain on side; sync main; sync side";
  const std::string r1 = "all_reduce B plain on side; all_reduce A plain on main; sync main; sync side";
  EXPECT_VERDICT(two_ranks(kMpi, r0, r1), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", r0, r1), Verdict::Safe);
  // A collective then a window, against the other order.
  const std::string c0 = "alloc w; all_reduce A plain; register B w; sync main";
  const std::string c1 = "alloc w; register B w; all_reduce A plain; sync main";
  EXPECT_VERDICT(two_ranks(kMpi, c0, c1), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", c0, c1), Verdict::Safe);
}

TEST(SemanticsMpi, BarrierIsHostBlocking) {
  EXPECT_VERDICT(two_ranks(kMpi, "barrier A; barrier B", "barrier B; barrier A"), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks(kMpi, "barrier A; barrier B", "barrier A; barrier B"), Verdict::Safe);
}

TEST(SemanticsMpi, SlotsAreCheckedLikeNccl) {
  // Calibration-mpi mpi_reduce_barrier_mismatch, and the count.
  EXPECT_VERDICT(two_ranks(kMpi, "reduce A x count=1 root=0; barrier A", "barrier A; reduce A x count=1 root=0"),
                 Verdict::Mismatch);
  EXPECT_VERDICT(two_ranks(kMpi, "all_reduce A x count=1", "all_reduce A x count=2"), Verdict::Mismatch);
}

TEST(SemanticsMpi, SendRecvIsASynchronousPair) {
  EXPECT_VERDICT(two_ranks(kMpi, "send A 1 x; recv A 1 y", "send A 0 x; recv A 0 y"), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks(kMpi, "send A 1 x; recv A 1 y", "recv A 0 y; send A 0 x"), Verdict::Safe);
  EXPECT_VERDICT(two_ranks(kMpi, "send A 1 x", ""), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks(kMpi, "recv A 1 x", ""), Verdict::Deadlock);
  // MPI_Ssend blocks the host until the recv is posted; ncclSend is stream-ordered.
  const std::string s0 = "alloc w; send A 1 x; register B w";
  const std::string s1 = "alloc w; register B w; recv A 0 x";
  EXPECT_VERDICT(two_ranks(kMpi, s0, s1), Verdict::Deadlock);
  EXPECT_VERDICT(two_ranks("set runtime_connect = off", s0 + "; sync main", s1 + "; sync main"), Verdict::Safe);
}

TEST(SemanticsMpi, SendRecvCountsMustAgree) {
  // A receive shorter than the message (MPI_ERR_TRUNCATE in a real MPI) fills the pair with calls
  // that differ in count.
  EXPECT_VERDICT(two_ranks(kMpi, "send A 1 x count=2", "recv A 0 x count=1"), Verdict::Mismatch);
  EXPECT_VERDICT(two_ranks(kMpi, "send A 1 x count=2", "recv A 0 x count=2"), Verdict::Safe);
}

TEST(SemanticsMpi, DeregisterTakesAHostSlot) {
  // nccl: deregister is local and takes no slot, so rank 0's second register pairs with rank 1's.
  const std::string r0 = "alloc wa; alloc wb; register A wa; deregister A wa; register A wb";
  const std::string r1 = "alloc wa; alloc wb; register A wa; register A wb";
  EXPECT_VERDICT(two_ranks("", r0, r1), Verdict::Safe);
  // mpi: MPI_Win_free fills slot 1 against rank 1's MPI_Win_create.
  EXPECT_VERDICT(two_ranks(kMpi, r0, r1), Verdict::Mismatch);
}

TEST(SemanticsMpi, SyncIsANoOp) {
  const std::string prog = "all_reduce A x count=1 on side; sync side; sync main; sync device";
  EXPECT_VERDICT(two_ranks(kMpi, prog, prog), Verdict::Safe);
}

TEST(SemanticsMpi, BroadcastIsAssumedToSynchronizeAndSaysSo) {
  const std::string bcast = two_ranks(kMpi, "broadcast A x count=1 root=0; broadcast B x count=1 root=0",
                                      "broadcast B x count=1 root=0; broadcast A x count=1 root=0");
  EXPECT_VERDICT(bcast, Verdict::Deadlock);
  auto mentions_broadcast = [](const model::World& w) {
    return std::any_of(w.notes.begin(), w.notes.end(),
                       [](const std::string& n) { return n.find("broadcast") != std::string::npos; });
  };
  EXPECT_TRUE(mentions_broadcast(world_from(bcast)));
  EXPECT_TRUE(
      mentions_broadcast(world_from(two_ranks(kMpi, "reduce A x count=1 root=0", "reduce A x count=1 root=0"))));
  EXPECT_FALSE(mentions_broadcast(world_from(two_ranks(kMpi, "all_reduce A x count=1", "all_reduce A x count=1"))));
  EXPECT_FALSE(mentions_broadcast(
      world_from(two_ranks("", "broadcast A x count=1 root=0; sync main", "broadcast A x count=1 root=0; sync main"))));
}

TEST(SemanticsMpi, CyclicBroadcastsOverThreeComms) {
  EXPECT_VERDICT(R"(ranks 3
set profile = mpi
comm c0 = [0, 1]
comm c1 = [1, 2]
comm c2 = [2, 0]
rank 0 { alloc x 64KiB; broadcast c0 x root=0; broadcast c2 x root=2 }
rank 1 { alloc x 64KiB; broadcast c1 x root=1; broadcast c0 x root=0 }
rank 2 { alloc x 64KiB; broadcast c2 x root=2; broadcast c1 x root=1 }
)",
                 Verdict::Deadlock);
  EXPECT_VERDICT(R"(ranks 3
set profile = mpi
comm c0 = [0, 1]
comm c1 = [1, 2]
comm c2 = [2, 0]
rank 0 { alloc x 64KiB; broadcast c0 x root=0; broadcast c2 x root=2 }
rank 1 { alloc x 64KiB; broadcast c0 x root=0; broadcast c1 x root=1 }
rank 2 { alloc x 64KiB; broadcast c1 x root=1; broadcast c2 x root=2 }
)",
                 Verdict::Safe);
}

TEST(SemanticsMpi, SplitSkippedByOneRankDeadlocks) {
  EXPECT_VERDICT("ranks 2\nset profile = mpi\ncomm A = all\ncomm X = [0] uninit\nrank 0 { split A -> X }",
                 Verdict::Deadlock);
  EXPECT_VERDICT(
      "ranks 2\nset profile = mpi\ncomm A = all\ncomm X = [0] uninit\n"
      "rank 0 { split A -> X }\nrank 1 { split A -> none }",
      Verdict::Safe);
}

// =============================================================================================
// §4 reports: schedule, blocked calls, violation location; search options.

const std::string kRegCrossOrder = R"(ranks 2
name "reg_cross_order"
comm A = [0, 1]
comm B = [0, 1]
rank 0 {
  alloc wa
  alloc wb
  register A wa
  register B wb
}
rank 1 {
  alloc wa
  alloc wb
  register B wb
  register A wa
}
)";

// The id of the call of `rank` whose text is `text`.
int call_id(const model::World& w, int rank, const std::string& text) {
  for (const auto& c : w.calls)
    if (c.rank == rank && c.text == text) return c.id;
  return -1;
}

TEST(SemanticsReport, RegCrossOrderScheduleEndsWithBothRegisters) {
  CheckResult r = check_text(kRegCrossOrder);
  ASSERT_EQ(r.verdict, Verdict::Deadlock);
  ASSERT_FALSE(r.schedule.empty());
  const int reg0 = call_id(*r.world, 0, "register A wa");
  const int reg1 = call_id(*r.world, 1, "register B wb");
  ASSERT_GE(reg0, 0);
  ASSERT_GE(reg1, 0);
  // The last step is one of the two registers, and each rank's last issued call is its register.
  const auto& last = r.schedule.back();
  EXPECT_EQ(last.kind, StepKind::Issue);
  ASSERT_EQ(last.calls.size(), 1u);
  EXPECT_TRUE(last.calls[0] == reg0 || last.calls[0] == reg1) << last.text;
  for (int rank : {0, 1}) {
    int last_call = -1;
    for (const auto& s : r.schedule)
      if (s.rank == rank && s.kind == StepKind::Issue) last_call = s.calls.back();
    EXPECT_EQ(last_call, rank == 0 ? reg0 : reg1) << "rank " << rank;
  }
  // Every call of both programs was issued, in program order.
  EXPECT_EQ(r.executed[0][0].size(), 3u);  // alloc wa, alloc wb, register A wa
  EXPECT_EQ(r.executed[0][0].back(), reg0);
  EXPECT_EQ(r.executed[1][0].back(), reg1);
}

TEST(SemanticsReport, RegCrossOrderBlockedNamesBothRegisters) {
  CheckResult r = check_text(kRegCrossOrder);
  ASSERT_EQ(r.verdict, Verdict::Deadlock);
  const int reg0 = call_id(*r.world, 0, "register A wa");
  const int reg1 = call_id(*r.world, 1, "register B wb");
  bool saw0 = false, saw1 = false;
  for (const auto& b : r.blocked) {
    if (b.thread != 0) continue;
    EXPECT_FALSE(b.finished);
    if (b.rank == 0) {
      EXPECT_EQ(b.call, reg0) << b.reason;
      saw0 = true;
    }
    if (b.rank == 1) {
      EXPECT_EQ(b.call, reg1) << b.reason;
      saw1 = true;
    }
  }
  EXPECT_TRUE(saw0);
  EXPECT_TRUE(saw1);
}

TEST(SemanticsReport, UseAfterDeregisterPointsAtTheDeregister) {
  const std::string text = R"(ranks 2
comm A = [0, 1]
rank * {
  alloc wa
  register A wa
  all_reduce A wa
  deregister A wa
  sync main
}
)";
  CheckResult r = check_text(text);
  ASSERT_EQ(r.verdict, Verdict::UseAfterDeregister) << report::text_report(r);
  ASSERT_TRUE(r.violation.has_value());
  EXPECT_EQ(r.violation->verdict, Verdict::UseAfterDeregister);
  ASSERT_GE(r.violation->call, 0);
  const model::Call& c = r.world->calls[static_cast<size_t>(r.violation->call)];
  EXPECT_EQ(c.kind, model::OpKind::Deregister);
  EXPECT_EQ(c.loc.line, 7);
  EXPECT_EQ(c.rank, r.violation->rank);
  // The schedule ends with that deregister.
  ASSERT_FALSE(r.schedule.empty());
  ASSERT_EQ(r.schedule.back().calls.size(), 1u);
  EXPECT_EQ(r.schedule.back().calls[0], r.violation->call);
  // The blocked list names it on the violating rank.
  bool named = false;
  for (const auto& b : r.blocked)
    if (b.rank == r.violation->rank && b.thread == r.violation->thread) named = b.call == r.violation->call;
  EXPECT_TRUE(named);
}

TEST(SemanticsReport, UseAfterFreePointsAtTheFree) {
  const std::string text =
      "ranks 2\ncomm A = [0, 1]\nrank * {\n  alloc x\n  all_reduce A x\n  free x\n  sync main\n}\n";
  CheckResult r = check_text(text);
  ASSERT_EQ(r.verdict, Verdict::UseAfterFree) << report::text_report(r);
  ASSERT_TRUE(r.violation.has_value());
  const model::Call& c = r.world->calls[static_cast<size_t>(r.violation->call)];
  EXPECT_EQ(c.kind, model::OpKind::Free);
  EXPECT_EQ(c.loc.line, 6);
}

TEST(SemanticsReport, EveryBadVerdictComesWithAScheduleAndBlockedCalls) {
  const std::string scenarios[] = {
      kRegCrossOrder,
      two_ranks("", "split A -> none; alloc wa; register A wa", "alloc wa; register A wa"),  // mismatch
      two_ranks("", "alloc wa; register A wa; all_reduce A wa; sync main",
                "alloc wa; register A wa; all_reduce A plain; sync main"),
      "ranks 1\nrank 0 { alloc x; free x; free x }",
  };
  for (const auto& text : scenarios) {
    CheckResult r = check_text(text);
    SCOPED_TRACE(text);
    EXPECT_NE(r.verdict, Verdict::Safe);
    EXPECT_NE(r.verdict, Verdict::Inconclusive);
    EXPECT_FALSE(r.schedule.empty());
    EXPECT_FALSE(r.blocked.empty());
  }
}

TEST(SemanticsReport, ShortestScheduleIsNoLongerThanDfs) {
  // Plenty of local steps before the hang, in an order DFS does not take shortest.
  const std::string text = two_ranks(
      "", "alloc a; alloc b; alloc c; alloc d; alloc wa; alloc wb; any_order { register A wa; register B wb }",
      "alloc a; alloc b; alloc c; alloc d; alloc wa; alloc wb; register A wa; register B wb");
  CheckResult dfs = check_text(text);
  SearchOptions bfs_options;
  bfs_options.shortest = true;
  CheckResult bfs = check_text(text, bfs_options);
  ASSERT_EQ(dfs.verdict, Verdict::Deadlock);
  ASSERT_EQ(bfs.verdict, Verdict::Deadlock);
  EXPECT_LE(bfs.schedule.size(), dfs.schedule.size());

  CheckResult dfs2 = check_text(kRegCrossOrder);
  CheckResult bfs2 = check_text(kRegCrossOrder, bfs_options);
  ASSERT_EQ(bfs2.verdict, Verdict::Deadlock);
  EXPECT_LE(bfs2.schedule.size(), dfs2.schedule.size());
}

TEST(SemanticsReport, StateLimitIsInconclusiveNeverSafe) {
  SearchOptions limited;
  limited.max_states = 3;
  const std::string safe = two_ranks("", "alloc wa; alloc wb; register A wa; register B wb",
                                     "alloc wa; alloc wb; register A wa; register B wb");
  ASSERT_EQ(verdict_of(safe), Verdict::Safe);
  CheckResult r = check_text(safe, limited);
  EXPECT_EQ(r.verdict, Verdict::Inconclusive);
  EXPECT_FALSE(r.limit.empty());
  // With the limit far above the state count, the verdict is the full search's.
  limited.max_states = 1'000'000;
  EXPECT_EQ(verdict_of(safe, limited), Verdict::Safe);
}

}  // namespace
}  // namespace collmc::testing
