// What the NCCL backend decides before any rank starts, on machines with or without a GPU: where ranks
// go (one GPU each; ranks sharing no comm together; from NCCL 2.30 ranks of one comm together), which
// NCCL was loaded, and the refusals when the library or the GPUs cannot run a scenario.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>

#include "collmc/replay/nccl_support.h"
#include "collmc/replay/replay.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using replay::GpuPlacement;
using replay::place_ranks;

constexpr int kNccl2283 = 22803;
constexpr int kNccl2307 = 23007;

const char* const kPair = "ranks 2\ncomm A = [0, 1]\nrank * {\n  all_reduce A plain\n}\n";
const char* const kHook4 =
    "ranks 4\ncomm dp = {[0, 1], [2, 3]}\ncomm ep = {[0, 2], [1, 3]}\n"
    "rank * {\n  alloc pool\n  register dp pool\n  register ep pool\n}\n";
const char* const kWorld4 = "ranks 4\ncomm W = [0, 1, 2, 3]\nrank * {\n  all_reduce W plain\n}\n";

TEST(GpuPlacement, EnoughGpusIsRankOnItsOwnGpu) {
  auto w = world_from(kPair);
  for (int gpus : {2, 8}) {
    GpuPlacement p = place_ranks(w, gpus, kNccl2283);
    EXPECT_TRUE(p.refusal.empty()) << p.refusal;
    EXPECT_EQ(p.gpu_of_rank, (std::vector<int>{0, 1}));
    EXPECT_FALSE(p.comm_shares_gpu);
    EXPECT_EQ(p.sharing(), "");
  }
}

TEST(GpuPlacement, RanksSharingNoCommShareAGpuOnAnyNccl) {
  auto w = world_from(kHook4);
  GpuPlacement p = place_ranks(w, 2, kNccl2283);
  EXPECT_EQ(p.gpu_of_rank, (std::vector<int>{0, 1, 1, 0}));
  EXPECT_FALSE(p.comm_shares_gpu) << "no comm has two ranks on one GPU";
  EXPECT_EQ(p.describe(), "GPU 0: ranks 0, 3; GPU 1: ranks 1, 2");
  // NCCL 2.30 changes nothing when the ranks of each comm can stay apart: separate GPUs come first.
  EXPECT_EQ(place_ranks(w, 2, kNccl2307).gpu_of_rank, p.gpu_of_rank);
  EXPECT_FALSE(place_ranks(w, 2, kNccl2307).comm_shares_gpu);
}

TEST(GpuPlacement, OneCommOnOneGpuIsRefusedBeforeNccl230) {
  GpuPlacement p = place_ranks(world_from(kPair), 1, kNccl2283);
  EXPECT_TRUE(p.gpu_of_rank.empty());
  for (const char* word : {"NCCL 2.28.3", "Duplicate GPU", "2.30", "--nccl LIB", "--shrink"})
    EXPECT_NE(p.refusal.find(word), std::string::npos) << word << " in: " << p.refusal;
}

TEST(GpuPlacement, OneCommOnOneGpuFromNccl230SaysWhoShares) {
  GpuPlacement p = place_ranks(world_from(kPair), 1, kNccl2307);
  EXPECT_TRUE(p.refusal.empty()) << p.refusal;
  EXPECT_EQ(p.gpu_of_rank, (std::vector<int>{0, 0}));
  EXPECT_TRUE(p.comm_shares_gpu);
  EXPECT_EQ(p.sharing(), "ranks 0 and 1 share GPU 0");
  // 2.30.0 exactly is the first release that allows it.
  EXPECT_TRUE(place_ranks(world_from(kPair), 1, replay::kNcclMultiRankGpuSince).refusal.empty());
  EXPECT_FALSE(place_ranks(world_from(kPair), 1, replay::kNcclMultiRankGpuSince - 1).refusal.empty());
}

TEST(GpuPlacement, ThreeRankRingSharesAsLittleAsTheGpusAllow) {
  auto w = model::load_world(source_dir() + "/examples/nccl_three_comm_ring.cmc");
  EXPECT_FALSE(place_ranks(w, 2, kNccl2283).refusal.empty()) << "every pair of the ring shares a comm";
  EXPECT_FALSE(place_ranks(w, 3, kNccl2283).comm_shares_gpu);
  GpuPlacement two = place_ranks(w, 2, kNccl2307);
  ASSERT_TRUE(two.refusal.empty()) << two.refusal;
  EXPECT_TRUE(two.comm_shares_gpu);
  EXPECT_EQ(two.gpu_of_rank, (std::vector<int>{0, 1, 0})) << "two GPUs used, one pair shares";
  EXPECT_EQ(two.sharing(), "ranks 0 and 2 share GPU 0");
  GpuPlacement one = place_ranks(w, 1, kNccl2307);
  ASSERT_TRUE(one.refusal.empty()) << "each comm of the ring has two ranks: within the default bound";
  EXPECT_EQ(one.sharing(), "ranks 0, 1 and 2 share GPU 0");
}

TEST(GpuPlacement, MoreRanksOfOneCommThanTheBoundAreRefusedWithTheFix) {
  auto w = world_from(kWorld4);
  GpuPlacement p = place_ranks(w, 1, kNccl2307);
  EXPECT_TRUE(p.gpu_of_rank.empty());
  for (const char* word : {"communicator W has 4 ranks", "at most 2", "--ranks-per-gpu"})
    EXPECT_NE(p.refusal.find(word), std::string::npos) << word << " in: " << p.refusal;
  GpuPlacement two = place_ranks(w, 2, kNccl2307);
  EXPECT_EQ(two.gpu_of_rank, (std::vector<int>{0, 1, 0, 1})) << "two per GPU fits on two GPUs";
  GpuPlacement raised = place_ranks(w, 1, kNccl2307, 4);
  EXPECT_EQ(raised.gpu_of_rank, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_NE(place_ranks(w, 1, kNccl2307, 1).refusal.find("--ranks-per-gpu 1"), std::string::npos);
}

TEST(NcclSupport, VersionText) {
  EXPECT_EQ(replay::nccl_version_text(kNccl2307), "2.30.7");
  EXPECT_EQ(replay::nccl_version_text(kNccl2283), "2.28.3");
  EXPECT_EQ(replay::nccl_version_text(0), "unknown");
}

TEST(NcclSupport, TheModelSpeaksOfTheReleaseTheReplayLoads) {
  auto unpinned = world_from(kPair);
  replay::model_loaded_nccl(unpinned, kNccl2307);
  EXPECT_EQ(unpinned.knobs.nccl_version, static_cast<uint32_t>(kNccl2307));
  ASSERT_EQ(unpinned.notes.size(), 1u);
  EXPECT_NE(unpinned.notes[0].find("checked at NCCL 2.30.7"), std::string::npos) << unpinned.notes[0];
  auto pinned = world_from(std::string("set nccl_version = 2.29\n") + kPair);
  replay::model_loaded_nccl(pinned, kNccl2307);
  EXPECT_EQ(pinned.knobs.nccl_version, 22900u) << "a version the scenario sets stays";
  ASSERT_EQ(pinned.notes.size(), 1u);
  EXPECT_NE(pinned.notes[0].find("a difference may be the releases'"), std::string::npos);
  auto same = world_from(kPair);
  replay::model_loaded_nccl(same, static_cast<int>(model::kCalibratedNcclVersion));
  EXPECT_TRUE(same.notes.empty());
  auto unknown = world_from(kPair);
  replay::model_loaded_nccl(unknown, 0);
  EXPECT_EQ(unknown.knobs.nccl_version, model::kCalibratedNcclVersion) << "no library loaded: nothing changes";
}

TEST(NcclSupport, ProbeTextRoundTrips) {
  replay::NcclProbe p;
  p.gpus = 1;
  p.version = kNccl2307;
  p.library = "/opt/nccl/lib/libnccl.so.2.30.7";
  p.missing = {"ncclCommGrow"};
  p.error = "no GPU found (cudaErrorNoDevice)";
  replay::NcclProbe q = replay::NcclProbe::from_text(p.to_text());
  EXPECT_EQ(q.gpus, 1);
  EXPECT_EQ(q.version, kNccl2307);
  EXPECT_EQ(q.library, p.library);
  EXPECT_EQ(q.missing, p.missing);
  EXPECT_EQ(q.error, p.error);
  EXPECT_FALSE(q.has("ncclCommGrow"));
  EXPECT_TRUE(q.has("ncclAllReduce"));
  EXPECT_EQ(q.describe(), "NCCL 2.30.7 (/opt/nccl/lib/libnccl.so.2.30.7), 1 GPU");
  EXPECT_THROW(replay::NcclProbe::from_text("bogus line\n"), std::runtime_error);
  EXPECT_THROW(replay::NcclProbe::from_text(""), std::runtime_error);
}

TEST(NcclSupport, EveryFunctionTheReplayCallsIsLookedUp) {
  // Each operation's functions are in the list the loader resolves (else a missing one would go
  // unnoticed until a rank called a null pointer).
  std::set<std::string_view> listed;
  for (const auto& f : replay::nccl_functions()) listed.insert(f.name);
  for (size_t k = 0; k < model::kOperationCount; ++k)
    for (std::string_view f : replay::nccl_functions_for(static_cast<model::OpKind>(k)))
      EXPECT_TRUE(listed.count(f)) << f;
}

TEST(NcclSupport, AGrownCommIsReplayedOnlyWhenItsRanksAreNumberedAsNcclNumbersThem) {
  // ncclCommGrow keeps the parent's ranks and numbers the new ones after them.
  const std::string grow_with_id = source_dir() + "/tests/calibration-probes/grow_with_id.cmc";
  EXPECT_EQ(replay::grow_numbering_refusal(model::load_world(grow_with_id)), "");
  auto reordered = world_from(
      "ranks 3\nset nccl_version = 2.30.7\ncomm A = [0, 2]\ncomm G = [0, 1, 2] uninit\n"
      "rank 0 {\n  grow_id A\n  grow A -> G\n}\nrank 2 {\n  grow A -> G\n}\nrank 1 {\n  grow none -> G\n}\n");
  const std::string refusal = replay::grow_numbering_refusal(reordered);
  for (const char* word : {"`grow A -> G`", ":7:3)", "list A's members first in G"})
    EXPECT_NE(refusal.find(word), std::string::npos) << word << " in: " << refusal;
}

TEST(NcclSupport, ACallTheLibraryLacksIsRefusedNamingCallLineAndRelease) {
  auto w = world_from(
      "ranks 2\nset nccl_version = 2.29\ncomm A = [0, 1]\n"
      "rank 0 {\n  alloc w\n  alloc x\n  register A w\n  register A x\n  put_signal A 1 x -> w\n}\n"
      "rank 1 {\n  alloc w\n  alloc x\n  register A w\n  register A x\n  wait_signal A 0\n}\n");
  replay::NcclProbe old;
  old.gpus = 2;
  old.version = kNccl2283;
  old.library = "/usr/lib/x86_64-linux-gnu/libnccl.so.2.28.3";
  old.missing = {"ncclPutSignal", "ncclSignal", "ncclWaitSignal", "ncclCommGetUniqueId", "ncclCommGrow"};
  const std::string refusal = replay::missing_function_refusal(w, old);
  for (const char* word :
       {"`put_signal A 1 x -> w`", ":9:3)", "ncclPutSignal", "NCCL 2.28.3", "in NCCL 2.29 and later", "--nccl LIB"})
    EXPECT_NE(refusal.find(word), std::string::npos) << word << " in: " << refusal;
  replay::NcclProbe recent = old;
  recent.version = kNccl2307;
  recent.missing.clear();
  EXPECT_EQ(replay::missing_function_refusal(w, recent), "");
  // A scenario without one-sided calls runs on the old library.
  EXPECT_EQ(replay::missing_function_refusal(world_from(kPair), old), "");
  // A library without what every replay needs is refused whatever the scenario.
  replay::NcclProbe broken = recent;
  broken.missing = {"ncclCommInitRankConfig"};
  EXPECT_NE(replay::missing_function_refusal(world_from(kPair), broken).find("which every replay calls"),
            std::string::npos);
}

// Sets an environment variable for one test and restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(NcclLoader, LoadsExactlyTheLibraryNamedAndReadsItsVersionAndFunctions) {
  if (!replay::nccl_backend_built()) GTEST_SKIP() << "built without CUDA and NCCL headers";
  ScopedEnv lib(replay::kNcclLibraryVariable, COLLMC_FAKE_LIBNCCL);
  replay::NcclProbe probe;
  const std::string why = replay::probe_machine(probe);
  EXPECT_EQ(probe.version, kNccl2307) << why;
  EXPECT_EQ(probe.library, std::filesystem::canonical(COLLMC_FAKE_LIBNCCL).string());
  EXPECT_FALSE(probe.has("ncclCommWindowRegister")) << "the stand-in does not export it";
  EXPECT_TRUE(probe.has("ncclPutSignal")) << "newer than the headers, found by name";
  EXPECT_TRUE(probe.has("ncclGroupStart"));
  {
    ScopedEnv version("FAKE_NCCL_VERSION", "22903");
    replay::NcclProbe again;
    replay::probe_machine(again);
    EXPECT_EQ(again.version, 22903) << "every probe loads the library afresh (a forked child)";
  }
}

TEST(NcclLoader, ALibraryThatDoesNotLoadIsAClearErrorAndNoFallback) {
  if (!replay::nccl_backend_built()) GTEST_SKIP() << "built without CUDA and NCCL headers";
  ScopedEnv lib(replay::kNcclLibraryVariable, "/nonexistent/libnccl.so.2");
  replay::NcclProbe probe;
  const std::string why = replay::probe_machine(probe);
  EXPECT_NE(why.find("cannot load /nonexistent/libnccl.so.2"), std::string::npos) << why;
  EXPECT_EQ(probe.version, 0) << "the system's NCCL must not stand in for the one asked for";
}

TEST(NcclLoader, TheReplayReportNamesTheNcclLoadedEvenWhenItRefuses) {
  if (!replay::nccl_backend_built()) GTEST_SKIP() << "built without CUDA and NCCL headers";
  model::World w = model::load_world(source_dir() + "/examples/reg_cross_order.cmc");
  replay::ReplayOptions options;
  options.nccl_library = COLLMC_FAKE_LIBNCCL;
  replay::ReplayReport report = replay::replay_nccl(replay::plan_for_scenario(w, {}), options);
  unsetenv(replay::kNcclLibraryVariable);  // the backend exported it for its children
  // No GPU (CI): refused for that; a GPU machine: refused for the stand-in's missing functions.
  EXPECT_EQ(report.outcome, replay::Outcome::Refused) << replay::text_report(report);
  EXPECT_EQ(report.nccl_version, "2.30.7");
  const auto j = nlohmann::json::parse(replay::json_report(report));
  EXPECT_EQ(j["nccl"]["version"], "2.30.7");
  EXPECT_EQ(j["nccl"]["library"], std::filesystem::canonical(COLLMC_FAKE_LIBNCCL).string());
  EXPECT_TRUE(j["placement"].is_null()) << "nothing was placed";
}

TEST(ReplayReportText, ASharedGpuResultSaysSoInItsOutcomeLineAndJson) {
  replay::ReplayReport r;
  r.scenario = "x.cmc";
  r.predicted = model::Verdict::Deadlock;
  r.outcome = replay::Outcome::Confirmed;
  r.agrees = true;
  r.nccl_version = "2.30.7";
  r.nccl_library = "/opt/nccl/libnccl.so.2";
  r.gpu_of_rank = {0, 0};
  r.placement = "GPU 0: ranks 0, 1";
  r.shared_gpu = "ranks 0 and 1 share GPU 0";
  const std::string text = replay::text_report(r);
  const std::string first = text.substr(0, text.find('\n'));
  EXPECT_NE(first.find("on a shared GPU: ranks 0 and 1 share GPU 0"), std::string::npos) << first;
  const auto j = nlohmann::json::parse(replay::json_report(r));
  EXPECT_EQ(j["placement"]["shared_gpu"], true);
  EXPECT_EQ(j["placement"]["gpu_of_rank"], (std::vector<int>{0, 0}));
  replay::CalibrationRow row;
  row.scenario = "x";
  row.outcome = "CONFIRMED";
  row.agrees = true;
  row.shared_gpu = r.shared_gpu;
  EXPECT_NE(replay::calibration_table({row}).find("CONFIRMED (shared GPU: ranks 0 and 1 share GPU 0)"),
            std::string::npos);
  r.shared_gpu.clear();
  EXPECT_EQ(replay::text_report(r).find("shared GPU"), std::string::npos) << "separate GPUs say nothing of sharing";
}

}  // namespace
}  // namespace collmc::testing
