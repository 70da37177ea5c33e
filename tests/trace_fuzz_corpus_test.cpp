// Every file of the kept fuzz corpora (fuzz/corpus/<target>/) goes through its importer: either a
// trace whose scenario parses, or a TraceInputError; never a crash or another exception. Under the
// ASan+UBSan build of scripts/test.sh this replays the fuzzing in CI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collmc/model/parser.h"
#include "collmc/traces/open_orders.h"
#include "collmc/traces/pickle.h"
#include "collmc/traces/recorder_reader.h"
#include "collmc/traces/torch_shim_reader.h"
#include "collmc/traces/trace.h"
#include "test_support.h"

namespace collmc::testing {
namespace {

namespace fs = std::filesystem;
using traces::TraceInputError;

std::vector<std::pair<std::string, std::string>> corpus(const std::string& target) {
  std::vector<std::pair<std::string, std::string>> out;
  fs::path dir = fs::path(source_dir()) / "fuzz" / "corpus" / target;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::ifstream in(e.path(), std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    out.emplace_back(e.path().filename().string(), s.str());
  }
  return out;
}

// Runs `read` on every corpus file; returns how many gave a trace (the rest gave TraceInputError).
template <typename Read>
size_t replay(const std::string& target, Read read) {
  auto files = corpus(target);
  EXPECT_FALSE(files.empty()) << target;
  size_t accepted = 0;
  for (const auto& [name, bytes] : files) {
    try {
      if (read(bytes)) ++accepted;
    } catch (const TraceInputError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << target << "/" << name << ": " << e.what();
    }
  }
  return accepted;
}

bool scenario_parses(const traces::Trace& t) {
  std::string text = traces::emit_scenario(t);
  (void)traces::summarize(t);
  model::parse_string(text, "<emitted>");  // an InputError here fails the test through `replay`
  // With every kind of order opened (fuzz_check.h does the same).
  traces::OpenOrdersOptions all;
  for (auto kind : traces::all_open_kinds()) all.kinds.insert(kind);
  auto opened = traces::open_orders(t, all);
  (void)traces::open_orders_summary(opened);
  model::parse_string(traces::emit_scenario(opened.trace), "<opened>");
  return true;
}

TEST(TraceFuzzCorpus, PickleDecoder) {
  EXPECT_GT(replay("pickle", [](const std::string& b) { return !traces::decode_pickle("c", b).is_discarded(); }), 0u);
}

TEST(TraceFuzzCorpus, FlightRecorderReader) {
  EXPECT_GT(replay("flight_recorder",
                   [](const std::string& b) {
                     return scenario_parses(traces::read_flight_recorder_buffer("nccl_trace_rank_0", b));
                   }),
            0u);
}

TEST(TraceFuzzCorpus, NcclLogReader) {
  EXPECT_GT(replay("nccl_log",
                   [](const std::string& b) { return scenario_parses(traces::read_nccl_log_buffer("nccl.log", b)); }),
            0u);
}

TEST(TraceFuzzCorpus, RecorderReader) {
  // As fuzz_recorder splits its input: two processes' files at the first blank line.
  EXPECT_GT(replay("recorder",
                   [](const std::string& b) {
                     std::vector<std::pair<std::string, std::string>> files;
                     size_t cut = b.find("\n\n");
                     if (cut == std::string::npos) {
                       files.emplace_back("p0.jsonl", b);
                     } else {
                       files.emplace_back("p0.jsonl", b.substr(0, cut + 1));
                       files.emplace_back("p1.jsonl", b.substr(cut + 2));
                     }
                     return scenario_parses(traces::read_recorder_buffers(files));
                   }),
            0u);
}

TEST(TraceFuzzCorpus, TorchShimReader) {
  // As fuzz_torch_shim splits its input: two files at the first blank line, each read as its first line says.
  for (bool full : {true, false})
    EXPECT_GT(replay("torch_shim",
                     [full](const std::string& b) {
                       std::vector<std::pair<std::string, std::string>> files;
                       const size_t cut = b.find("\n\n");
                       files.emplace_back("collmc-trace.h.1.torch.jsonl",
                                          b.substr(0, cut == std::string::npos ? b.size() : cut + 1));
                       if (cut != std::string::npos) files.emplace_back("collmc-trace.h.1.jsonl", b.substr(cut + 2));
                       return scenario_parses(traces::read_torch_shim_buffers(files, full));
                     }),
              0u);
}

}  // namespace
}  // namespace collmc::testing
