// The data-only pickle decoder: what torch and Python write decodes; anything that would import or
// call is refused with the opcode and its offset; truncated and hostile input is an error, never a crash.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "collmc/traces/pickle.h"
#include "collmc/traces/trace.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

using traces::decode_pickle;
using traces::TraceInputError;

// A tiny pickle writer for hand-made cases.
struct P {
  std::string b = std::string("\x80\x02", 2);
  P& op(char c) {
    b += c;
    return *this;
  }
  P& opb(unsigned v) { return op(static_cast<char>(v)); }
  P& u8(unsigned v) { return op(static_cast<char>(v & 0xff)); }
  P& u32(uint32_t v) {
    for (int k = 0; k < 4; ++k) u8((v >> (8 * k)) & 0xff);
    return *this;
  }
  P& str(const std::string& s) {
    op('X').u32(static_cast<uint32_t>(s.size()));
    b += s;
    return *this;
  }
  P& int1(unsigned v) { return op('K').u8(v); }
  P& global(const std::string& module, const std::string& name) {
    op('c');
    b += module + "\n" + name + "\n";
    return *this;
  }
  std::string stop() { return b + "."; }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string error_of(const std::string& bytes) {
  try {
    decode_pickle("t.pkl", bytes);
  } catch (const TraceInputError& e) {
    return e.what();
  }
  return "";
}

TEST(TracePickle, DecodesPythonPicklesOfProtocolsTwoToFive) {
  const std::string dir = source_dir() + "/tests/fixtures/traces/synthetic/";
  // Protocol 2 (rank 0) and 5 (rank 1), written by Python's pickle.dumps.
  auto r0 = decode_pickle("r0", read_bytes(dir + "fr_hang/nccl_trace_rank_0"));
  auto r1 = decode_pickle("r1", read_bytes(dir + "fr_hang/nccl_trace_rank_1"));
  EXPECT_EQ(r0["version"], "2.10");
  EXPECT_EQ(r0["pg_config"]["0"]["ranks"], "[0, 1]");
  ASSERT_EQ(r0["entries"].size(), 2u);
  EXPECT_EQ(r0["entries"][1]["state"], "started");
  EXPECT_EQ(r0["entries"][1]["process_group"], nlohmann::json::array({"0", "default_pg"}));  // a tuple
  EXPECT_EQ(r0["entries"][0]["time_created_ns"], 1700000000000000000LL);                     // LONG1
  EXPECT_EQ(r0["entries"][0]["duration_ms"], 0.5);                                           // BINFLOAT
  EXPECT_TRUE(r0["entries"][1]["time_discovered_completed_ns"].is_null());
  EXPECT_EQ(r0["entries"][0]["retired"], true);
  ASSERT_EQ(r1["entries"].size(), 1u);
  EXPECT_EQ(r1["entries"][0]["input_sizes"], nlohmann::json::parse("[[1024]]"));
}

TEST(TracePickle, TorchTypeTagsAreUnwrappedWithoutCallingAnything) {
  // What torch's C++ pickler writes with tagged containers: restore_type_tag(dict, "Dict[str, int]").
  P p;
  p.global("torch.jit._pickle", "restore_type_tag").op('q').u8(0);
  p.op('}').op('(').str("k").int1(7).op('u');
  p.str("Dict[str, int]").opb(0x86).op('R');
  auto j = decode_pickle("t", p.stop());
  EXPECT_EQ(j, nlohmann::json::parse(R"({"k": 7})"));
}

TEST(TracePickle, RefusesEveryOpcodeThatImportsOrCalls) {
  EXPECT_NE(
      error_of(P().global("os", "system").stop()).find("t.pkl: byte 2: pickle: opcode GLOBAL (0x63) names os.system"),
      std::string::npos)
      << error_of(P().global("os", "system").stop());
  // STACK_GLOBAL with builtins.eval.
  std::string sg = P().str("builtins").str("eval").opb(0x93).stop();
  EXPECT_NE(error_of(sg).find("builtins.eval"), std::string::npos);
  // REDUCE of something that is not an identity wrapper, BUILD, INST, OBJ, NEWOBJ, PERSID, EXT1.
  struct Case {
    std::string bytes;
    const char* name;
  };
  std::vector<Case> cases = {
      {P().op('N').op(')').op('R').stop(), "REDUCE"},
      {P().op('}').op('}').op('b').stop(), "BUILD"},
      {P().op('(').op('i').stop(), "INST"},
      {P().op('(').op('o').stop(), "OBJ"},
      {P().op('N').op(')').opb(0x81).stop(), "NEWOBJ"},
      {P().op('P').stop(), "PERSID"},
      {P().op('N').op('Q').stop(), "BINPERSID"},
      {P().opb(0x82).u8(1).stop(), "EXT1"},
      {P().opb(0x92).stop(), "NEWOBJ_EX"},
  };
  for (const auto& c : cases) {
    std::string e = error_of(c.bytes);
    EXPECT_NE(e.find(c.name), std::string::npos) << c.name << ": " << e;
    EXPECT_NE(e.find("byte "), std::string::npos) << e;
  }
}

TEST(TracePickle, EveryTruncationIsAnErrorNotACrash) {
  std::string good = read_bytes(source_dir() + "/tests/fixtures/traces/synthetic/fr_p2p/fr_0");
  ASSERT_NO_THROW(decode_pickle("t", good));
  for (size_t n = 0; n + 1 < good.size(); ++n)
    EXPECT_THROW(decode_pickle("t", good.substr(0, n)), TraceInputError) << n;
}

TEST(TracePickle, HostileStructuresHitALimit) {
  // A list that contains itself through the memo.
  std::string self = P().op(']').op('q').u8(0).op('h').u8(0).op('a').stop();
  EXPECT_NE(error_of(self).find("nesting deeper"), std::string::npos) << error_of(self);
  // Doubling through the memo: 40 levels of [x, x] would be 2^40 values once expanded.
  P p;
  p.op('N');
  for (int i = 0; i < 40; ++i) p.op('q').u8(static_cast<unsigned>(i)).op('h').u8(static_cast<unsigned>(i)).opb(0x86);
  EXPECT_NE(error_of(p.stop()).find("too many parts"), std::string::npos) << error_of(p.stop());
  // A memo index never stored, an unknown opcode, a string longer than the file, bad UTF-8.
  EXPECT_NE(error_of(P().op('h').u8(9).stop()).find("memo index 9 was never stored"), std::string::npos);
  EXPECT_NE(error_of(P().opb(0xff).stop()).find("unknown opcode 0xff"), std::string::npos);
  EXPECT_NE(error_of(P().op('X').u32(1000).stop()).find("truncated"), std::string::npos);
  EXPECT_NE(error_of(P().op('X').u32(2).op('\xc3').op('\x28').stop()).find("UTF-8"), std::string::npos);
  // Two values left at STOP, an empty file, a newer protocol.
  EXPECT_NE(error_of(P().op('N').op('N').stop()).find("exactly one value"), std::string::npos);
  EXPECT_NE(error_of("").find("empty"), std::string::npos);
  EXPECT_NE(error_of(std::string("\x80\x09N.", 4)).find("protocol 9"), std::string::npos);
}

TEST(TracePickle, IntegersOfEveryWidth) {
  // BININT (negative), BININT2, LONG1 of 9 bytes holding 2^63 (unsigned), LONG1 of -1.
  P p;
  p.op('(').op('J').u32(0xfffffffe).op('M').u8(0x34).u8(0x12);
  p.opb(0x8a).u8(9).u32(0).u32(0x80000000).u8(0);
  p.opb(0x8a).u8(1).u8(0xff).op('l');
  auto j = decode_pickle("t", p.stop());
  ASSERT_EQ(j.size(), 4u);
  EXPECT_EQ(j[0], -2);
  EXPECT_EQ(j[1], 0x1234);
  EXPECT_EQ(j[2].get<uint64_t>(), 1ull << 63);
  EXPECT_EQ(j[3], -1);
  // 17 significant bytes do not fit.
  P big;
  big.opb(0x8a).u8(17);
  for (int i = 0; i < 17; ++i) big.u8(0x11);
  EXPECT_NE(error_of(big.stop()).find("does not fit in 64 bits"), std::string::npos);
}

}  // namespace
}  // namespace collmc::testing
