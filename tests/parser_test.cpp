// The scenario parser against LANGUAGE.md: every top-level form and statement (checked on the AST),
// every input error with its exact line and column, and robustness against random and mutated input.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using model::CommMode;
using model::InputError;
using model::OpKind;
using model::Profile;
using model::RegFlag;
using model::Scenario;
using model::Stmt;
using model::StmtKind;
using model::StreamProgress;
using model::Verdict;

Scenario parse(const std::string& text) { return model::parse_string(text, "test.cmc"); }

// The statements of rank 0's body in a 4-rank world; the body starts on line 4.
std::vector<Stmt> body_of(const std::string& body) {
  Scenario sc = parse("ranks 4\ncomm A = [0, 1, 2, 3]\nrank 0 {\n" + body + "\n}\n");
  EXPECT_EQ(sc.bodies.size(), 1u);
  return sc.bodies.empty() ? std::vector<Stmt>{} : sc.bodies[0].body;
}

Stmt one_stmt(const std::string& text) {
  std::vector<Stmt> b = body_of(text);
  EXPECT_EQ(b.size(), 1u) << text;
  return b.empty() ? Stmt{} : b[0];
}

bool has(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

struct Failure {
  bool thrown = false;
  int line = 0;
  int column = 0;
  std::string file;
  std::string message;
  std::string what;
};

Failure failure_of(const std::string& text, bool with_resolve) {
  Failure f;
  try {
    Scenario sc = parse(text);
    if (with_resolve) (void)model::resolve(sc);
  } catch (const InputError& e) {
    f.thrown = true;
    f.line = e.loc().line;
    f.column = e.loc().column;
    f.file = e.loc().file_name();
    f.message = e.message();
    f.what = e.what();
  }
  return f;
}
Failure parse_failure(const std::string& text) { return failure_of(text, false); }
Failure load_failure(const std::string& text) { return failure_of(text, true); }

#define EXPECT_FAILS_AT(failure, l, c, fragment)                         \
  do {                                                                   \
    const Failure f_ = (failure);                                        \
    ASSERT_TRUE(f_.thrown) << "no InputError";                           \
    EXPECT_EQ(f_.line, l) << f_.what;                                    \
    EXPECT_EQ(f_.column, c) << f_.what;                                  \
    EXPECT_TRUE(has(f_.message, fragment)) << "message: " << f_.message; \
  } while (0)

// ------------------------------------------------------------------------------------------------
// Top level

TEST(ParserTopLevel, Ranks) {
  Scenario sc = parse("ranks 4\n");
  EXPECT_EQ(sc.ranks, 4);
  EXPECT_EQ(sc.ranks_loc.line, 1);
  EXPECT_EQ(sc.ranks_loc.column, 1);
  EXPECT_TRUE(sc.name.empty());
  EXPECT_FALSE(sc.expect.has_value());
  EXPECT_TRUE(sc.comms.empty());
  EXPECT_TRUE(sc.bodies.empty());
  ASSERT_NE(sc.source, nullptr);
  EXPECT_EQ(sc.source->path, "test.cmc");
}

TEST(ParserTopLevel, RanksWithoutTrailingNewlineAndWithComments) {
  Scenario sc = parse("# a comment line\n\n   ranks 65536 # trailing comment");
  EXPECT_EQ(sc.ranks, 65536);
  EXPECT_EQ(sc.ranks_loc.line, 3);
  EXPECT_EQ(sc.ranks_loc.column, 4);
}

TEST(ParserTopLevel, Name) {
  Scenario sc = parse("ranks 2\nname \"two comms, opposite order\"\n");
  EXPECT_EQ(sc.name, "two comms, opposite order");
  EXPECT_EQ(parse("ranks 2\nname \"say \\\"hi\\\" # not a comment\"\n").name, "say \"hi\" # not a comment");
  EXPECT_EQ(parse("name \"before ranks\"\nranks 2\n").name, "before ranks");
}

TEST(ParserTopLevel, ExpectEveryVerdict) {
  const std::vector<std::pair<std::string, Verdict>> cases = {
      {"safe", Verdict::Safe},
      {"deadlock", Verdict::Deadlock},
      {"mismatch", Verdict::Mismatch},
      {"divergent_kernel", Verdict::DivergentKernel},
      {"use_after_deregister", Verdict::UseAfterDeregister},
      {"use_after_free", Verdict::UseAfterFree},
      {"usage_error", Verdict::UsageError},
  };
  for (const auto& [word, verdict] : cases) {
    Scenario sc = parse("ranks 2\nexpect " + word + "\n");
    ASSERT_TRUE(sc.expect.has_value()) << word;
    EXPECT_EQ(*sc.expect, verdict) << word;
    EXPECT_EQ(sc.expect_loc.line, 2);
    EXPECT_EQ(sc.expect_loc.column, 1);
  }
}

TEST(ParserTopLevel, KnobDefaults) {
  Scenario sc = parse("ranks 1\n");
  EXPECT_EQ(sc.knobs.profile, Profile::Nccl);
  EXPECT_EQ(sc.knobs.comm_mode, CommMode::Blocking);
  EXPECT_TRUE(sc.knobs.runtime_connect);
  EXPECT_EQ(sc.knobs.stream_progress, StreamProgress::Independent);
}

TEST(ParserTopLevel, SetProfile) {
  EXPECT_EQ(parse("ranks 1\nset profile = nccl\n").knobs.profile, Profile::Nccl);
  EXPECT_EQ(parse("ranks 1\nset profile = mpi\n").knobs.profile, Profile::Mpi);
}

TEST(ParserTopLevel, SetCommMode) {
  EXPECT_EQ(parse("ranks 1\nset comm_mode = blocking\n").knobs.comm_mode, CommMode::Blocking);
  EXPECT_EQ(parse("ranks 1\nset comm_mode = nonblocking\n").knobs.comm_mode, CommMode::Nonblocking);
}

TEST(ParserTopLevel, SetRuntimeConnect) {
  EXPECT_TRUE(parse("ranks 1\nset runtime_connect = on\n").knobs.runtime_connect);
  EXPECT_FALSE(parse("ranks 1\nset runtime_connect = off\n").knobs.runtime_connect);
}

TEST(ParserTopLevel, SetStreamProgress) {
  EXPECT_EQ(parse("ranks 1\nset stream_progress = independent\n").knobs.stream_progress, StreamProgress::Independent);
  EXPECT_EQ(parse("ranks 1\nset stream_progress = serialized\n").knobs.stream_progress, StreamProgress::Serialized);
}

TEST(ParserTopLevel, SetMpiProgress) {
  EXPECT_EQ(parse("ranks 1\n").knobs.mpi_progress, model::MpiProgress::Portable);  // the default (issue 32)
  EXPECT_EQ(parse("ranks 1\nset mpi_progress = portable\n").knobs.mpi_progress, model::MpiProgress::Portable);
  EXPECT_EQ(parse("ranks 1\nset mpi_progress = sync\n").knobs.mpi_progress, model::MpiProgress::Sync);
  EXPECT_EQ(parse("ranks 1\nset mpi_progress = strong\n").knobs.mpi_progress, model::MpiProgress::Strong);
  EXPECT_EQ(parse("ranks 1\nset mpi_progress = weak\n").knobs.mpi_progress, model::MpiProgress::Weak);
}

TEST(ParserTopLevel, SetSeveralKnobsLastWins) {
  Scenario sc = parse("ranks 1\nset profile = mpi; set runtime_connect = off\nset profile = nccl\n");
  EXPECT_EQ(sc.knobs.profile, Profile::Nccl);
  EXPECT_FALSE(sc.knobs.runtime_connect);
}

TEST(ParserTopLevel, CommPlain) {
  Scenario sc = parse("ranks 4\ncomm A = [0, 1]\n");
  ASSERT_EQ(sc.comms.size(), 1u);
  const auto& c = sc.comms[0];
  EXPECT_EQ(c.name, "A");
  EXPECT_EQ(c.loc.line, 2);
  EXPECT_EQ(c.loc.column, 6);
  EXPECT_FALSE(c.family);
  EXPECT_EQ(c.instances, (std::vector<std::vector<int>>{{0, 1}}));
  EXPECT_FALSE(c.mode.has_value());
  EXPECT_FALSE(c.uninit);
}

TEST(ParserTopLevel, CommRangesAreInclusiveSortedAndUnique) {
  Scenario sc = parse("ranks 8\ncomm A = [6, 0, 4..7, 1]\n");
  ASSERT_EQ(sc.comms.size(), 1u);
  EXPECT_EQ(sc.comms[0].instances, (std::vector<std::vector<int>>{{0, 1, 4, 5, 6, 7}}));
}

TEST(ParserTopLevel, CommAll) {
  Scenario sc = parse("ranks 4\ncomm W = all\n");
  ASSERT_EQ(sc.comms.size(), 1u);
  EXPECT_FALSE(sc.comms[0].family);
  EXPECT_EQ(sc.comms[0].instances, (std::vector<std::vector<int>>{{0, 1, 2, 3}}));
}

TEST(ParserTopLevel, CommFamily) {
  Scenario sc = parse("ranks 4\ncomm dp = {[0, 2], [1, 3]}\n");
  ASSERT_EQ(sc.comms.size(), 1u);
  EXPECT_TRUE(sc.comms[0].family);
  EXPECT_EQ(sc.comms[0].instances, (std::vector<std::vector<int>>{{0, 2}, {1, 3}}));
}

TEST(ParserTopLevel, CommFamilySpanningLines) {
  Scenario sc = parse("ranks 8\ncomm dp = {\n  [0, 1,\n   2..3],\n  [4..7]\n}\ncomm B = [0]\n");
  ASSERT_EQ(sc.comms.size(), 2u);
  EXPECT_TRUE(sc.comms[0].family);
  EXPECT_EQ(sc.comms[0].instances, (std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}}));
  EXPECT_EQ(sc.comms[1].name, "B");
}

TEST(ParserTopLevel, CommNonblocking) {
  Scenario sc = parse("ranks 2\ncomm B = [0, 1] nonblocking\n");
  ASSERT_EQ(sc.comms.size(), 1u);
  ASSERT_TRUE(sc.comms[0].mode.has_value());
  EXPECT_EQ(*sc.comms[0].mode, CommMode::Nonblocking);
  EXPECT_FALSE(sc.comms[0].uninit);
}

TEST(ParserTopLevel, CommBlocking) {
  Scenario sc = parse("ranks 2\nset comm_mode = nonblocking\ncomm B = [0, 1] blocking\n");
  ASSERT_EQ(sc.comms.size(), 1u);
  ASSERT_TRUE(sc.comms[0].mode.has_value());
  EXPECT_EQ(*sc.comms[0].mode, CommMode::Blocking);
}

TEST(ParserTopLevel, CommUninit) {
  Scenario sc = parse("ranks 4\ncomm C = [0, 1, 2, 3] uninit\ncomm D = [0, 1] nonblocking uninit\n");
  ASSERT_EQ(sc.comms.size(), 2u);
  EXPECT_TRUE(sc.comms[0].uninit);
  EXPECT_FALSE(sc.comms[0].mode.has_value());
  EXPECT_TRUE(sc.comms[1].uninit);
  EXPECT_EQ(sc.comms[1].mode, CommMode::Nonblocking);
}

TEST(ParserTopLevel, CommsKeepDeclarationOrder) {
  Scenario sc = parse("ranks 2\ncomm Z = [0]\ncomm A = [1]\ncomm M = [0, 1]\n");
  ASSERT_EQ(sc.comms.size(), 3u);
  EXPECT_EQ(sc.comms[0].name, "Z");
  EXPECT_EQ(sc.comms[1].name, "A");
  EXPECT_EQ(sc.comms[2].name, "M");
}

TEST(ParserTopLevel, RankSingle) {
  Scenario sc = parse("ranks 4\nrank 2 {\n  alloc x\n}\n");
  ASSERT_EQ(sc.bodies.size(), 1u);
  EXPECT_FALSE(sc.bodies[0].star);
  EXPECT_EQ(sc.bodies[0].ranks, std::vector<int>{2});
  EXPECT_EQ(sc.bodies[0].loc.line, 2);
  EXPECT_EQ(sc.bodies[0].loc.column, 1);
  EXPECT_EQ(sc.bodies[0].body.size(), 1u);
}

TEST(ParserTopLevel, RankList) {
  Scenario sc = parse("ranks 4\nrank 1, 3 { }\n");
  ASSERT_EQ(sc.bodies.size(), 1u);
  EXPECT_EQ(sc.bodies[0].ranks, (std::vector<int>{1, 3}));
  EXPECT_TRUE(sc.bodies[0].body.empty());
}

TEST(ParserTopLevel, RankRange) {
  Scenario sc = parse("ranks 8\nrank 4..7 {}\nrank 0..1, 3 {}\n");
  ASSERT_EQ(sc.bodies.size(), 2u);
  EXPECT_EQ(sc.bodies[0].ranks, (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(sc.bodies[1].ranks, (std::vector<int>{0, 1, 3}));
}

TEST(ParserTopLevel, RankStar) {
  Scenario sc = parse("ranks 4\nrank 0 {}\nrank * {\n  alloc x\n}\n");
  ASSERT_EQ(sc.bodies.size(), 2u);
  EXPECT_TRUE(sc.bodies[1].star);
  EXPECT_TRUE(sc.bodies[1].ranks.empty());
  EXPECT_EQ(sc.bodies[1].body.size(), 1u);
}

TEST(ParserTopLevel, RankBraceOnNextLine) {
  Scenario sc = parse("ranks 2\nrank 0\n{\n  alloc x\n}\n");
  ASSERT_EQ(sc.bodies.size(), 1u);
  EXPECT_EQ(sc.bodies[0].body.size(), 1u);
}

TEST(ParserTopLevel, RankWithoutBodyIsNotListed) {
  Scenario sc = parse("ranks 4\nrank 1 { alloc x }\n");
  ASSERT_EQ(sc.bodies.size(), 1u);
  EXPECT_EQ(sc.bodies[0].ranks, std::vector<int>{1});
}

TEST(ParserTopLevel, CompleteExampleOfLanguageMd) {
  Scenario sc = parse(
      "# Two overlapping groups; each rank registers its pool on both, in an order it picks.\n"
      "ranks 4\n"
      "name \"pool hook fans out over two comms\"\n"
      "expect deadlock\n"
      "comm dp  = {[0, 1], [2, 3]}\n"
      "comm ep  = {[0, 2], [1, 3]}\n"
      "rank * {\n"
      "  alloc pool 64MiB\n"
      "  any_order {\n"
      "    register dp pool\n"
      "    register ep pool\n"
      "  }\n"
      "  all_reduce dp pool\n"
      "  sync main\n"
      "}\n");
  EXPECT_EQ(sc.ranks, 4);
  EXPECT_EQ(sc.name, "pool hook fans out over two comms");
  EXPECT_EQ(sc.expect, Verdict::Deadlock);
  ASSERT_EQ(sc.comms.size(), 2u);
  ASSERT_EQ(sc.bodies.size(), 1u);
  ASSERT_EQ(sc.bodies[0].body.size(), 4u);
  EXPECT_EQ(sc.bodies[0].body[1].kind, StmtKind::AnyOrder);
  EXPECT_EQ(sc.bodies[0].body[1].body.size(), 2u);
}

// ------------------------------------------------------------------------------------------------
// Statements

TEST(ParserStatements, Alloc) {
  Stmt s = one_stmt("  alloc pool");
  EXPECT_EQ(s.kind, StmtKind::Op);
  EXPECT_EQ(s.op, OpKind::Alloc);
  EXPECT_EQ(s.buffer, "pool");
  EXPECT_FALSE(s.size.has_value());
  EXPECT_EQ(s.loc.line, 4);
  EXPECT_EQ(s.loc.column, 3);
  EXPECT_EQ(s.text, "alloc pool");
}

TEST(ParserStatements, AllocWithSize) {
  Stmt s = one_stmt("alloc pool 64MiB");
  EXPECT_EQ(s.op, OpKind::Alloc);
  EXPECT_EQ(s.size, 64ull << 20);
  EXPECT_EQ(s.text, "alloc pool 64MiB");
}

TEST(ParserStatements, Sizes) {
  const std::vector<std::pair<std::string, uint64_t>> cases = {
      {"0", 0},      {"4096", 4096},   {"64KiB", 64ull << 10}, {"4MiB", 4ull << 20},   {"1GiB", 1ull << 30},
      {"3KB", 3000}, {"5MB", 5000000}, {"2GB", 2000000000},    {"16GiB", 16ull << 30},
  };
  for (const auto& [text, bytes] : cases) {
    Stmt s = one_stmt("cuda_malloc buf " + text);
    ASSERT_TRUE(s.size.has_value()) << text;
    EXPECT_EQ(*s.size, bytes) << text;
  }
}

TEST(ParserStatements, CudaMalloc) {
  Stmt s = one_stmt("cuda_malloc tmp");
  EXPECT_EQ(s.op, OpKind::CudaMalloc);
  EXPECT_EQ(s.buffer, "tmp");
  EXPECT_FALSE(s.size.has_value());
  EXPECT_EQ(one_stmt("cuda_malloc tmp 1GiB").size, 1ull << 30);
}

TEST(ParserStatements, Free) {
  Stmt s = one_stmt("free pool");
  EXPECT_EQ(s.op, OpKind::Free);
  EXPECT_EQ(s.buffer, "pool");
}

TEST(ParserStatements, CudaFree) {
  Stmt s = one_stmt("cuda_free tmp");
  EXPECT_EQ(s.op, OpKind::CudaFree);
  EXPECT_EQ(s.buffer, "tmp");
}

TEST(ParserStatements, RegisterDefaultsToSymmetric) {
  Stmt s = one_stmt("register A pool");
  EXPECT_EQ(s.op, OpKind::Register);
  EXPECT_EQ(s.comm, "A");
  EXPECT_EQ(s.comm_loc.line, 4);
  EXPECT_EQ(s.comm_loc.column, 10);
  EXPECT_EQ(s.buffer, "pool");
  EXPECT_EQ(s.flag, RegFlag::Symmetric);
}

TEST(ParserStatements, RegisterSymmetric) {
  Stmt s = one_stmt("register A pool symmetric");
  EXPECT_EQ(s.flag, RegFlag::Symmetric);
  EXPECT_EQ(s.text, "register A pool symmetric");
}

TEST(ParserStatements, RegisterDefault) {
  Stmt s = one_stmt("register A pool default");
  EXPECT_EQ(s.op, OpKind::Register);
  EXPECT_EQ(s.flag, RegFlag::Default);
}

TEST(ParserStatements, Deregister) {
  Stmt s = one_stmt("deregister A pool");
  EXPECT_EQ(s.op, OpKind::Deregister);
  EXPECT_EQ(s.comm, "A");
  EXPECT_EQ(s.buffer, "pool");
}

TEST(ParserStatements, RegisterLocal) {
  Stmt s = one_stmt("register_local A pool");
  EXPECT_EQ(s.op, OpKind::RegisterLocal);
  EXPECT_EQ(s.comm, "A");
  EXPECT_EQ(s.buffer, "pool");
}

TEST(ParserStatements, DeregisterLocal) {
  Stmt s = one_stmt("deregister_local A pool");
  EXPECT_EQ(s.op, OpKind::DeregisterLocal);
  EXPECT_EQ(s.comm, "A");
  EXPECT_EQ(s.buffer, "pool");
}

TEST(ParserStatements, Init) {
  Stmt s = one_stmt("init C");
  EXPECT_EQ(s.op, OpKind::Init);
  EXPECT_EQ(s.comm, "C");
  EXPECT_TRUE(s.buffer.empty());
}

TEST(ParserStatements, Split) {
  Stmt s = one_stmt("split P -> C");
  EXPECT_EQ(s.op, OpKind::Split);
  EXPECT_EQ(s.comm, "P");
  EXPECT_EQ(s.child, "C");
  EXPECT_EQ(s.child_loc.line, 4);
  EXPECT_EQ(s.child_loc.column, 12);
  EXPECT_EQ(s.text, "split P -> C");
}

TEST(ParserStatements, SplitNone) {
  Stmt s = one_stmt("split P -> none");
  EXPECT_EQ(s.op, OpKind::Split);
  EXPECT_EQ(s.comm, "P");
  EXPECT_TRUE(s.child.empty());
  EXPECT_EQ(s.text, "split P -> none");
}

TEST(ParserStatements, FinalizeDestroyAbort) {
  EXPECT_EQ(one_stmt("finalize A").op, OpKind::Finalize);
  EXPECT_EQ(one_stmt("destroy A").op, OpKind::Destroy);
  EXPECT_EQ(one_stmt("abort A").op, OpKind::Abort);
  EXPECT_EQ(one_stmt("abort A").comm, "A");
}

TEST(ParserStatements, EveryCollectiveKeyword) {
  const std::vector<std::pair<std::string, OpKind>> cases = {
      {"all_reduce", OpKind::AllReduce}, {"all_gather", OpKind::AllGather}, {"reduce_scatter", OpKind::ReduceScatter},
      {"broadcast", OpKind::Broadcast},  {"reduce", OpKind::Reduce},        {"all_to_all", OpKind::AllToAll},
  };
  for (const auto& [word, kind] : cases) {
    Stmt s = one_stmt(word + " A x");
    EXPECT_EQ(s.op, kind) << word;
    EXPECT_EQ(s.comm, "A") << word;
    EXPECT_EQ(s.buffer, "x") << word;
    EXPECT_TRUE(s.buffer2.empty()) << word;
    EXPECT_FALSE(s.args.count.has_value());
    EXPECT_FALSE(s.args.root.has_value());
    EXPECT_TRUE(s.args.dtype.empty());
    EXPECT_TRUE(s.args.redop.empty());
    EXPECT_TRUE(s.args.stream.empty());
  }
}

TEST(ParserStatements, CollectiveWithSecondBuffer) {
  Stmt s = one_stmt("all_gather A in -> out");
  EXPECT_EQ(s.op, OpKind::AllGather);
  EXPECT_EQ(s.buffer, "in");
  EXPECT_EQ(s.buffer2, "out");
  EXPECT_EQ(s.text, "all_gather A in -> out");
}

TEST(ParserStatements, ArgCount) {
  Stmt s = one_stmt("all_reduce A x count=1024");
  EXPECT_EQ(s.args.count, 1024);
}

TEST(ParserStatements, ArgRoot) {
  Stmt s = one_stmt("broadcast A x root=3");
  EXPECT_EQ(s.args.root, 3);
  EXPECT_EQ(s.args.root_loc.line, 4);
  EXPECT_EQ(s.args.root_loc.column, 20);
}

TEST(ParserStatements, ArgDtype) { EXPECT_EQ(one_stmt("all_reduce A x dtype=bfloat16").args.dtype, "bfloat16"); }

TEST(ParserStatements, ArgOp) { EXPECT_EQ(one_stmt("reduce A x op=max").args.redop, "max"); }

TEST(ParserStatements, ArgOnStream) { EXPECT_EQ(one_stmt("all_reduce A x on side").args.stream, "side"); }

TEST(ParserStatements, ArgsInAnyOrder) {
  const std::vector<std::string> args = {"count=7", "root=2", "dtype=half", "op=min", "on s2"};
  std::vector<size_t> idx = {0, 1, 2, 3, 4};
  int permutations = 0;
  do {
    std::string line = "reduce A x -> y";
    for (size_t i : idx) line += " " + args[i];
    Stmt s = one_stmt(line);
    EXPECT_EQ(s.op, OpKind::Reduce) << line;
    EXPECT_EQ(s.buffer2, "y") << line;
    EXPECT_EQ(s.args.count, 7) << line;
    EXPECT_EQ(s.args.root, 2) << line;
    EXPECT_EQ(s.args.dtype, "half") << line;
    EXPECT_EQ(s.args.redop, "min") << line;
    EXPECT_EQ(s.args.stream, "s2") << line;
    EXPECT_EQ(s.text, line) << line;
    ++permutations;
  } while (std::next_permutation(idx.begin(), idx.end()));
  EXPECT_EQ(permutations, 120);
}

TEST(ParserStatements, Send) {
  Stmt s = one_stmt("send A 1 x count=4 on s1");
  EXPECT_EQ(s.op, OpKind::Send);
  EXPECT_EQ(s.comm, "A");
  EXPECT_EQ(s.peer, 1);
  EXPECT_EQ(s.peer_loc.line, 4);
  EXPECT_EQ(s.peer_loc.column, 8);
  EXPECT_EQ(s.buffer, "x");
  EXPECT_EQ(s.args.count, 4);
  EXPECT_EQ(s.args.stream, "s1");
}

TEST(ParserStatements, Recv) {
  Stmt s = one_stmt("recv A 3 y dtype=int8");
  EXPECT_EQ(s.op, OpKind::Recv);
  EXPECT_EQ(s.peer, 3);
  EXPECT_EQ(s.buffer, "y");
  EXPECT_EQ(s.args.dtype, "int8");
}

TEST(ParserStatements, Barrier) {
  Stmt s = one_stmt("barrier A");
  EXPECT_EQ(s.op, OpKind::Barrier);
  EXPECT_EQ(s.comm, "A");
  EXPECT_TRUE(s.buffer.empty());
}

TEST(ParserStatements, SyncMain) {
  Stmt s = one_stmt("sync main");
  EXPECT_EQ(s.op, OpKind::SyncStream);
  EXPECT_EQ(s.args.stream, "main");
  EXPECT_EQ(s.text, "sync main");
}

TEST(ParserStatements, SyncNamedStream) {
  Stmt s = one_stmt("sync side");
  EXPECT_EQ(s.op, OpKind::SyncStream);
  EXPECT_EQ(s.args.stream, "side");
}

TEST(ParserStatements, SyncDevice) {
  Stmt s = one_stmt("sync device");
  EXPECT_EQ(s.op, OpKind::SyncDevice);
  EXPECT_EQ(s.text, "sync device");
}

TEST(ParserStatements, SemicolonSeparates) {
  std::vector<Stmt> b = body_of("alloc a; alloc b 1KiB;free a ;; sync main;");
  ASSERT_EQ(b.size(), 4u);
  EXPECT_EQ(b[0].op, OpKind::Alloc);
  EXPECT_EQ(b[0].text, "alloc a");
  EXPECT_EQ(b[1].size, 1024u);
  EXPECT_EQ(b[1].loc.column, 10);
  EXPECT_EQ(b[2].op, OpKind::Free);
  EXPECT_EQ(b[2].text, "free a");
  EXPECT_EQ(b[3].op, OpKind::SyncStream);
  // A whole scenario on one line.
  Scenario sc = parse("ranks 2; comm A = [0, 1]; rank * { alloc x; all_reduce A x }");
  EXPECT_EQ(sc.ranks, 2);
  ASSERT_EQ(sc.bodies.size(), 1u);
  EXPECT_EQ(sc.bodies[0].body.size(), 2u);
}

TEST(ParserStatements, CommentEndsStatementText) {
  Stmt s = one_stmt("all_reduce A x count=8   # the gradient");
  EXPECT_EQ(s.text, "all_reduce A x count=8");
}

TEST(ParserStatements, BlockStatement) {
  std::vector<Stmt> b = body_of("{ alloc a; alloc b }\n{\n  free a\n}");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].kind, StmtKind::Block);
  EXPECT_EQ(b[0].body.size(), 2u);
  EXPECT_EQ(b[1].kind, StmtKind::Block);
  ASSERT_EQ(b[1].body.size(), 1u);
  EXPECT_EQ(b[1].body[0].loc.line, 6);
}

TEST(ParserStatements, Group) {
  Stmt s = one_stmt("group {\n  all_reduce A x\n\n  all_reduce A y on s2\n}");
  EXPECT_EQ(s.kind, StmtKind::Group);
  EXPECT_EQ(s.loc.line, 4);
  EXPECT_EQ(s.loc.column, 1);
  ASSERT_EQ(s.body.size(), 2u);
  EXPECT_EQ(s.body[0].buffer, "x");
  EXPECT_EQ(s.body[1].args.stream, "s2");
  EXPECT_EQ(s.body[1].loc.line, 7);
}

TEST(ParserStatements, GroupOnOneLine) {
  Stmt s = one_stmt("group { register A x; register A y }");
  EXPECT_EQ(s.kind, StmtKind::Group);
  EXPECT_EQ(s.body.size(), 2u);
}

TEST(ParserStatements, AnyOrderWithBlockChild) {
  Stmt s = one_stmt("any_order {\n  register A x\n  { alloc y; register A y }\n  sync main\n}");
  EXPECT_EQ(s.kind, StmtKind::AnyOrder);
  ASSERT_EQ(s.body.size(), 3u);
  EXPECT_EQ(s.body[0].kind, StmtKind::Op);
  EXPECT_EQ(s.body[1].kind, StmtKind::Block);
  EXPECT_EQ(s.body[1].body.size(), 2u);
  EXPECT_EQ(s.body[2].op, OpKind::SyncStream);
}

TEST(ParserStatements, EitherOr) {
  Stmt s = one_stmt("either { alloc a } or { alloc b; alloc c }");
  EXPECT_EQ(s.kind, StmtKind::Either);
  ASSERT_EQ(s.alternatives.size(), 2u);
  EXPECT_EQ(s.alternatives[0].size(), 1u);
  EXPECT_EQ(s.alternatives[1].size(), 2u);
  EXPECT_TRUE(s.body.empty());
}

TEST(ParserStatements, EitherOrOr) {
  Stmt s = one_stmt("either { alloc a } or { alloc b } or { }");
  EXPECT_EQ(s.kind, StmtKind::Either);
  ASSERT_EQ(s.alternatives.size(), 3u);
  EXPECT_TRUE(s.alternatives[2].empty());
}

TEST(ParserStatements, EitherWithOrOnNextLine) {
  std::vector<Stmt> b = body_of("either {\n  alloc a\n}\nor {\n  alloc b\n}\n\n  or\n{\n  alloc c\n}\nfree a");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].kind, StmtKind::Either);
  EXPECT_EQ(b[0].alternatives.size(), 3u);
  EXPECT_EQ(b[1].op, OpKind::Free);
}

TEST(ParserStatements, TwoEithersInARow) {
  std::vector<Stmt> b = body_of("either { alloc a } or { alloc b }\neither { alloc c } or { alloc d }");
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].alternatives.size(), 2u);
  EXPECT_EQ(b[1].alternatives.size(), 2u);
}

TEST(ParserStatements, Maybe) {
  Stmt s = one_stmt("maybe {\n  register A x\n}");
  EXPECT_EQ(s.kind, StmtKind::Maybe);
  ASSERT_EQ(s.body.size(), 1u);
  EXPECT_EQ(s.body[0].op, OpKind::Register);
}

TEST(ParserStatements, Repeat) {
  Stmt s = one_stmt("repeat 3 { all_reduce A x; sync main }");
  EXPECT_EQ(s.kind, StmtKind::Repeat);
  EXPECT_EQ(s.repeat_count, 3);
  EXPECT_EQ(s.body.size(), 2u);
  EXPECT_EQ(one_stmt("repeat 0 { }").repeat_count, 0);
  EXPECT_EQ(one_stmt("repeat 1000000 { }").repeat_count, 1000000);
}

TEST(ParserStatements, Thread) {
  Stmt s = one_stmt("thread worker {\n  alloc x\n  all_reduce A x on s1\n}");
  EXPECT_EQ(s.kind, StmtKind::Thread);
  EXPECT_EQ(s.thread_name, "worker");
  EXPECT_EQ(s.body.size(), 2u);
}

TEST(ParserStatements, WhenRankIn) {
  Stmt s = one_stmt("when rank in [1, 3] {\n  alloc x\n}");
  EXPECT_EQ(s.kind, StmtKind::When);
  EXPECT_FALSE(s.when_ranks.all);
  EXPECT_EQ(s.when_ranks.expand(4), (std::vector<int>{1, 3}));
  EXPECT_TRUE(s.when_ranks.contains(3));
  EXPECT_FALSE(s.when_ranks.contains(2));
  EXPECT_EQ(s.body.size(), 1u);
}

TEST(ParserStatements, WhenRankInRangeAndAll) {
  EXPECT_EQ(one_stmt("when rank in [0..2] { }").when_ranks.expand(4), (std::vector<int>{0, 1, 2}));
  Stmt s = one_stmt("when rank in all { }");
  EXPECT_TRUE(s.when_ranks.all);
  EXPECT_EQ(s.when_ranks.expand(4), (std::vector<int>{0, 1, 2, 3}));
}

TEST(ParserStatements, NestedCompounds) {
  Stmt s = one_stmt(
      "repeat 2 {\n  any_order {\n    maybe { group { all_reduce A x } }\n    either { { free x } } or { when rank in "
      "[0] { sync device } }\n  }\n}");
  ASSERT_EQ(s.kind, StmtKind::Repeat);
  ASSERT_EQ(s.body.size(), 1u);
  const Stmt& ao = s.body[0];
  ASSERT_EQ(ao.kind, StmtKind::AnyOrder);
  ASSERT_EQ(ao.body.size(), 2u);
  EXPECT_EQ(ao.body[0].kind, StmtKind::Maybe);
  EXPECT_EQ(ao.body[0].body[0].kind, StmtKind::Group);
  EXPECT_EQ(ao.body[1].kind, StmtKind::Either);
  EXPECT_EQ(ao.body[1].alternatives[0][0].kind, StmtKind::Block);
  EXPECT_EQ(ao.body[1].alternatives[1][0].kind, StmtKind::When);
}

TEST(ParserStatements, KeywordsAreReservedOnlyWhereExpected) {
  // `group`, `on`, `all`, `rank`, `none` as buffer/comm/stream names.
  Scenario sc = parse(
      "ranks 2\ncomm group = [0, 1]\ncomm all = [0, 1]\nrank 0 {\n  alloc on\n  all_reduce group rank -> none on "
      "device\n  register all group\n}\n");
  ASSERT_EQ(sc.bodies.size(), 1u);
  const auto& b = sc.bodies[0].body;
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].buffer, "on");
  EXPECT_EQ(b[1].comm, "group");
  EXPECT_EQ(b[1].buffer, "rank");
  EXPECT_EQ(b[1].buffer2, "none");
  EXPECT_EQ(b[1].args.stream, "device");
  EXPECT_EQ(b[2].comm, "all");
  EXPECT_EQ(b[2].buffer, "group");
}

TEST(ParserStatements, NamesWithDotsAndUnderscores) {
  Stmt s = one_stmt("all_reduce _tp.grp_0 model.layer1.weight");
  EXPECT_EQ(s.comm, "_tp.grp_0");
  EXPECT_EQ(s.buffer, "model.layer1.weight");
}

TEST(ParserStatements, NamesFollowTheLexicalRule) {
  // [A-Za-z_][A-Za-z0-9_.]*: a dot may end a name or follow another dot.
  Scenario sc = parse("ranks 2\ncomm g.. = [0..1]\nrank 0 {\n  alloc w.\n  all_reduce g.. a..b -> c...\n}\n");
  ASSERT_EQ(sc.comms.size(), 1u);
  EXPECT_EQ(sc.comms[0].name, "g..");
  EXPECT_EQ(sc.comms[0].instances, (std::vector<std::vector<int>>{{0, 1}}));
  const auto& b = sc.bodies.at(0).body;
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].buffer, "w.");
  EXPECT_EQ(b[1].comm, "g..");
  EXPECT_EQ(b[1].buffer, "a..b");
  EXPECT_EQ(b[1].buffer2, "c...");
}

TEST(ParserStatements, Utf8InCommentsAndStrings) {
  Scenario sc = parse(
      "# caf\xc3\xa9 \xe2\x86\x92 r\xc3\xa9seau\nranks 2\nname \"\xc3\xa9tude \xe2\x9c\x93\"\nrank 0 { alloc x }\n");
  EXPECT_EQ(sc.name, "\xc3\xa9tude \xe2\x9c\x93");
  EXPECT_EQ(sc.bodies.size(), 1u);
}

TEST(ParserStatements, CarriageReturnLineEndings) {
  Scenario sc = parse("ranks 2\r\ncomm A = [0, 1]\r\nrank * {\r\n  all_reduce A x\r\n}\r\n");
  ASSERT_EQ(sc.bodies.size(), 1u);
  ASSERT_EQ(sc.bodies[0].body.size(), 1u);
  EXPECT_EQ(sc.bodies[0].body[0].text, "all_reduce A x");
}

// ------------------------------------------------------------------------------------------------
// Errors: exact location and what was expected

TEST(ParserErrors, MissingRanks) {
  EXPECT_FAILS_AT(parse_failure("name \"no world\"\n"), 1, 1, "missing 'ranks N'");
  EXPECT_FAILS_AT(parse_failure(""), 1, 1, "missing 'ranks N'");
  EXPECT_FAILS_AT(parse_failure("# only a comment\n\n"), 1, 1, "missing 'ranks N'");
}

TEST(ParserErrors, RankBeforeRanks) {
  EXPECT_FAILS_AT(parse_failure("name \"x\"\ncomm A = [0]\nranks 2\n"), 2, 6, "declare the world size first");
  EXPECT_FAILS_AT(parse_failure("rank 0 {}\nranks 2\n"), 1, 1, "declare the world size first");
}

TEST(ParserErrors, RanksOutOfRange) {
  EXPECT_FAILS_AT(parse_failure("ranks 0\n"), 1, 7, "expected 1..262144");
  EXPECT_FAILS_AT(parse_failure("ranks 262145\n"), 1, 7, "expected 1..262144");
  EXPECT_FAILS_AT(parse_failure("ranks many\n"), 1, 7, "expected the number of ranks");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nranks 2\n"), 2, 1, "'ranks' declared twice");
}

TEST(ParserErrors, RankOutsideWorldInCommSet) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = [0, 2]\n"), 2, 14, "outside the world: expected 0..1");
  EXPECT_FAILS_AT(parse_failure("ranks 4\ncomm A = [0..4]\n"), 2, 14, "outside the world: expected 0..3");
  EXPECT_FAILS_AT(parse_failure("ranks 4\ncomm dp = {[0, 1],\n  [2, 9]}\n"), 3, 7, "outside the world: expected 0..3");
}

TEST(ParserErrors, RankOutsideWorldInRankHeader) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 3 {}\n"), 2, 6, "outside the world: expected 0..1");
  EXPECT_FAILS_AT(parse_failure("ranks 4\nrank 1, 2..4 {}\n"), 2, 12, "outside the world: expected 0..3");
}

TEST(ParserErrors, RankOutsideWorldInWhenSet) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank * {\n  when rank in [0, 7] { }\n}\n"), 3, 20,
                  "outside the world: expected 0..1");
}

TEST(ParserErrors, RankOutsideWorldAsSendPeer) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = [0, 1]\nrank 0 {\n  send A 9 x\n}\n"), 4, 10,
                  "rank 9 is outside the world: expected 0..1");
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = [0, 1]\nrank 0 {\n  recv A 2 x\n}\n"), 4, 10,
                  "outside the world: expected 0..1");
}

TEST(ParserErrors, RankOutsideWorldAsRoot) {
  EXPECT_FAILS_AT(parse_failure("ranks 4\ncomm A = all\nrank 0 {\n  broadcast A x root=4\n}\n"), 4, 22,
                  "rank 4 is outside the world: expected 0..3");
}

TEST(ParserErrors, EmptyRange) {
  EXPECT_FAILS_AT(parse_failure("ranks 4\ncomm A = [3..1]\n"), 2, 14, "empty range 3..1");
}

TEST(ParserErrors, EmptyCommunicator) {
  EXPECT_FAILS_AT(parse_failure("ranks 4\ncomm A = []\n"), 2, 10, "a communicator needs at least one rank");
}

TEST(ParserErrors, UnknownKnob) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset colour = on\n"), 2, 5,
                  "unknown knob 'colour': expected profile, comm_mode, runtime_connect, stream_progress, mpi_progress, "
                  "mpi_tag_ub, rma_eager_init or nccl_version");
}

TEST(ParserErrors, UnknownKnobValue) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset profile = rccl\n"), 2, 15,
                  "unknown value 'rccl' for profile: expected nccl or mpi");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset comm_mode = lazy\n"), 2, 17, "expected blocking or nonblocking");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset runtime_connect = yes\n"), 2, 23, "expected on or off");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset stream_progress = fast\n"), 2, 23, "expected independent or serialized");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset mpi_progress = async\n"), 2, 20,
                  "expected sync, strong, weak or portable");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset profile = 1\n"), 2, 15, "expected a knob value");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nset profile mpi\n"), 2, 13, "expected '='");
}

TEST(ParserErrors, UnknownVerdict) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nexpect hang\n"), 2, 8,
                  "unknown verdict 'hang': expected safe, deadlock, mismatch, divergent_kernel, "
                  "use_after_deregister, use_after_free or usage_error");
  // `inconclusive` is an outcome of the checker, not something a scenario can expect.
  EXPECT_FAILS_AT(parse_failure("ranks 2\nexpect inconclusive\n"), 2, 8, "unknown verdict 'inconclusive'");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nexpect safe\nexpect deadlock\n"), 3, 1, "'expect' given twice");
}

TEST(ParserErrors, UnknownTopLevelForm) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nworld 2\n"), 2, 1, "expected a top-level form");
  EXPECT_FAILS_AT(parse_failure("ranks 2\n{ }\n"), 2, 1, "expected a top-level form");
}

TEST(ParserErrors, UnknownStatementKeyword) {
  // Nothing close: every statement is listed.
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = [0, 1]\nrank 0 {\n  frobnicate A x\n}\n"), 4, 3,
                  "expected a statement (alloc, cuda_malloc");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  alloc x\n  = y\n}\n"), 4, 3, "expected a statement");
  // A misspelling: the likely keyword, as rustc and clang do.
  for (const auto& [typo, meant] : std::vector<std::pair<std::string, std::string>>{
           {"regster", "register"}, {"allreduce", "all_reduce"}, {"any_ordr", "any_order"}, {"synk", "sync"}}) {
    const Failure f = parse_failure("ranks 2\ncomm A = [0, 1]\nrank 0 {\n  " + typo + " A x\n}\n");
    ASSERT_TRUE(f.thrown) << typo;
    EXPECT_EQ(f.line, 4);
    EXPECT_TRUE(has(f.what, "expected a statement, found '" + typo + "'")) << f.what;
    EXPECT_TRUE(has(f.what, "\nhelp: did you mean '" + meant + "'?")) << f.what;
  }
}

TEST(ParserErrors, SeveralErrorsAreReportedInOneRun) {
  const Failure f = parse_failure(
      "ranks 2\ncomm A = [0, 1]\nrank 0 {\n  regster A x\n  alloc\n  frob\n}\n"
      "rank 1 {\n  alloc y 12 13\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.line, 4) << f.what;  // the first error is the primary one
  EXPECT_TRUE(has(f.what, ":4:3: error: expected a statement, found 'regster'")) << f.what;
  EXPECT_TRUE(has(f.what, ":5:8: error: expected a buffer name")) << f.what;
  EXPECT_TRUE(has(f.what, ":6:3: error: expected a statement")) << f.what;
  EXPECT_TRUE(has(f.what, ":9:14: error: expected end of statement")) << f.what;
  EXPECT_TRUE(has(f.what, ": 4 errors")) << f.what;
  // One error: exactly as before, no count.
  const Failure one = parse_failure("ranks 2\nrank 0 {\n  frob\n}\n");
  EXPECT_FALSE(has(one.what, "errors")) << one.what;
}

TEST(ParserErrors, MissingClosingBrace) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  alloc x\n"), 4, 1, "expected '}' closing the block");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  group {\n    alloc x\n}"), 5, 2,
                  "expected '}' closing the block");
  // A following rank header is not a statement: the block before it is not closed, and the note
  // points at its '{'.
  const Failure f = parse_failure("ranks 2\nrank 0 {\n  alloc x\nrank 1 {}\n");
  EXPECT_FAILS_AT(f, 4, 1, "expected '}' closing the block, found 'rank'");
  EXPECT_TRUE(has(f.what, ":2:8: note: the block opened here")) << f.what;
  const Failure at_end = parse_failure("ranks 2\nrank 0 {\n  any_order {\n    alloc x\n  }\n");
  EXPECT_TRUE(has(at_end.what, ":2:8: note: the block opened here")) << at_end.what;
}

TEST(ParserWarnings, AnUndeclaredBufferOneEditFromAnAllocatedOneIsLikelyATypo) {
  const model::World w = model::resolve(
      parse("ranks 2\ncomm A = [0, 1]\nrank * {\n  alloc wa\n  register A wx\n  all_reduce A other\n}\n"));
  ASSERT_EQ(w.warnings.size(), 1u);  // once for the shared body; `other` is far from `wa`
  EXPECT_EQ(w.warnings[0].loc.line, 5);
  EXPECT_TRUE(has(w.warnings[0].message, "buffer 'wx' is never allocated")) << w.warnings[0].message;
  EXPECT_TRUE(has(w.warnings[0].message, "did you mean 'wa'?")) << w.warnings[0].message;
  // A plain buffer used without alloc is the language's (LANGUAGE.md): no warning.
  EXPECT_TRUE(model::resolve(parse("ranks 2\ncomm A = [0, 1]\nrank * {\n  all_reduce A x\n}\n")).warnings.empty());
}

TEST(ParserWarnings, RanksWithoutABodyAreNamed) {
  const model::World w = model::resolve(parse("ranks 3\ncomm A = [0, 1, 2]\nrank 0 {\n  all_reduce A x\n}\n"));
  ASSERT_EQ(w.warnings.size(), 1u);
  EXPECT_EQ(w.warnings[0].loc.line, 1);
  EXPECT_TRUE(has(w.warnings[0].message, "ranks 1, 2 have no body")) << w.warnings[0].message;
  EXPECT_TRUE(model::resolve(parse("ranks 3\nrank 0 {\n}\nrank * {\n}\n")).warnings.empty());
}

TEST(ParserErrors, MissingOpeningBrace) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 alloc x\n"), 2, 8, "expected '{'");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  repeat 2 alloc x\n}\n"), 3, 12, "expected '{'");
}

TEST(ParserErrors, UnterminatedString) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nname \"abc\n"), 2, 6, "unterminated string: expected '\"'");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nname \"abc\\\""), 2, 6, "unterminated string");
}

TEST(ParserErrors, UnknownSizeUnit) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  alloc x 64kb\n}\n"), 3, 13,
                  "unknown size unit 'kb': expected KiB, MiB, GiB, KB, MB, GB");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  alloc x 4TiB\n}\n"), 3, 12, "unknown size unit 'TiB'");
}

TEST(ParserErrors, UnexpectedCharacter) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  alloc x @\n}\n"), 3, 11, "unexpected character '@': expected");
  EXPECT_FAILS_AT(parse_failure("ranks 2\n$\n"), 2, 1, "unexpected character '$'");
  EXPECT_FAILS_AT(parse_failure("ranks 2\n\t\xc3\xa9\n"), 2, 2, "unexpected character '\\xc3'");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  alloc x -5\n}\n"), 3, 11, "found '-'");
}

TEST(ParserErrors, EndOfStatementExpected) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {\n  alloc x 4KiB 8KiB\n}\n"), 3, 16, "expected end of statement");
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {} rank 1 {}\n"), 2, 11, "expected end of statement");
}

TEST(ParserErrors, TwoBodiesForOneRank) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank 0 {}\nrank 0, 1 {}\n"), 3, 1,
                  "rank 0 already has a body (at test.cmc:2:1): a rank may be named by one 'rank' header only");
  EXPECT_TRUE(has(parse_failure("ranks 4\nrank 0..2 {}\nrank 3, 1 {}\n").message, "rank 1 already has a body"));
  EXPECT_FAILS_AT(parse_failure("ranks 4\nrank 0, 2..3, 2 {}\n"), 2, 1, "a rank is named twice");
}

TEST(ParserErrors, TwoRankStarBodies) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\nrank * {}\nrank 0 {}\n\nrank * {}\n"), 5, 1,
                  "a second 'rank *' body (first at test.cmc:2:1)");
}

TEST(ParserErrors, OverlappingFamilyInstances) {
  EXPECT_FAILS_AT(parse_failure("ranks 4\ncomm dp = {[0, 1], [1, 2]}\n"), 2, 20,
                  "rank 1 appears in two instances of family 'dp': instances must be disjoint");
}

TEST(ParserErrors, CommDeclaredTwice) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = [0]\ncomm A = [1]\n"), 3, 6,
                  "communicator 'A' declared twice (first at test.cmc:2:6)");
}

TEST(ParserErrors, UnknownCommModifier) {
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = [0, 1] lazy\n"), 2, 17,
                  "expected 'blocking', 'nonblocking', 'uninit', 'mpi', 'nccl', 'serialized', 'launch_order_implicit' "
                  "or end of statement");
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = [0, 1] blocking nonblocking\n"), 2, 26, "mode given twice");
  EXPECT_FAILS_AT(parse_failure("ranks 2\ncomm A = 0, 1\n"), 2, 10, "expected a rank set");
}

TEST(ParserErrors, EitherWithoutOr) {
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  either { alloc x }\n  free x\n}\n"), 3, 21,
                  "expected 'or' and a second alternative after 'either { ... }', found end of line");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  either { alloc x } }\n"), 3, 22, "expected 'or'");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  either { alloc x } or\n}\n"), 4, 1, "expected '{'");
}

TEST(ParserErrors, DuplicateArgument) {
  EXPECT_FAILS_AT(parse_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  all_reduce A x count=1 count=2\n}\n"), 4, 26,
                  "argument 'count' given twice");
  Failure f = parse_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  send A 0 x on s1 dtype=int8 on s2\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.line, 4);
  EXPECT_EQ(f.column, 31);
  EXPECT_TRUE(has(f.message, "argument 'on' given twice")) << f.message;
}

TEST(ParserErrors, UnknownArgument) {
  EXPECT_FAILS_AT(parse_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  all_reduce A x size=4\n}\n"), 4, 18,
                  "unknown argument 'size': expected count=N, root=R, dtype=NAME, op=NAME, call=NAME, config=NAME or "
                  "on STREAM");
  EXPECT_FAILS_AT(parse_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  all_reduce A x count 4\n}\n"), 4, 24,
                  "expected '=' after 'count'");
  EXPECT_FAILS_AT(parse_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  all_reduce A x count=many\n}\n"), 4, 24,
                  "expected an element count");
}

TEST(ParserErrors, MissingOperands) {
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  register A\n}\n"), 3, 13,
                  "expected a buffer name, found end of line");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  split P C\n}\n"), 3, 11, "expected '->'");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  send A x\n}\n"), 3, 10, "expected the peer's world rank");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  sync\n}\n"), 3, 7, "expected a stream name or 'device'");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  when rank [0] { }\n}\n"), 3, 13, "expected 'in'");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  thread { }\n}\n"), 3, 10, "expected a thread name");
}

TEST(ParserErrors, NumbersTooLarge) {
  EXPECT_FAILS_AT(parse_failure("ranks 99999999999999999999999\n"), 1, 7, "number too large");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  repeat 1000000000 { }\n}\n"), 3, 10,
                  "repeat count too large (at most 1000000)");
  EXPECT_FAILS_AT(parse_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  all_reduce A x count=9223372036854775808\n}\n"), 4,
                  24, "integer too large");
  EXPECT_FAILS_AT(parse_failure("ranks 1\nrank 0 {\n  alloc x 18446744073709551615GiB\n}\n"), 3, 11, "size too large");
}

TEST(ParserErrors, NestingTooDeep) {
  std::string text = "ranks 1\nrank 0 ";
  text += std::string(300, '{');
  Failure f = parse_failure(text);
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.line, 2);
  EXPECT_EQ(f.column, 8 + 201);
  EXPECT_TRUE(has(f.message, "nested too deeply")) << f.message;
}

TEST(ParserErrors, ThreadNestedInBlock) {
  EXPECT_FAILS_AT(load_failure("ranks 1\nrank 0 {\n  any_order {\n    thread t { alloc x }\n  }\n}\n"), 4, 5,
                  "'thread' must stand directly inside a rank body");
  EXPECT_FAILS_AT(load_failure("ranks 1\nrank 0 {\n  thread t {\n    thread u { }\n  }\n}\n"), 4, 5,
                  "'thread' must stand directly inside a rank body");
  EXPECT_FAILS_AT(load_failure("ranks 1\nrank 0 {\n  repeat 2 { thread t { } }\n}\n"), 3, 14,
                  "'thread' must stand directly inside a rank body");
}

TEST(ParserErrors, ThreadNestedInBlockThatNoRankRuns) {
  // Placement is a property of the text: it is checked even where no rank executes the block.
  EXPECT_FAILS_AT(load_failure("ranks 2\nrank 0 {\n  repeat 0 { thread t { } }\n}\n"), 3, 14,
                  "'thread' must stand directly inside a rank body");
  EXPECT_FAILS_AT(load_failure("ranks 2\nrank 0 {\n  when rank in [1] { group { thread t { } } }\n}\n"), 3, 30,
                  "'thread' must stand directly inside a rank body");
  EXPECT_FAILS_AT(load_failure("ranks 1\nrank 0 { }\nrank * {\n  maybe { thread t { } }\n}\n"), 4, 11,
                  "'thread' must stand directly inside a rank body");
}

TEST(ParserErrors, UnknownCommName) {
  EXPECT_FAILS_AT(load_failure("ranks 2\ncomm A = [0, 1]\nrank 0 {\n  register B x\n}\n"), 4, 12,
                  "unknown communicator 'B': expected one of the declared comms (A)");
  EXPECT_FAILS_AT(load_failure("ranks 2\nrank * {\n  barrier W\n}\n"), 3, 11,
                  "unknown communicator 'W': expected one of the declared comms (none declared)");
  EXPECT_FAILS_AT(load_failure("ranks 2\ncomm P = [0, 1]\nrank * {\n  split P -> Q\n}\n"), 4, 14,
                  "unknown communicator 'Q'");
}

TEST(ParserErrors, UnknownCommNameWhereNoRankRuns) {
  // A typo is an error even in a body that every rank overrides, or in a `when` for other ranks.
  EXPECT_FAILS_AT(load_failure("ranks 1\ncomm A = [0]\nrank 0 { }\nrank * {\n  all_reduce AA x\n}\n"), 5, 14,
                  "unknown communicator 'AA'");
  EXPECT_FAILS_AT(load_failure("ranks 2\ncomm A = [0, 1]\nrank 0 {\n  when rank in [1] { barrier B }\n}\n"), 4, 30,
                  "unknown communicator 'B'");
}

TEST(ParserErrors, UnknownDtype) {
  EXPECT_FAILS_AT(load_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  all_reduce A x dtype=float128\n}\n"), 4, 3,
                  "unknown dtype 'float128': expected float32");
  EXPECT_FAILS_AT(load_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  all_reduce A x op=xor\n}\n"), 4, 3,
                  "unknown op 'xor': expected sum, prod, max, min, avg or null");
}

TEST(ParserErrors, ThreadNames) {
  EXPECT_FAILS_AT(load_failure("ranks 1\nrank 0 {\n  thread main { }\n}\n"), 3, 3, "choose another thread name");
  Failure f = load_failure("ranks 1\nrank 0 {\n  thread t { }\n  thread t { }\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.line, 4);
  EXPECT_EQ(f.column, 3);
  EXPECT_TRUE(has(f.message, "thread 't' declared twice")) << f.message;
}

TEST(ParserErrors, TooManyAnyOrderChildren) {
  std::string body;
  for (int i = 0; i < 65; ++i) body += "alloc b" + std::to_string(i) + "; ";
  Failure f = load_failure("ranks 1\nrank 0 {\n  any_order { " + body + "}\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.line, 3);
  EXPECT_EQ(f.column, 3);
  EXPECT_TRUE(has(f.message, "more than 64 children")) << f.message;
}

TEST(ParserErrors, SyncInsideGroup) {
  Failure f = load_failure("ranks 1\ncomm A = [0]\nrank 0 {\n  group {\n    all_reduce A x\n    sync main\n  }\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.line, 6);
  EXPECT_EQ(f.column, 5);
  EXPECT_TRUE(has(f.message, "cannot stand inside 'group'")) << f.message;
}

TEST(ParserErrors, ScenarioTooLargeAfterUnrolling) {
  EXPECT_FAILS_AT(load_failure("ranks 1\nrank 0 {\n  repeat 1000000 {\n    repeat 1000000 { }\n  }\n}\n"), 4, 5,
                  "'repeat' iterations over all ranks: expected a smaller scenario");
  EXPECT_FAILS_AT(load_failure("ranks 2048\ncomm A = all\nrank * {\n  repeat 1024 { all_reduce A x }\n}\n"), 4, 17,
                  "more than 1048576 calls over all ranks after unrolling 'repeat': expected a smaller scenario");
  // The largest repeat the parser takes still resolves.
  model::World w = world_from("ranks 1\ncomm A = all\nrank * {\n  repeat 1000000 { all_reduce A x }\n}\n");
  EXPECT_EQ(w.calls.size(), 1000000u);
}

TEST(ParserErrors, WhatHasFileLineColumnAndCaret) {
  Failure f = parse_failure("ranks 2\nrank 0 {\n  alloc x 64kb\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.file, "test.cmc");
  EXPECT_TRUE(has(f.what, "test.cmc:3:13: error: unknown size unit 'kb'")) << f.what;
  EXPECT_TRUE(has(f.what, "\n    alloc x 64kb\n")) << f.what;
  EXPECT_TRUE(has(f.what, "\n              ^")) << f.what;  // two spaces of indent, 12 to reach column 13
  // The caret line is the last line and points below the offending text.
  const std::string caret = f.what.substr(f.what.rfind('\n') + 1);
  EXPECT_EQ(caret, std::string(2 + 12, ' ') + "^");

  Failure r = load_failure("ranks 2\ncomm A = [0, 1]\nrank 0 {\n\tregister B x\n}\n");
  ASSERT_TRUE(r.thrown);
  EXPECT_TRUE(has(r.what, "test.cmc:4:11: error: unknown communicator 'B'")) << r.what;
  EXPECT_TRUE(has(r.what, "\n  \tregister B x\n  \t         ^")) << r.what;  // tabs kept so the caret lines up
}

TEST(ParserErrors, EveryErrorOfAFileNamesItsPath) {
  try {
    (void)model::parse_string("ranks 2\nexpect hang\n", "dir/scenario.cmc");
    FAIL() << "no InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.loc().file_name(), "dir/scenario.cmc");
    EXPECT_EQ(e.loc().str(), "dir/scenario.cmc:2:8");
    EXPECT_EQ(std::string(e.what()).rfind("dir/scenario.cmc:2:8: error: ", 0), 0u) << e.what();
  }
}

// ------------------------------------------------------------------------------------------------
// Robustness: any input either loads or throws InputError with a location inside the file.

struct Outcome {
  int ok = 0;
  int input_errors = 0;
};

void load_or_input_error(const std::string& text, Outcome& outcome) {
  try {
    model::World w = model::resolve(model::parse_string(text, "fuzz.cmc"));
    EXPECT_EQ(static_cast<int>(w.programs.size()), w.ranks);
    ++outcome.ok;
  } catch (const InputError& e) {
    ++outcome.input_errors;
    const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
    EXPECT_GE(e.loc().line, 1) << e.what();
    EXPECT_LE(e.loc().line, lines) << e.what();
    EXPECT_GE(e.loc().column, 1) << e.what();
    EXPECT_NE(std::string(e.what()).find("fuzz.cmc:"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "exception other than InputError: " << e.what() << "\ninput:\n" << text;
  } catch (...) {
    ADD_FAILURE() << "non-standard exception\ninput:\n" << text;
  }
}

const std::vector<std::string>& seeds() {
  static const std::vector<std::string> s = [] {
    std::vector<std::string> v = {
        "# Two overlapping groups\nranks 4\nname \"pool hook\"\nexpect deadlock\ncomm dp  = {[0, 1], [2, 3]}\n"
        "comm ep  = {[0, 2], [1, 3]}\nrank * {\n  alloc pool 64MiB\n  any_order {\n    register dp pool\n"
        "    register ep pool\n  }\n  all_reduce dp pool\n  sync main\n}\n",
        "ranks 2\nname \"split\"\nexpect deadlock\nset profile = mpi\nset runtime_connect = off\ncomm P = [0, 1]\n"
        "comm X = [0] uninit\ncomm N = [0, 1] nonblocking\nrank 0 {\n  split P -> X\n  init X\n  destroy X\n}\n"
        "rank 1 {\n  split P -> none; finalize N; abort N\n}\n",
        "ranks 8\nset comm_mode = nonblocking\nset stream_progress = serialized\nset mpi_progress = weak\ncomm A = "
        "all\n"
        "comm B = [0..3, 5] blocking\ncomm dp = {[0, 1], [2..3], [4, 5, 6, 7]}\nrank 0, 2 {\n"
        "  cuda_malloc t 4096; cuda_free t\n  register_local A t; deregister_local A t\n"
        "  all_gather A in -> out count=16 dtype=bf16 on s1\n  reduce dp x root=1 op=max\n"
        "  broadcast A x root=0\n  reduce_scatter A x -> y\n  all_to_all A x\n  send A 1 x count=4\n"
        "  recv A 3 y on side\n  barrier A\n  sync side\n  sync device\n}\nrank 4..5 {\n  group {\n"
        "    all_reduce A x\n    all_reduce dp y on s2\n  }\n}\nrank * {\n  repeat 3 { all_reduce A x }\n}\n",
        "ranks 4\ncomm A = [0, 1, 2, 3]\nrank * {\n  alloc w 1GiB\n  register A w default\n  either {\n"
        "    all_reduce A w\n  } or {\n    maybe { deregister A w }\n  }\n  or { { free w } }\n"
        "  when rank in [1, 3] {\n    thread t {\n      alloc q 3KB\n      free q\n    }\n  }\n"
        "  thread u { sync main }\n  when rank in all { free w }\n}\n",
    };
    // The calibration set, where present, is the best source of realistic text.
    for (const std::string& dir : {gpu_calibration_dir(), mpi_calibration_dir()}) {
      std::error_code ec;
      if (!std::filesystem::is_directory(dir, ec)) continue;
      for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
        if (entry.path().extension() != ".cmc") continue;
        std::ifstream in(entry.path());
        std::stringstream buf;
        buf << in.rdbuf();
        v.push_back(buf.str());
      }
    }
    return v;
  }();
  return s;
}

std::string mutate(const std::string& seed, std::mt19937& rng) {
  static const std::string alphabet = "{}[]=,;.-><*#\"\\\n\t 0123456789azAZ_KiBMG";
  std::string out = seed;
  const int edits = 1 + static_cast<int>(rng() % 6);
  for (int e = 0; e < edits; ++e) {
    if (out.empty()) {
      out.push_back(alphabet[rng() % alphabet.size()]);
      continue;
    }
    const size_t pos = rng() % out.size();
    switch (rng() % 6) {
      case 0:  // delete a few characters
        out.erase(pos, 1 + rng() % 4);
        break;
      case 1:  // insert a character of the language
        out.insert(pos, 1, alphabet[rng() % alphabet.size()]);
        break;
      case 2:  // duplicate a character
        out.insert(pos, 1, out[pos]);
        break;
      case 3:  // insert a random byte
        out.insert(pos, 1, static_cast<char>(rng() & 0xff));
        break;
      case 4: {  // duplicate a span (repeats lines, braces, numbers)
        const size_t len = 1 + rng() % 40;
        out.insert(pos, out.substr(pos, len));
        break;
      }
      default:  // replace a character
        out[pos] = alphabet[rng() % alphabet.size()];
        break;
    }
  }
  return out;
}

TEST(ParserRobustness, RandomBytes) {
  std::mt19937 rng(12345);
  Outcome outcome;
  for (int i = 0; i < 1500; ++i) {
    std::string text;
    const size_t len = rng() % 200;
    for (size_t k = 0; k < len; ++k) text.push_back(static_cast<char>(rng() & 0xff));
    if (i % 2) text = "ranks 3\n" + text;  // get past the first line more often
    load_or_input_error(text, outcome);
  }
  EXPECT_EQ(outcome.ok + outcome.input_errors, 1500);
  EXPECT_GT(outcome.input_errors, 0);
}

TEST(ParserRobustness, RandomTokenSoup) {
  static const std::vector<std::string> words = {
      "ranks",      "rank",
      "comm",       "set",
      "expect",     "name",
      "{",          "}",
      "[",          "]",
      "=",          ",",
      ";",          "\n",
      "..",         "->",
      "*",          "all",
      "0",          "1",
      "2",          "3",
      "7",          "4MiB",
      "alloc",      "free",
      "register",   "deregister",
      "all_reduce", "send",
      "recv",       "split",
      "none",       "init",
      "sync",       "device",
      "main",       "group",
      "any_order",  "either",
      "or",         "maybe",
      "repeat",     "thread",
      "when",       "in",
      "count=",     "root=",
      "dtype=",     "op=",
      "on",         "A",
      "dp",         "x",
      "uninit",     "nonblocking",
      "profile",    "mpi",
      "\"t\"",      "deadlock",
      "#c\n",       "{[0, 1], [2, 3]}",
      "[0, 1]",
  };
  std::mt19937 rng(777);
  Outcome outcome;
  for (int i = 0; i < 1500; ++i) {
    std::string text = "ranks 4\ncomm A = [0, 1]\ncomm dp = {[0, 1], [2, 3]}\nrank * {\n";
    const size_t n = rng() % 40;
    for (size_t k = 0; k < n; ++k) text += words[rng() % words.size()] + " ";
    if (rng() % 2) text += "\n}\n";
    load_or_input_error(text, outcome);
  }
  EXPECT_EQ(outcome.ok + outcome.input_errors, 1500);
  EXPECT_GT(outcome.ok, 0);
  EXPECT_GT(outcome.input_errors, 0);
}

TEST(ParserRobustness, MutatedScenarios) {
  const auto& s = seeds();
  for (const auto& seed : s) {  // every seed loads as written
    Outcome outcome;
    load_or_input_error(seed, outcome);
    EXPECT_EQ(outcome.ok, 1) << seed;
  }
  std::mt19937 rng(20261129);
  Outcome outcome;
  const int runs = 4000;
  for (int i = 0; i < runs; ++i) load_or_input_error(mutate(s[static_cast<size_t>(i) % s.size()], rng), outcome);
  EXPECT_EQ(outcome.ok + outcome.input_errors, runs);
  EXPECT_GT(outcome.ok, 0);
  EXPECT_GT(outcome.input_errors, 0);
}

TEST(ParserRobustness, DeepNesting) {
  Outcome outcome;
  const std::string open(10000, '{');
  const std::string close(10000, '}');
  load_or_input_error("ranks 1\nrank 0 " + open, outcome);
  load_or_input_error("ranks 1\nrank 0 " + open + close, outcome);
  load_or_input_error("ranks 1\nrank 0 {\n  " + open + "alloc x" + close + "\n}\n", outcome);
  load_or_input_error("ranks 1\n" + open, outcome);
  load_or_input_error("ranks 4\ncomm dp = " + open + close, outcome);
  load_or_input_error("ranks 4\ncomm A = " + std::string(10000, '['), outcome);
  std::string nested;
  for (int i = 0; i < 10000; ++i)
    nested += (i % 4 == 0) ? "any_order {" : (i % 4 == 1) ? "maybe {" : (i % 4 == 2) ? "group {" : "repeat 2 {";
  load_or_input_error("ranks 1\nrank 0 {\n" + nested + close + "\n}\n", outcome);
  std::string eithers;
  for (int i = 0; i < 10000; ++i) eithers += "either { ";
  load_or_input_error("ranks 1\nrank 0 {\n" + eithers + "\n}\n", outcome);
  EXPECT_EQ(outcome.ok, 0);
  EXPECT_EQ(outcome.input_errors, 8);

  // Nesting within the limit loads.
  std::string ok_nesting = "ranks 1\nrank 0 {\n";
  for (int i = 0; i < 150; ++i) ok_nesting += "{ ";
  ok_nesting += "alloc x";
  for (int i = 0; i < 150; ++i) ok_nesting += " }";
  ok_nesting += "\n}\n";
  model::World w = world_from(ok_nesting);
  EXPECT_EQ(w.calls.size(), 1u);
}

TEST(ParserRobustness, VeryLongNamesAndLines) {
  const std::string name(1 << 20, 'n');
  model::World w = world_from("ranks 2\ncomm " + name + " = [0, 1]\nrank * {\n  all_reduce " + name + " " + name +
                              ".buf on " + name + "\n}\n");
  ASSERT_EQ(w.comms.size(), 1u);
  EXPECT_EQ(w.comms[0].name, name);
  ASSERT_EQ(w.calls.size(), 2u);
  EXPECT_EQ(w.buffers[static_cast<size_t>(w.calls[0].buffer)], name + ".buf");
  Failure f = parse_failure("ranks 2\nrank 0 {\n  " + name + " x\n}\n");
  ASSERT_TRUE(f.thrown);
  EXPECT_EQ(f.line, 3);
  EXPECT_EQ(f.column, 3);
  Failure g = parse_failure("ranks 2\nrank 0 {\n  alloc " + name + " @\n}\n");
  ASSERT_TRUE(g.thrown);
  EXPECT_EQ(g.column, 3 + 6 + (1 << 20) + 1);
}

TEST(ParserRobustness, ManyNamesLexInLinearTime) {
  // 150k names in 11 MB (mostly comments), none followed by '..': lexing a name must not scan the rest
  // of the file (it once did, which made this input take minutes).
  const std::string line = "set profile = nccl  # " + std::string(200, 'x') + "\n";
  std::string text = "ranks 1\n";
  for (int i = 0; i < 50000; ++i) text += line;
  text += "set profile = mpi\n";
  const auto start = std::chrono::steady_clock::now();
  Scenario sc = parse(text);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(sc.knobs.profile, Profile::Mpi);
  EXPECT_LT(std::chrono::duration_cast<std::chrono::milliseconds>(elapsed).count(), 10000);
}

TEST(ParserRobustness, HugeNumbers) {
  Outcome outcome;
  for (const std::string& text : {
           std::string("ranks 18446744073709551615\n"),
           std::string("ranks 18446744073709551616\n"),
           std::string("ranks 2\nrank 4294967296 { }\n"),
           std::string("ranks 2\nrank 0..18446744073709551615 { }\n"),
           std::string("ranks 2\ncomm A = [0, 1]\nrank 0 { all_reduce A x count=18446744073709551615 }\n"),
           std::string("ranks 2\ncomm A = [0, 1]\nrank 0 { send A 9223372036854775807 x }\n"),
           std::string("ranks 2\ncomm A = [0, 1]\nrank 0 { reduce A x root=2147483648 }\n"),
           std::string("ranks 2\nrank 0 { alloc x 17179869184GiB }\n"),
           std::string("ranks 2\nrank 0 { alloc x 99999999999999999999999999999 }\n"),
           std::string("ranks 2\nrank 0 { repeat 1000000000 { alloc x } }\n"),
           std::string("ranks 2\nrank 0 { repeat 9223372036854775807 { } }\n"),
           std::string("ranks 2\nrank 0 { repeat 18446744073709551615 { } }\n"),
       })
    load_or_input_error(text, outcome);
  EXPECT_EQ(outcome.ok, 0);
  EXPECT_EQ(outcome.input_errors, 12);

  // The largest values that are allowed still load.
  model::World w = world_from(
      "ranks 2\ncomm A = [0, 1]\nrank 0 { all_reduce A x count=9223372036854775807 }\n"
      "rank 1 { alloc x 16GiB; repeat 1000000 { } }\n");
  ASSERT_EQ(w.calls.size(), 2u);
  EXPECT_EQ(w.calls[0].count, INT64_MAX);
  EXPECT_EQ(w.calls[1].size, 16ull << 30);
}

TEST(ParserRobustness, UnrollingIsBounded) {
  // Each repeat is within the parser's limit, but together they would unroll 10^12 times.
  Outcome outcome;
  load_or_input_error("ranks 1\nrank 0 {\n  repeat 1000000 {\n    repeat 1000000 { }\n  }\n}\n", outcome);
  std::string doubling = "ranks 1\nrank 0 {\n";
  for (int i = 0; i < 60; ++i) doubling += "repeat 2 { ";
  doubling += std::string(60, '}') + "\n}\n";
  load_or_input_error(doubling, outcome);
  // The largest world times a million iterations.
  load_or_input_error("ranks 262144\nrank * { repeat 1000000 { } }\n", outcome);
  EXPECT_EQ(outcome.ok, 0);
  EXPECT_EQ(outcome.input_errors, 3);
}

TEST(ParserRobustness, LargestWorldLoads) {
  model::World w =
      world_from("ranks " + std::to_string(model::kMaxWorldRanks) + "\ncomm A = all\nrank * { all_reduce A x }\n");
  EXPECT_EQ(w.programs.size(), size_t{model::kMaxWorldRanks});
  EXPECT_EQ(w.calls.size(), size_t{model::kMaxWorldRanks});
}

}  // namespace
}  // namespace collmc::testing
