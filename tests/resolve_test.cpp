// Resolution of a parsed scenario into the World IR: families per rank, `when`, `repeat`, `rank *`,
// threads, comm modes, open-order nodes, static usage problems and notes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using model::Call;
using model::CommMode;
using model::OpKind;
using model::ProgramNode;
using model::World;
using Kind = ProgramNode::Kind;

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

// The calls of a subtree in program order (every alternative of an Either, every child of AnyOrder).
void collect(const ProgramNode& n, std::vector<int>& out) {
  if (n.kind == Kind::Call) out.push_back(n.call);
  for (const auto& c : n.children) collect(c, out);
}

std::vector<const Call*> calls_of(const World& w, int rank, int thread = 0) {
  std::vector<int> ids;
  const auto& prog = w.programs.at(static_cast<size_t>(rank));
  collect(prog.threads.at(static_cast<size_t>(thread)).body, ids);
  std::vector<const Call*> out;
  for (int id : ids) out.push_back(&w.calls.at(static_cast<size_t>(id)));
  return out;
}

std::vector<OpKind> kinds_of(const World& w, int rank, int thread = 0) {
  std::vector<OpKind> out;
  for (const Call* c : calls_of(w, rank, thread)) out.push_back(c->kind);
  return out;
}

const ProgramNode& main_body(const World& w, int rank) {
  return w.programs.at(static_cast<size_t>(rank)).threads.at(0).body;
}

int comm_id(const World& w, const std::string& name) {
  for (const auto& c : w.comms)
    if (c.name == name) return c.id;
  ADD_FAILURE() << "no comm " << name;
  return -1;
}

// ------------------------------------------------------------------------------------------------

TEST(ResolveWorld, Metadata) {
  World w = world_from(
      "ranks 3\nname \"meta\"\nexpect mismatch\nset profile = mpi\nset runtime_connect = off\n"
      "set stream_progress = serialized\n");
  EXPECT_EQ(w.ranks, 3);
  EXPECT_EQ(w.name, "meta");
  EXPECT_EQ(w.expect, model::Verdict::Mismatch);
  EXPECT_EQ(w.knobs.profile, model::Profile::Mpi);
  EXPECT_FALSE(w.knobs.runtime_connect);
  EXPECT_EQ(w.knobs.stream_progress, model::StreamProgress::Serialized);
  ASSERT_NE(w.source, nullptr);
  EXPECT_EQ(w.source->path, "test.cmc");
  EXPECT_EQ(w.streams, std::vector<std::string>{"main"});
  EXPECT_EQ(w.dtypes, std::vector<std::string>{"float32"});
  EXPECT_EQ(w.redops, std::vector<std::string>{"sum"});
  EXPECT_TRUE(w.calls.empty());
  EXPECT_TRUE(w.usage_problems.empty());
  EXPECT_TRUE(w.notes.empty());
}

TEST(ResolveFamilies, InstancePerRank) {
  World w = world_from("ranks 4\ncomm dp = {[0, 1], [2, 3]}\nrank * {\n  register dp x\n}\n");
  ASSERT_EQ(w.comms.size(), 2u);
  EXPECT_EQ(w.comms[0].name, "dp{0,1}");
  EXPECT_EQ(w.comms[0].decl_name, "dp");
  EXPECT_EQ(w.comms[0].instance, 0);
  EXPECT_EQ(w.comms[0].members, (std::vector<int>{0, 1}));
  EXPECT_EQ(w.comms[1].name, "dp{2,3}");
  EXPECT_EQ(w.comms[1].decl_name, "dp");
  EXPECT_EQ(w.comms[1].instance, 1);
  EXPECT_EQ(w.comms[1].members, (std::vector<int>{2, 3}));
  for (int r = 0; r < 4; ++r) {
    auto calls = calls_of(w, r);
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_EQ(calls[0]->kind, OpKind::Register);
    EXPECT_EQ(calls[0]->rank, r);
    EXPECT_EQ(calls[0]->comm, r < 2 ? 0 : 1) << "rank " << r;
    EXPECT_TRUE(calls[0]->usage_error.empty());
  }
  // Rank 2's `register dp x` is the instance with members [2, 3].
  const Call& c2 = *calls_of(w, 2)[0];
  EXPECT_EQ(w.comm_name(c2.comm), "dp{2,3}");
  EXPECT_EQ(w.comms[static_cast<size_t>(c2.comm)].members, (std::vector<int>{2, 3}));
  EXPECT_TRUE(w.usage_problems.empty());
}

TEST(ResolveFamilies, InterleavedInstancesAndPlainComms) {
  World w = world_from(
      "ranks 4\ncomm A = [0, 1, 2, 3]\ncomm ep = {[0, 2], [1, 3]}\ncomm B = [3, 1]\n"
      "rank * {\n  all_reduce ep x\n  all_reduce A x\n}\nrank 1, 3 {\n  barrier B\n  all_reduce ep x\n}\n");
  ASSERT_EQ(w.comms.size(), 4u);
  for (size_t i = 0; i < w.comms.size(); ++i) EXPECT_EQ(w.comms[i].id, static_cast<int>(i));
  EXPECT_EQ(w.comms[0].name, "A");
  EXPECT_EQ(w.comms[1].name, "ep{0,2}");
  EXPECT_EQ(w.comms[2].name, "ep{1,3}");
  EXPECT_EQ(w.comms[3].name, "B");
  EXPECT_EQ(w.comms[3].members, (std::vector<int>{1, 3}));
  EXPECT_EQ(w.comms[3].member_index(3), 1);
  EXPECT_EQ(w.comms[3].member_index(0), -1);
  EXPECT_TRUE(w.comms[2].has_member(1));
  EXPECT_FALSE(w.comms[2].has_member(2));
  EXPECT_EQ(w.comm_name(calls_of(w, 0)[0]->comm), "ep{0,2}");
  EXPECT_EQ(w.comm_name(calls_of(w, 2)[0]->comm), "ep{0,2}");
  EXPECT_EQ(w.comm_name(calls_of(w, 3)[1]->comm), "ep{1,3}");
  EXPECT_EQ(w.comm_name(calls_of(w, 3)[0]->comm), "B");
  EXPECT_EQ(w.comm_name(calls_of(w, 0)[1]->comm), "A");
  EXPECT_EQ(w.comm_name(-1), "-");
  EXPECT_TRUE(w.usage_problems.empty());
}

TEST(ResolveFamilies, RankInNoInstanceIsAUsageProblem) {
  World w = world_from("ranks 3\ncomm dp = {[0], [1]}\nrank 2 {\n  register dp x\n}\n");
  auto calls = calls_of(w, 2);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->usage_error, "rank 2 is not a member of any instance of family 'dp'");
  ASSERT_EQ(w.usage_problems.size(), 1u);
  EXPECT_EQ(w.usage_problems[0].loc.line, 4);
  EXPECT_EQ(w.usage_problems[0].loc.column, 12);
}

TEST(ResolveFamilies, SplitJoinsTheChildInstanceOfTheRank) {
  World w = world_from(
      "ranks 4\ncomm P = all\ncomm C = {[0, 1], [2, 3]} uninit\nrank 3 {\n  split P -> none\n}\n"
      "rank * {\n  split P -> C\n}\n");
  ASSERT_EQ(w.comms.size(), 3u);
  EXPECT_TRUE(w.comms[1].uninit);
  EXPECT_TRUE(w.comms[2].uninit);
  EXPECT_FALSE(w.comms[0].uninit);
  for (int r = 0; r < 3; ++r) {
    const Call& c = *calls_of(w, r)[0];
    EXPECT_EQ(c.kind, OpKind::Split);
    EXPECT_EQ(c.comm, comm_id(w, "P"));
    EXPECT_EQ(w.comm_name(c.child), r < 2 ? "C{0,1}" : "C{2,3}");
  }
  EXPECT_EQ(calls_of(w, 3)[0]->child, -1);
  EXPECT_TRUE(w.usage_problems.empty());
}

TEST(ResolveWhen, SelectsStatementsPerRank) {
  World w = world_from(
      "ranks 4\nrank * {\n  alloc a\n  when rank in [1, 3] {\n    alloc b\n    when rank in [3] { alloc c }\n  }\n"
      "  when rank in all { free a }\n}\n");
  EXPECT_EQ(kinds_of(w, 0), (std::vector<OpKind>{OpKind::Alloc, OpKind::Free}));
  EXPECT_EQ(kinds_of(w, 2), (std::vector<OpKind>{OpKind::Alloc, OpKind::Free}));
  EXPECT_EQ(kinds_of(w, 1), (std::vector<OpKind>{OpKind::Alloc, OpKind::Alloc, OpKind::Free}));
  EXPECT_EQ(kinds_of(w, 3), (std::vector<OpKind>{OpKind::Alloc, OpKind::Alloc, OpKind::Alloc, OpKind::Free}));
  EXPECT_EQ(w.buffers[static_cast<size_t>(calls_of(w, 3)[2]->buffer)], "c");
  // `when` adds no node of its own: rank 1's body is a flat sequence of calls.
  const ProgramNode& body = main_body(w, 1);
  EXPECT_EQ(body.kind, Kind::Seq);
  ASSERT_EQ(body.children.size(), 3u);
  for (const auto& c : body.children) EXPECT_EQ(c.kind, Kind::Call);
}

TEST(ResolveWhen, InsideOpenOrderForms) {
  World w = world_from(
      "ranks 2\nrank * {\n  any_order {\n    when rank in [0] { alloc a }\n    alloc b\n  }\n"
      "  group { when rank in [1] { alloc c } }\n}\n");
  const ProgramNode& b0 = main_body(w, 0);
  ASSERT_EQ(b0.children.size(), 2u);
  ASSERT_EQ(b0.children[0].kind, Kind::AnyOrder);
  ASSERT_EQ(b0.children[0].children.size(), 2u);
  EXPECT_EQ(b0.children[0].children[0].children.size(), 1u);
  EXPECT_EQ(b0.children[1].kind, Kind::Group);
  EXPECT_TRUE(b0.children[1].children.empty());
  const ProgramNode& b1 = main_body(w, 1);
  ASSERT_EQ(b1.children[0].children.size(), 2u);
  EXPECT_TRUE(b1.children[0].children[0].children.empty());  // rank 1 skips the `when`: an empty child
  EXPECT_EQ(b1.children[1].children.size(), 1u);
}

TEST(ResolveRepeat, UnrollsIntoCalls) {
  World w = world_from("ranks 2\ncomm A = [0, 1]\nrank * {\n  repeat 3 {\n    all_reduce A x\n  }\n}\n");
  const ProgramNode& body = main_body(w, 0);
  ASSERT_EQ(body.children.size(), 3u);
  std::vector<int> ids;
  for (const auto& c : body.children) {
    EXPECT_EQ(c.kind, Kind::Call);
    ids.push_back(c.call);
  }
  EXPECT_NE(ids[0], ids[1]);
  EXPECT_NE(ids[1], ids[2]);
  for (int id : ids) {
    const Call& c = w.calls[static_cast<size_t>(id)];
    EXPECT_EQ(c.kind, OpKind::AllReduce);
    EXPECT_EQ(c.text, "all_reduce A x");
    EXPECT_EQ(c.loc.line, 5);
    EXPECT_EQ(c.loc.column, 5);
    EXPECT_EQ(c.rank, 0);
  }
  EXPECT_EQ(w.calls.size(), 6u);
}

TEST(ResolveRepeat, ZeroNestedAndMixed) {
  World w = world_from(
      "ranks 1\ncomm A = [0]\nrank 0 {\n  repeat 0 { alloc never }\n  repeat 2 { alloc a; repeat 3 { all_reduce A a } "
      "}\n"
      "  repeat 2 { maybe { free a } }\n}\n");
  std::vector<OpKind> expect;
  for (int i = 0; i < 2; ++i) {
    expect.push_back(OpKind::Alloc);
    for (int k = 0; k < 3; ++k) expect.push_back(OpKind::AllReduce);
  }
  expect.push_back(OpKind::Free);
  expect.push_back(OpKind::Free);
  EXPECT_EQ(kinds_of(w, 0), expect);
  const ProgramNode& body = main_body(w, 0);
  ASSERT_EQ(body.children.size(), 10u);
  EXPECT_EQ(body.children[8].kind, Kind::Either);
  EXPECT_EQ(body.children[9].kind, Kind::Either);
  for (const auto& b : w.buffers) EXPECT_NE(b, "never");
}

TEST(ResolveBodies, RankStarAppliesToRanksWithoutOwnBody) {
  World w = world_from("ranks 4\nrank 1 {\n  free x\n}\nrank * {\n  alloc x\n}\nrank 3 {\n  cuda_free x\n}\n");
  ASSERT_EQ(w.programs.size(), 4u);
  EXPECT_EQ(kinds_of(w, 0), std::vector<OpKind>{OpKind::Alloc});
  EXPECT_EQ(kinds_of(w, 1), std::vector<OpKind>{OpKind::Free});
  EXPECT_EQ(kinds_of(w, 2), std::vector<OpKind>{OpKind::Alloc});
  EXPECT_EQ(kinds_of(w, 3), std::vector<OpKind>{OpKind::CudaFree});
  for (int r = 0; r < 4; ++r) EXPECT_EQ(w.programs[static_cast<size_t>(r)].rank, r);
}

TEST(ResolveBodies, RanksWithoutBodyHaveEmptyProgram) {
  World w = world_from("ranks 3\nrank 1 {\n  alloc x\n}\n");
  ASSERT_EQ(w.programs.size(), 3u);
  for (int r : {0, 2}) {
    const auto& prog = w.programs[static_cast<size_t>(r)];
    EXPECT_EQ(prog.rank, r);
    ASSERT_EQ(prog.threads.size(), 1u);
    EXPECT_EQ(prog.threads[0].name, "main");
    EXPECT_EQ(prog.threads[0].body.kind, Kind::Seq);
    EXPECT_TRUE(prog.threads[0].body.children.empty());
  }
  EXPECT_EQ(kinds_of(w, 1), std::vector<OpKind>{OpKind::Alloc});
  EXPECT_EQ(w.calls.size(), 1u);
}

TEST(ResolveBodies, SharedBodyGivesEachRankItsOwnCalls) {
  World w = world_from("ranks 4\ncomm A = all\nrank 1, 3 {\n  all_reduce A x\n}\n");
  ASSERT_EQ(w.calls.size(), 2u);
  EXPECT_EQ(w.calls[0].rank, 1);
  EXPECT_EQ(w.calls[1].rank, 3);
  for (size_t i = 0; i < w.calls.size(); ++i) EXPECT_EQ(w.calls[i].id, static_cast<int>(i));
  EXPECT_EQ(w.calls[0].buffer, w.calls[1].buffer);  // one buffer id space for every rank
  EXPECT_TRUE(calls_of(w, 0).empty());
  EXPECT_TRUE(calls_of(w, 2).empty());
}

TEST(ResolveThreads, ThreadCreatesSecondProgramAndSpawn) {
  World w = world_from(
      "ranks 2\ncomm A = [0, 1]\nrank 0 {\n  alloc x\n  thread t {\n    all_reduce A x on s1\n    sync s1\n  }\n"
      "  sync main\n}\n");
  const auto& prog = w.programs[0];
  ASSERT_EQ(prog.threads.size(), 2u);
  EXPECT_EQ(prog.threads[0].name, "main");
  EXPECT_EQ(prog.threads[1].name, "t");
  const ProgramNode& main = prog.threads[0].body;
  ASSERT_EQ(main.children.size(), 3u);
  EXPECT_EQ(main.children[0].kind, Kind::Call);
  EXPECT_EQ(main.children[1].kind, Kind::Spawn);
  EXPECT_EQ(main.children[1].thread, 1);
  EXPECT_TRUE(main.children[1].children.empty());
  EXPECT_EQ(main.children[2].kind, Kind::Call);
  EXPECT_EQ(w.calls[static_cast<size_t>(main.children[0].call)].thread, 0);
  auto tcalls = calls_of(w, 0, 1);
  ASSERT_EQ(tcalls.size(), 2u);
  EXPECT_EQ(tcalls[0]->kind, OpKind::AllReduce);
  EXPECT_EQ(tcalls[0]->thread, 1);
  EXPECT_EQ(tcalls[0]->rank, 0);
  EXPECT_EQ(w.streams[static_cast<size_t>(tcalls[0]->stream)], "s1");
  EXPECT_EQ(tcalls[1]->kind, OpKind::SyncStream);
  EXPECT_EQ(tcalls[1]->stream, tcalls[0]->stream);
  EXPECT_EQ(w.programs[1].threads.size(), 1u);
}

TEST(ResolveThreads, ThreadsInWhenAndSeveralThreads) {
  World w = world_from(
      "ranks 3\nrank * {\n  thread a { alloc x }\n  when rank in [1] {\n    thread b { free x }\n  }\n"
      "  thread c { }\n}\n");
  for (int r = 0; r < 3; ++r) {
    const auto& prog = w.programs[static_cast<size_t>(r)];
    if (r == 1) {
      ASSERT_EQ(prog.threads.size(), 4u);
      EXPECT_EQ(prog.threads[2].name, "b");
      EXPECT_EQ(kinds_of(w, 1, 2), std::vector<OpKind>{OpKind::Free});
      EXPECT_EQ(prog.threads[3].name, "c");
    } else {
      ASSERT_EQ(prog.threads.size(), 3u);
      EXPECT_EQ(prog.threads[1].name, "a");
      EXPECT_EQ(prog.threads[2].name, "c");
    }
    const ProgramNode& main = prog.threads[0].body;
    ASSERT_EQ(main.children.size(), prog.threads.size() - 1);
    for (size_t i = 0; i < main.children.size(); ++i) {
      EXPECT_EQ(main.children[i].kind, Kind::Spawn);
      EXPECT_EQ(main.children[i].thread, static_cast<int>(i) + 1);
    }
  }
}

TEST(ResolveCommMode, DefaultFromKnobAndPerComm) {
  World w = world_from(
      "ranks 2\ncomm A = [0, 1]\ncomm B = [0, 1] nonblocking\ncomm C = [0, 1] blocking\n"
      "comm dp = {[0], [1]} nonblocking uninit\n");
  ASSERT_EQ(w.comms.size(), 5u);
  EXPECT_EQ(w.comms[0].mode, CommMode::Blocking);  // the knob's default
  EXPECT_EQ(w.comms[1].mode, CommMode::Nonblocking);
  EXPECT_EQ(w.comms[2].mode, CommMode::Blocking);
  EXPECT_EQ(w.comms[3].mode, CommMode::Nonblocking);
  EXPECT_EQ(w.comms[4].mode, CommMode::Nonblocking);
  EXPECT_TRUE(w.comms[3].uninit);
  EXPECT_FALSE(w.comms[0].uninit);

  World n = world_from(
      "ranks 2\nset comm_mode = nonblocking\ncomm A = [0, 1]\ncomm B = [0, 1] blocking\ncomm dp = {[0], [1]}\n");
  EXPECT_EQ(n.comms[0].mode, CommMode::Nonblocking);
  EXPECT_EQ(n.comms[1].mode, CommMode::Blocking);
  EXPECT_EQ(n.comms[2].mode, CommMode::Nonblocking);
  EXPECT_EQ(n.comms[3].mode, CommMode::Nonblocking);
}

TEST(ResolveCommMode, KnobAppliesWhereverItIsSet) {
  // The knob is a property of the scenario, not of the comms declared after it.
  World w = world_from("ranks 2\ncomm A = [0, 1]\nset comm_mode = nonblocking\n");
  EXPECT_EQ(w.comms[0].mode, CommMode::Nonblocking);
}

TEST(ResolveOpenOrder, MaybeBecomesEitherWithEmptyAlternative) {
  World w = world_from("ranks 1\ncomm A = [0]\nrank 0 {\n  maybe {\n    register A x\n    deregister A x\n  }\n}\n");
  const ProgramNode& body = main_body(w, 0);
  ASSERT_EQ(body.children.size(), 1u);
  const ProgramNode& e = body.children[0];
  EXPECT_EQ(e.kind, Kind::Either);
  ASSERT_EQ(e.children.size(), 2u);
  EXPECT_EQ(e.children[0].kind, Kind::Seq);
  ASSERT_EQ(e.children[0].children.size(), 2u);
  EXPECT_EQ(w.calls[static_cast<size_t>(e.children[0].children[0].call)].kind, OpKind::Register);
  EXPECT_EQ(e.children[1].kind, Kind::Seq);
  EXPECT_TRUE(e.children[1].children.empty());
}

TEST(ResolveOpenOrder, EitherKeepsEveryAlternative) {
  World w = world_from("ranks 1\nrank 0 {\n  either { alloc a } or { alloc b; free b }\n  or { }\n}\n");
  const ProgramNode& e = main_body(w, 0).children.at(0);
  EXPECT_EQ(e.kind, Kind::Either);
  ASSERT_EQ(e.children.size(), 3u);
  EXPECT_EQ(e.children[0].children.size(), 1u);
  EXPECT_EQ(e.children[1].children.size(), 2u);
  EXPECT_TRUE(e.children[2].children.empty());
  EXPECT_EQ(w.calls.size(), 3u);  // every alternative's calls exist
}

TEST(ResolveOpenOrder, AnyOrderChildrenAreSequences) {
  World w = world_from(
      "ranks 1\ncomm A = [0]\nrank 0 {\n  any_order {\n    register A x\n    { alloc y; register A y }\n"
      "    repeat 2 { sync main }\n  }\n}\n");
  const ProgramNode& ao = main_body(w, 0).children.at(0);
  EXPECT_EQ(ao.kind, Kind::AnyOrder);
  ASSERT_EQ(ao.children.size(), 3u);
  for (const auto& c : ao.children) EXPECT_EQ(c.kind, Kind::Seq);
  EXPECT_EQ(ao.children[0].children.size(), 1u);
  EXPECT_EQ(ao.children[1].children.size(), 2u);  // a `{ block }` child stays one child
  EXPECT_EQ(ao.children[2].children.size(), 2u);  // so does an unrolled repeat
}

TEST(ResolveOpenOrder, GroupHoldsItsCallsAndBlocksFlatten) {
  World w = world_from(
      "ranks 1\ncomm A = [0]\ncomm B = [0]\nrank 0 {\n  { alloc x; { alloc y } }\n  group {\n    all_reduce A x\n"
      "    all_reduce B y on side\n  }\n}\n");
  const ProgramNode& body = main_body(w, 0);
  ASSERT_EQ(body.children.size(), 3u);
  EXPECT_EQ(body.children[0].kind, Kind::Call);
  EXPECT_EQ(body.children[1].kind, Kind::Call);
  const ProgramNode& g = body.children[2];
  EXPECT_EQ(g.kind, Kind::Group);
  ASSERT_EQ(g.children.size(), 2u);
  EXPECT_EQ(g.children[0].kind, Kind::Call);
  EXPECT_EQ(w.comm_name(w.calls[static_cast<size_t>(g.children[1].call)].comm), "B");
}

TEST(ResolveUsage, RankNotInComm) {
  World w = world_from("ranks 3\ncomm A = [0, 1]\nrank 2 {\n  all_reduce A x\n}\n");
  auto calls = calls_of(w, 2);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->usage_error, "rank 2 is not a member of 'A'");
  EXPECT_EQ(calls[0]->comm, comm_id(w, "A"));
  ASSERT_EQ(w.usage_problems.size(), 1u);
  EXPECT_EQ(w.usage_problems[0].message, "rank 2 is not a member of 'A'");
  EXPECT_EQ(w.usage_problems[0].loc.line, 4);
  EXPECT_EQ(w.usage_problems[0].loc.column, 14);
  EXPECT_EQ(w.usage_problems[0].loc.str(), "test.cmc:4:14");
}

TEST(ResolveUsage, PeerNotInComm) {
  World w = world_from("ranks 3\ncomm A = [0, 1]\nrank 0 {\n  send A 2 x\n}\nrank 1 {\n  recv A 0 x\n}\n");
  auto calls = calls_of(w, 0);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0]->peer, 2);
  EXPECT_EQ(calls[0]->usage_error, "peer 2 is not a member of 'A'");
  ASSERT_EQ(w.usage_problems.size(), 1u);
  EXPECT_EQ(w.usage_problems[0].loc.line, 4);
  EXPECT_EQ(w.usage_problems[0].loc.column, 10);
  EXPECT_TRUE(calls_of(w, 1)[0]->usage_error.empty());
}

TEST(ResolveUsage, RootNotInComm) {
  World w = world_from("ranks 3\ncomm A = [0, 1]\nrank 0, 1 {\n  broadcast A x root=2\n}\n");
  ASSERT_EQ(w.usage_problems.size(), 2u);  // one per rank that makes the call
  for (int r = 0; r < 2; ++r) {
    const Call& c = *calls_of(w, r)[0];
    EXPECT_EQ(c.root, 2);
    EXPECT_EQ(c.usage_error, "root 2 is not a member of 'A'");
  }
  EXPECT_EQ(w.usage_problems[0].loc.line, 4);
  EXPECT_EQ(w.usage_problems[0].loc.column, 22);
}

TEST(ResolveUsage, FirstProblemOnTheCallEveryProblemInTheWorld) {
  World w = world_from("ranks 4\ncomm A = [0, 1]\nrank 3 {\n  reduce A x root=2\n}\n");
  const Call& c = *calls_of(w, 3)[0];
  EXPECT_EQ(c.usage_error, "rank 3 is not a member of 'A'");
  ASSERT_EQ(w.usage_problems.size(), 2u);
  EXPECT_EQ(w.usage_problems[0].message, "rank 3 is not a member of 'A'");
  EXPECT_EQ(w.usage_problems[1].message, "root 2 is not a member of 'A'");
}

TEST(ResolveUsage, InitOrSplitOfACommThatAlreadyExists) {
  World w =
      world_from("ranks 2\ncomm P = [0, 1]\ncomm A = [0, 1]\nrank 0 {\n  init A\n}\nrank 1 {\n  split P -> A\n}\n");
  ASSERT_EQ(w.usage_problems.size(), 2u);
  EXPECT_TRUE(has(calls_of(w, 0)[0]->usage_error, "init of 'A', which already exists"))
      << calls_of(w, 0)[0]->usage_error;
  EXPECT_TRUE(has(calls_of(w, 1)[0]->usage_error, "split creates 'A', which already exists"));
  EXPECT_EQ(w.usage_problems[1].loc.line, 8);
  EXPECT_EQ(w.usage_problems[1].loc.column, 14);
}

TEST(ResolveUsage, CorrectScenarioHasNoProblems) {
  World w = world_from(
      "ranks 2\ncomm A = [0, 1]\ncomm C = [0, 1] uninit\nrank * {\n  init C\n  send A 1 x\n  recv A 0 x\n"
      "  broadcast C x root=1\n}\n");
  EXPECT_TRUE(w.usage_problems.empty());
  for (const auto& c : w.calls) EXPECT_TRUE(c.usage_error.empty()) << c.text;
}

TEST(ResolveNotes, MpiBroadcast) {
  World w = world_from("ranks 2\nset profile = mpi\ncomm A = [0, 1]\nrank * {\n  broadcast A x root=0\n}\n");
  ASSERT_EQ(w.notes.size(), 1u);
  EXPECT_TRUE(has(w.notes[0], "mpi: broadcast and reduce are checked under every progress model MPI allows"))
      << w.notes[0];
  const World sync = world_from(
      "ranks 2\nset profile = mpi\nset mpi_progress = sync\ncomm A = [0, 1]\nrank * {\n  broadcast A x root=0\n}\n");
  ASSERT_EQ(sync.notes.size(), 1u);
  EXPECT_TRUE(has(sync.notes[0], "broadcast and reduce are assumed to synchronize every member")) << sync.notes[0];
}

TEST(ResolveNotes, MpiReduce) {
  World w = world_from("ranks 2\nset profile = mpi\ncomm A = [0, 1]\nrank * {\n  reduce A x root=1\n  reduce A x\n}\n");
  ASSERT_EQ(w.notes.size(), 1u);  // one note, however many calls
  EXPECT_TRUE(has(w.notes[0], "a hang any of them reaches is reported, naming it")) << w.notes[0];
}

TEST(ResolveNotes, NoneOtherwise) {
  EXPECT_TRUE(
      world_from("ranks 2\ncomm A = [0, 1]\nrank * {\n  broadcast A x root=0\n  reduce A x\n}\n").notes.empty());
  EXPECT_TRUE(world_from("ranks 2\nset profile = mpi\ncomm A = [0, 1]\nrank * {\n  all_reduce A x\n  barrier A\n}\n")
                  .notes.empty());
}

TEST(ResolveCalls, FieldsAndInterning) {
  World w = world_from(
      "ranks 2\ncomm A = [0, 1]\nrank 0 {\n  alloc big 64KiB\n  cuda_malloc small\n  register A big default\n"
      "  all_gather A big -> out count=16 dtype=half op=max on side\n  send A 1 small dtype=bf16\n"
      "  sync side\n  sync device\n}\nrank 1 {\n  recv A 0 small count=3 dtype=float16\n  all_reduce A big op=sum on "
      "s2\n}\n");
  auto r0 = calls_of(w, 0);
  ASSERT_EQ(r0.size(), 7u);
  EXPECT_EQ(r0[0]->size, 64u << 10);
  EXPECT_EQ(r0[1]->size, model::kDefaultBufferSize);
  EXPECT_EQ(r0[1]->kind, OpKind::CudaMalloc);
  EXPECT_EQ(r0[2]->flag, model::RegFlag::Default);
  EXPECT_EQ(r0[2]->comm, comm_id(w, "A"));
  const Call& ag = *r0[3];
  EXPECT_EQ(w.buffers[static_cast<size_t>(ag.buffer)], "big");
  EXPECT_EQ(w.buffers[static_cast<size_t>(ag.buffer2)], "out");
  EXPECT_EQ(ag.count, 16);
  EXPECT_EQ(w.dtypes[static_cast<size_t>(ag.dtype)], "float16");  // `half` is canonicalised
  EXPECT_EQ(w.dtype_size(ag.dtype), 2u);
  EXPECT_EQ(w.redops[static_cast<size_t>(ag.redop)], "max");
  EXPECT_EQ(w.streams[static_cast<size_t>(ag.stream)], "side");
  EXPECT_EQ(ag.root, -1);
  EXPECT_EQ(ag.peer, -1);
  EXPECT_EQ(ag.text, "all_gather A big -> out count=16 dtype=half op=max on side");
  EXPECT_EQ(ag.loc.line, 7);
  const Call& send = *r0[4];
  EXPECT_EQ(send.peer, 1);
  EXPECT_EQ(w.dtypes[static_cast<size_t>(send.dtype)], "bfloat16");
  EXPECT_EQ(send.count, -1);
  EXPECT_EQ(send.stream, 0);
  EXPECT_EQ(r0[5]->kind, OpKind::SyncStream);
  EXPECT_EQ(r0[5]->stream, ag.stream);
  EXPECT_EQ(r0[6]->kind, OpKind::SyncDevice);
  EXPECT_EQ(r0[6]->comm, -1);
  EXPECT_EQ(r0[6]->buffer, -1);

  auto r1 = calls_of(w, 1);
  ASSERT_EQ(r1.size(), 2u);
  EXPECT_EQ(r1[0]->dtype, ag.dtype);      // float16 and half are one dtype
  EXPECT_EQ(r1[0]->buffer, send.buffer);  // one buffer id space for every rank
  EXPECT_EQ(r1[0]->count, 3);
  EXPECT_EQ(r1[1]->redop, 0);  // sum is [0]
  EXPECT_EQ(w.streams, (std::vector<std::string>{"main", "side", "s2"}));
  EXPECT_EQ(w.dtypes[0], "float32");
  EXPECT_EQ(w.dtype_size(0), 4u);
  for (size_t i = 0; i < w.calls.size(); ++i) EXPECT_EQ(w.calls[i].id, static_cast<int>(i));
}

TEST(ResolveCalls, SyncMainIsStreamZero) {
  World w = world_from("ranks 1\nrank 0 {\n  sync main\n}\n");
  ASSERT_EQ(w.calls.size(), 1u);
  EXPECT_EQ(w.calls[0].kind, OpKind::SyncStream);
  EXPECT_EQ(w.calls[0].stream, 0);
  EXPECT_EQ(w.streams.size(), 1u);
}

TEST(ResolveCalls, ComplexExampleResolves) {
  World w = world_from(
      "ranks 4\nname \"pool hook fans out over two comms\"\nexpect deadlock\ncomm dp  = {[0, 1], [2, 3]}\n"
      "comm ep  = {[0, 2], [1, 3]}\nrank * {\n  alloc pool 64MiB\n  any_order {\n    register dp pool\n"
      "    register ep pool\n  }\n  all_reduce dp pool\n  sync main\n}\n");
  ASSERT_EQ(w.comms.size(), 4u);
  EXPECT_EQ(w.calls.size(), 20u);
  for (int r = 0; r < 4; ++r) {
    auto calls = calls_of(w, r);
    ASSERT_EQ(calls.size(), 5u);
    EXPECT_TRUE(w.comms[static_cast<size_t>(calls[1]->comm)].has_member(r));
    EXPECT_TRUE(w.comms[static_cast<size_t>(calls[2]->comm)].has_member(r));
    EXPECT_EQ(w.comms[static_cast<size_t>(calls[2]->comm)].decl_name, "ep");
  }
  EXPECT_TRUE(w.usage_problems.empty());
}

}  // namespace
}  // namespace collmc::testing
