// The emitter: a trace becomes a scenario that parses whatever the trace holds; threads stay apart,
// calls the language cannot hold become comments that say why, and hangs stay checkable.
#include <gtest/gtest.h>

#include "collmc/traces/trace.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using namespace collmc::traces;

Call call(CallKind kind, const std::string& comm = "", CallState state = CallState::Completed) {
  Call c;
  c.kind = kind;
  c.comm = comm;
  c.state = state;
  return c;
}

Trace two_ranks(std::vector<std::vector<Call>> bodies) {
  Trace t;
  t.format = "test";
  t.world_size = static_cast<int>(bodies.size());
  Communicator a;
  a.id = "uid:aa";
  a.label = "A";
  a.size = t.world_size;
  for (int r = 0; r < t.world_size; ++r) a.members[r] = r;
  t.comms.push_back(a);
  Communicator b = a;
  b.id = "uid:bb";
  b.label = "B";
  t.comms.push_back(b);
  for (int r = 0; r < t.world_size; ++r) {
    RankTrace& rt = t.ranks[r];
    rt.rank = r;
    ThreadTrace th;
    th.name = "main";
    th.calls = bodies[static_cast<size_t>(r)];
    rt.threads.push_back(th);
  }
  return t;
}

TEST(TraceEmit, CrossOrderedRegistrationsAreADeadlockAgreedOnesSafe) {
  auto reg = [](const std::string& comm) {
    Call c = call(CallKind::WindowRegister, comm);
    c.buffer = "pool 0x7f";
    return c;
  };
  Call alloc = call(CallKind::MemAlloc);
  alloc.buffer = "pool 0x7f";
  alloc.bytes = 1 << 20;
  Trace cross = two_ranks({{alloc, reg("uid:aa"), reg("uid:bb")}, {alloc, reg("uid:bb"), reg("uid:aa")}});
  std::string text = emit_scenario(cross);
  EXPECT_NE(text.find("alloc pool_0x7f 1048576"), std::string::npos) << text;
  EXPECT_NE(text.find("register A pool_0x7f symmetric"), std::string::npos) << text;
  EXPECT_EQ(verdict_str(text), "deadlock") << text;
  Trace agreed = two_ranks({{alloc, reg("uid:aa"), reg("uid:bb")}, {alloc, reg("uid:aa"), reg("uid:bb")}});
  EXPECT_EQ(verdict_str(emit_scenario(agreed)), "safe");
}

TEST(TraceEmit, ThreadsStayApartAndHostileNamesAreSanitised) {
  Trace t = two_ranks({{call(CallKind::AllReduce, "uid:aa")}, {call(CallKind::AllReduce, "uid:aa")}});
  t.comms[0].label = "all";  // a word of the grammar
  t.comms[1].label = "9 \"quoted\" }\n rank 0 {";
  ThreadTrace second;
  second.name = "worker #2\n}";
  second.calls = {call(CallKind::AllReduce, "uid:bb")};
  second.calls[0].stream = "s_worker";  // its own stream: no order on a shared one to race for
  t.ranks[0].threads.push_back(second);
  t.ranks[1].threads[0].calls.push_back(call(CallKind::AllReduce, "uid:bb"));
  t.notes.push_back("a note\nwith a newline");
  std::string text = emit_scenario(t, {"a \"title\"", true});
  EXPECT_NE(text.find("thread t_worker_2 {"), std::string::npos) << text;
  EXPECT_NE(text.find("comm c_all = [0, 1]"), std::string::npos) << text;
  EXPECT_NE(text.find("name \"a 'title'\""), std::string::npos) << text;
  EXPECT_EQ(verdict_str(text), "safe") << text;
}

// A thread starts after the first thread's calls that returned before its first call (the traces do not see
// its creation): here after rank 0's init of X, so its all_reduce on X finds X made; without return times,
// before the last call the first thread entered before it.
TEST(TraceEmit, AThreadStartsWhereItsFirstCallCame) {
  auto timed = [](Call c, uint64_t entered, uint64_t returned) {
    c.time_ns = entered;
    c.return_ns = returned;
    return c;
  };
  Trace t = two_ranks({{}, {}});
  t.comms[1].origin = CommOrigin::Init;
  for (int r = 0; r < 2; ++r)
    t.ranks[r].threads[0].calls = {timed(call(CallKind::CommInit, "uid:bb"), 10, 12),
                                   timed(call(CallKind::AllReduce, "uid:aa"), 20, 30)};
  ThreadTrace helper;
  helper.name = "helper";
  helper.calls = {timed(call(CallKind::AllReduce, "uid:bb"), 15, 16)};
  helper.calls[0].stream = "s_helper";
  t.ranks[0].threads.push_back(helper);
  t.ranks[1].threads[0].calls.push_back(timed(call(CallKind::AllReduce, "uid:bb"), 40, 41));
  const std::string text = emit_scenario(t);
  const size_t init = text.find("init B"), block = text.find("thread t_helper {");
  ASSERT_NE(block, std::string::npos) << text;
  EXPECT_LT(init, block) << text;
  EXPECT_LT(block, text.find("all_reduce A")) << text;
  EXPECT_EQ(verdict_str(text), "safe") << text;
  // Without return times the init may not have returned when the helper began: it starts before the init,
  // and may call on X before X is made.
  for (auto& c : t.ranks[0].threads[0].calls) c.return_ns = 0;
  const std::string untimed = emit_scenario(t);
  EXPECT_LT(untimed.find("thread t_helper {"), untimed.find("init B")) << untimed;
  EXPECT_EQ(verdict_str(untimed), "usage_error") << untimed;
}

TEST(TraceEmit, WhatTheLanguageCannotHoldBecomesAComment) {
  Call sync = call(CallKind::StreamSync);
  Call send = call(CallKind::Send, "uid:aa");  // no peer
  Call other = call(CallKind::Other);
  other.detail = "ncclCommShrink";
  std::vector<Call> body = {call(CallKind::GroupStart),
                            call(CallKind::AllReduce, "uid:aa"),
                            sync,
                            call(CallKind::GroupEnd),
                            call(CallKind::AllReduce, "uid:zz"),
                            send,
                            other,
                            call(CallKind::GroupEnd),
                            call(CallKind::GroupStart)};
  Trace t = two_ranks({body, body});
  std::string text = emit_scenario(t);
  EXPECT_NE(text.find("# inside a group, where the language has no 'sync': sync main"), std::string::npos) << text;
  EXPECT_NE(text.find("# not expressible: communicator uid:zz is not declared"), std::string::npos) << text;
  EXPECT_NE(text.find("# not expressible: send without a known peer"), std::string::npos) << text;
  EXPECT_NE(text.find("# not expressible: ncclCommShrink"), std::string::npos) << text;
  EXPECT_NE(text.find("# a group end without its start"), std::string::npos) << text;
  EXPECT_EQ(verdict_str(text), "safe") << text;
}

TEST(TraceEmit, WhereARankStoppedIsMarkedAndLaterCallsAreKept) {
  Trace t = two_ranks({{call(CallKind::AllReduce, "uid:aa", CallState::Started),
                        call(CallKind::AllReduce, "uid:bb", CallState::Scheduled)},
                       {call(CallKind::AllReduce, "uid:bb", CallState::Started),
                        call(CallKind::AllReduce, "uid:aa", CallState::Scheduled)}});
  std::string text = emit_scenario(t);
  EXPECT_NE(text.find("rank 0 stopped here: the next call started and never finished"), std::string::npos);
  EXPECT_NE(text.find("all_reduce B buf  # issued, never seen to finish"), std::string::npos) << text;
  EXPECT_EQ(verdict_str(text), "deadlock") << text;
  // A rank without a trace has an empty body (not a hand-written file's forgotten rank); its peers wait for it.
  t.ranks[1].present = false;
  text = emit_scenario(t);
  EXPECT_NE(text.find("rank 1 { }  # no trace"), std::string::npos) << text;
  EXPECT_TRUE(check_text(text).world->warnings.empty()) << text;
  EXPECT_EQ(verdict_str(text), "deadlock");
}

TEST(TraceEmit, SplitsCreateUninitComms) {
  Trace t = two_ranks({{}, {}});
  Communicator child;
  child.id = "split:uid:aa/1/0";
  child.label = "child";
  child.size = 1;
  child.members = {{0, 0}};
  child.origin = CommOrigin::Split;
  child.parent = "uid:aa";
  t.comms.push_back(child);
  Call to_child = call(CallKind::CommSplit, "uid:aa");
  to_child.child_comm = child.id;
  Call to_none = call(CallKind::CommSplit, "uid:aa");
  t.ranks[0].threads[0].calls = {to_child, call(CallKind::AllReduce, child.id)};
  t.ranks[1].threads[0].calls = {to_none};
  std::string text = emit_scenario(t);
  EXPECT_NE(text.find("comm child = [0] uninit"), std::string::npos) << text;
  EXPECT_NE(text.find("split A -> child"), std::string::npos) << text;
  EXPECT_NE(text.find("split A -> none"), std::string::npos) << text;
  EXPECT_EQ(verdict_str(text), "safe") << text;
}

}  // namespace
}  // namespace collmc::testing
