// collmc shrink: the scenario printer's round trip, and shrinking real counterexamples (Megatron W = 16,
// the three-communicator ring, two-communicator cross orders) to scenarios that still fail the same way.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <set>

#include "collmc/gen/generators.h"
#include "collmc/model/print.h"
#include "collmc/shrink/shrink.h"
#include "random_scenario.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using model::OpKind;
using model::Verdict;

// The checker's verdict on `text`, parsed and resolved from scratch.
Verdict verdict_of_text(const std::string& text) {
  const model::World w = world_from(text);
  return checker::check(w, {}).verdict;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<std::string> bundled_scenarios() {
  std::vector<std::string> files;
  for (const std::string& dir :
       std::vector<std::string>{source_dir() + "/examples", source_dir() + "/tests/calibration", gpu_calibration_dir(),
                                mpi_calibration_dir()}) {
    if (!std::filesystem::is_directory(dir)) continue;
    for (const auto& e : std::filesystem::directory_iterator(dir))
      if (e.path().extension() == ".cmc") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

void expect_same_calls(const model::World& a, const model::World& b) {
  ASSERT_EQ(a.ranks, b.ranks);
  ASSERT_EQ(a.calls.size(), b.calls.size());
  for (size_t i = 0; i < a.calls.size(); ++i) {
    EXPECT_EQ(a.calls[i].rank, b.calls[i].rank) << i;
    EXPECT_EQ(a.calls[i].kind, b.calls[i].kind) << i;
    EXPECT_EQ(a.comm_name(a.calls[i].comm), b.comm_name(b.calls[i].comm)) << i;
    EXPECT_EQ(model::print_call(a, a.calls[i]), model::print_call(b, b.calls[i])) << i;
  }
}

TEST(ScenarioPrinter, EveryBundledScenarioRoundTrips) {
  const auto files = bundled_scenarios();
  ASSERT_GE(files.size(), 20u);
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const model::World w = model::load_world(f);
    const std::string printed = model::print_world(w);
    const model::World again = world_from(printed);
    expect_same_calls(w, again);
    EXPECT_EQ(model::print_world(again), printed);  // printing is a fixpoint
    EXPECT_EQ(checker::check(again, {}).verdict, checker::check(w, {}).verdict);
  }
}

TEST(ScenarioPrinter, EveryFormRoundTrips) {
  const std::string text = R"(ranks 2
name "every \"form\""
set stream_progress = serialized
set runtime_connect = off
comm A = [0, 1]
comm p = {[0], [1]} nonblocking
comm C = [0, 1] uninit
rank * {
  alloc buf 64KiB
  cuda_malloc scratch 1000
  split A -> C
  group {
    register A buf default
    all_reduce A buf -> scratch count=16 dtype=bf16 op=max on side
  }
  either { broadcast C buf root=1 } or { broadcast C buf root=1; barrier C }
  maybe { sync side }
  repeat 2 { register_local p scratch }
  when rank in [0] { send A 1 scratch count=4 }
  when rank in [1] { recv A 0 scratch count=4 }
  thread helper { reduce A buf root=0 }
  any_order { deregister A buf; { cuda_free scratch; free buf } }
  sync device
}
)";
  const model::World w = world_from(text);
  const std::string printed = model::print_world(w, "a header\nof two lines");
  EXPECT_EQ(printed.rfind("# a header\n# of two lines\nranks 2\n", 0), 0u) << printed;
  EXPECT_NE(printed.find("comm p = {[0], [1]} nonblocking"), std::string::npos) << printed;
  EXPECT_NE(printed.find("thread helper {"), std::string::npos) << printed;
  const model::World again = world_from(printed);
  expect_same_calls(w, again);
  EXPECT_EQ(again.name, w.name);
  EXPECT_EQ(again.knobs.stream_progress, model::StreamProgress::Serialized);
  EXPECT_FALSE(again.knobs.runtime_connect);
  EXPECT_EQ(model::print_world(again), model::print_world(w));
  EXPECT_EQ(checker::check(again, {}).verdict, checker::check(w, {}).verdict);
}

TEST(ScenarioPrinter, RandomScenariosRoundTrip) {
  std::mt19937 rng(8);
  RandomScenarioOptions o;
  o.max_ranks = 4;
  checker::SearchOptions limited;
  limited.max_states = 20000;
  for (int i = 0; i < 300; ++i) {
    const std::string text = random_scenario(rng, o);
    SCOPED_TRACE(text);
    const model::World w = world_from(text);
    const model::World again = world_from(model::print_world(w));
    expect_same_calls(w, again);
    EXPECT_EQ(checker::check(again, limited).verdict, checker::check(w, limited).verdict);
    if (::testing::Test::HasFailure()) return;
  }
}

// Shrinks, then asserts what every result must satisfy: it parses, checks to the input's verdict, says
// so in its `expect` line, and names where it came from.
shrink::ShrinkResult shrink_checked(const model::World& input, const shrink::ShrinkOptions& options = {}) {
  auto result = shrink::shrink(input, options);
  EXPECT_EQ(result.outcome, shrink::Outcome::Shrunk);
  EXPECT_EQ(result.verdict, checker::check(input, {}).verdict);
  EXPECT_EQ(verdict_of_text(result.text), result.verdict) << result.text;
  EXPECT_EQ(world_from(result.text).expect, result.verdict);
  EXPECT_NE(result.text.find("# Shrunk by `collmc shrink`"), std::string::npos);
  EXPECT_EQ(result.world->ranks, result.stats.after.ranks);
  EXPECT_EQ(static_cast<int>(result.original_rank.size()), result.world->ranks);
  return result;
}

int count_calls(const model::World& w, OpKind kind, int rank = -1) {
  int n = 0;
  for (const auto& c : w.calls) n += c.kind == kind && (rank < 0 || c.rank == rank);
  return n;
}

gen::MegatronConfig walkthrough_megatron() {
  gen::MegatronConfig c;
  c.world = 16;
  c.tp = 2;
  c.cp = 2;
  c.ep = 4;
  c.dist_opt_instances = 2;
  c.ubr_groups = {"dense", "expert", "outer"};
  c.order = gen::RegistrationOrder::PerRank;
  c.late_segments = gen::LateSegments::Some;
  return c;
}

TEST(Shrink, MegatronW16DeadlockShrinksToAtMostFourRanks) {
  const model::World input = world_from(gen::megatron_scenario(walkthrough_megatron()));
  ASSERT_EQ(input.ranks, 16);
  const auto r = shrink_checked(input);
  EXPECT_EQ(r.verdict, Verdict::Deadlock);
  EXPECT_LE(r.world->ranks, 4);
  EXPECT_EQ(r.stats.after.choices, 0);  // every any_order resolved to the order the counterexample took
  EXPECT_LT(r.stats.after.statements, r.stats.before.statements);
  // The ranks kept are ranks of the input, each once, and the result names them in its header.
  std::set<int> kept(r.original_rank.begin(), r.original_rank.end());
  EXPECT_EQ(kept.size(), r.original_rank.size());
  for (int o : kept) EXPECT_LT(o, 16);
  EXPECT_NE(r.text.find("0<-" + std::to_string(r.original_rank[0])), std::string::npos);
  // Still a registration deadlock: every rank registers on every comm it kept.
  EXPECT_GE(count_calls(*r.world, OpKind::Register), 2 * r.world->ranks);
}

TEST(Shrink, MegatronW16FitsOnTwoGpus) {
  shrink::ShrinkOptions options;
  options.max_ranks = 2;
  const auto r = shrink_checked(world_from(gen::megatron_scenario(walkthrough_megatron())), options);
  EXPECT_TRUE(r.reached_max_ranks);
  EXPECT_EQ(r.world->ranks, 2);
  // Two ranks that share two comms and register on them in opposite orders.
  EXPECT_EQ(r.world->comms.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) EXPECT_EQ(count_calls(*r.world, OpKind::Register, rank), 2);
}

TEST(Shrink, ThreeCommRingKeepsThreeRanks) {
  for (const std::string& text :
       {gen::ring_scenario(3, false, false), read_text(source_dir() + "/examples/nccl_three_comm_ring.cmc")}) {
    const auto r = shrink_checked(world_from(text));
    EXPECT_EQ(r.world->ranks, 3) << r.text;
    EXPECT_EQ(r.world->comms.size(), 3u) << r.text;
    EXPECT_EQ(count_calls(*r.world, OpKind::Register), 6) << r.text;
    EXPECT_EQ(r.stats.after.statements, 9) << r.text;  // the pools and their registrations; the collectives go
  }
}

TEST(Shrink, MaxRanksBelowTheSmallestIsReported) {
  shrink::ShrinkOptions options;
  options.max_ranks = 2;
  const auto r = shrink_checked(world_from(gen::ring_scenario(3, false, false)), options);
  EXPECT_FALSE(r.reached_max_ranks);
  EXPECT_EQ(r.world->ranks, 3);
  EXPECT_GT(r.stats.subset_candidates, 0u);  // every connected pair was tried
}

TEST(Shrink, CrossOrderShrinksToTwoRanks) {
  const auto small = shrink_checked(model::load_world(source_dir() + "/examples/reg_cross_order.cmc"));
  EXPECT_EQ(small.world->ranks, 2);
  EXPECT_EQ(count_calls(*small.world, OpKind::Register), 4);   // both orders survive, not a missing call
  EXPECT_EQ(count_calls(*small.world, OpKind::AllReduce), 0);  // never reached: removed

  const std::string eight = R"(ranks 8
name "two comms over eight ranks, the halves in opposite orders"
comm A = all
comm B = all
comm pairs = {[0, 1], [2, 3], [4, 5], [6, 7]}
rank 0..3 {
  alloc w
  register A w
  register B w
  all_reduce pairs w
  all_reduce A w
  sync main
}
rank 4..7 {
  alloc w
  register B w
  register A w
  all_reduce pairs w
  all_reduce B w
  sync main
}
)";
  const auto r = shrink_checked(world_from(eight));
  ASSERT_EQ(r.world->ranks, 2) << r.text;
  EXPECT_LT(r.original_rank[0], 4);  // one rank of each half
  EXPECT_GE(r.original_rank[1], 4);
  EXPECT_EQ(r.world->comms.size(), 2u) << r.text;  // `pairs` does not matter
  EXPECT_EQ(count_calls(*r.world, OpKind::Register), 4) << r.text;
}

TEST(Shrink, ResultIsOneMinimal) {
  // Shrinking the result again removes nothing: no single rank, comm or statement unit can go.
  const auto first = shrink_checked(world_from(gen::megatron_scenario(walkthrough_megatron())));
  const auto second = shrink_checked(*first.world);
  EXPECT_EQ(second.stats.after.ranks, first.stats.after.ranks);
  EXPECT_EQ(second.stats.after.comms, first.stats.after.comms);
  EXPECT_EQ(second.stats.after.statements, first.stats.after.statements);
  EXPECT_EQ(second.stats.accepted, 0u);
}

TEST(Shrink, OtherViolationsKeepTheirKind) {
  for (const std::string& name :
       std::vector<std::string>{"split_cross_order", "symmetric_divergent_buffer", "warm_deregister_pending_coll"}) {
    const std::string path = gpu_calibration_dir() + "/" + name + ".cmc";
    if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not here";
    const model::World input = model::load_world(path);
    const auto r = shrink_checked(input);
    EXPECT_NE(r.verdict, Verdict::Deadlock) << name;
    EXPECT_LE(r.stats.after.statements, r.stats.before.statements) << name;
  }
}

TEST(Shrink, RandomViolationsShrinkToTheSameVerdict) {
  std::mt19937 rng(9);
  RandomScenarioOptions o;
  o.max_ranks = 4;
  o.max_statements = 5;
  shrink::ShrinkOptions options;
  options.search.max_states = 20000;
  int shrunk = 0, smaller = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string text = random_scenario(rng, o);
    SCOPED_TRACE(text);
    const model::World input = world_from(text);
    const Verdict v = checker::check(input, options.search).verdict;
    if (v == Verdict::Safe || v == Verdict::Inconclusive) continue;
    const auto r = shrink::shrink(input, options);
    ASSERT_EQ(r.outcome, shrink::Outcome::Shrunk);
    const model::World again = world_from(r.text);
    EXPECT_EQ(checker::check(again, options.search).verdict, v) << r.text;
    EXPECT_LE(r.stats.after.ranks, r.stats.before.ranks);
    EXPECT_LE(r.stats.after.statements, r.stats.before.statements);
    ++shrunk;
    smaller += r.stats.after.statements < r.stats.before.statements;
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_GE(shrunk, 30);  // the generator gives enough violations to mean something
  EXPECT_GT(smaller, shrunk / 2);
  std::printf("[shrink] %d random violations shrunk, %d to fewer statements\n", shrunk, smaller);
}

TEST(Shrink, SafeScenarioIsRefused) {
  const auto r = shrink::shrink(model::load_world(source_dir() + "/examples/nccl_three_comm_ring_agreed.cmc"), {});
  EXPECT_EQ(r.outcome, shrink::Outcome::Safe);
  EXPECT_TRUE(r.text.empty());
  EXPECT_EQ(r.world, nullptr);
}

TEST(Shrink, InconclusiveInputIsRefused) {
  shrink::ShrinkOptions options;
  options.search.max_states = 3;
  const auto r = shrink::shrink(world_from(gen::megatron_scenario(walkthrough_megatron())), options);
  EXPECT_EQ(r.outcome, shrink::Outcome::Inconclusive);
}

std::string temp_path(const std::string& suffix) {
  return "/tmp/collmc-shrink-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
         ::testing::UnitTest::GetInstance()->current_test_info()->name() + suffix;
}

int collmc(const std::string& args, std::string* out) { return run_command(collmc_binary() + " " + args, out); }

TEST(ShrinkCli, WritesACheckedScenarioAndStatistics) {
  const std::string big = temp_path("-big.cmc"), small = temp_path("-small.cmc");
  std::string out;
  ASSERT_EQ(collmc("gen megatron --world 16 --tp 2 --cp 2 --ep 4 --dist-opt-instances 2 --order per-rank "
                   "--late-segments some -o " +
                       big,
                   &out),
            0)
      << out;
  ASSERT_EQ(collmc("shrink " + big + " -o " + small + " --max-ranks 2", &out), 0) << out;
  EXPECT_NE(out.find("before: 16 ranks"), std::string::npos) << out;
  EXPECT_NE(out.find("after:  2 ranks"), std::string::npos) << out;
  EXPECT_NE(out.find("candidates tried"), std::string::npos) << out;
  EXPECT_EQ(collmc("check --expect --quiet " + small, &out), 0) << out;  // `expect deadlock`, and it is
  std::ifstream in(small);
  std::string first_line;
  std::getline(in, first_line);
  EXPECT_EQ(first_line, "# Shrunk by `collmc shrink` from " + big + ":");
  std::remove(big.c_str());
  std::remove(small.c_str());
}

TEST(ShrinkCli, RefusalsAndUnreachedTargetsExitNonZero) {
  const std::string out_path = temp_path(".cmc");
  std::string out;
  EXPECT_EQ(collmc("shrink " + source_dir() + "/examples/nccl_three_comm_ring_agreed.cmc -o " + out_path, &out), 2);
  EXPECT_NE(out.find("is safe: there is no violation to shrink"), std::string::npos) << out;
  EXPECT_FALSE(std::filesystem::exists(out_path));
  EXPECT_EQ(
      collmc("shrink " + source_dir() + "/examples/nccl_three_comm_ring.cmc -o " + out_path + " --max-ranks 2", &out),
      1);
  EXPECT_NE(out.find("could not reach 2 ranks: the smallest failing scenario found has 3"), std::string::npos) << out;
  EXPECT_EQ(collmc("shrink " + source_dir() + "/examples/reg_cross_order.cmc", &out), 2);  // no -o
  EXPECT_NE(out.find("-o OUT"), std::string::npos) << out;
  EXPECT_EQ(collmc("shrink /nonexistent.cmc -o " + out_path, &out), 2);
  EXPECT_EQ(collmc("replay --shrink /nonexistent.json", &out), 2);  // a result cannot be shrunk
  EXPECT_NE(out.find("--shrink takes a scenario (.cmc), not a result"), std::string::npos) << out;
  std::remove(out_path.c_str());
}

}  // namespace
}  // namespace collmc::testing
