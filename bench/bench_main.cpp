// Benchmarks on scalable families: prints states, time, states per second and memory, with and
// without the partial-order reduction.
// Usage: collmc_bench [--quick] [--limit-states N] [--limit-seconds S] [--family PREFIX] [--max-world W]
//
// Scale families (issue 13), run with the reduction only (and without it up to W = 8):
// - megatron-fsdp-sorted-scale / -per-rank-scale: the README layout (TP 2, CP 2, EP 4, 2 optimizer
//   instances, late segments, collectives) from W = 64 to W = 16384; sorted is safe, per-rank order
//   deadlocks.
// - megatron-fsdp-per-rank-nb: per-rank order on nonblocking comms (cross-ordered registrations
//   complete: safe).
// - grid-nb: W = n x n ranks, nonblocking row and column comms, every rank registering R segments,
//   each on its row and column comm in any order (safe); grid-nb-crossed: all 2R registrations in one
//   any_order (a deadlock for R >= 2: see grid_scenario).
// - alloc-then-register: every rank allocates K buffers in any order, then registers them (safe).
// - any-order-streams: K all_reduces on K comms and K streams in any order, runtime connect off (safe).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "collmc/checker/check.h"
#include "collmc/gen/generators.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"

namespace {

using collmc::checker::SearchOptions;

struct Case {
  std::string family;
  std::string size;
  std::string text;
  bool without_reduction = true;  // also run with --no-reduction
};

std::string with_knob(const std::string& text, const std::string& knob) {
  // after the `ranks` line, where knobs belong
  const size_t at = text.find('\n', text.find("\nranks ") + 1);
  return text.substr(0, at + 1) + knob + "\n" + text.substr(at + 1);
}

// W = n x n ranks with nonblocking row and column comms. `crossed`: every rank registers R segments
// on both in one any_order, which deadlocks in the model for R >= 2 (a thread's second call on a
// nonblocking comm waits in its guard for the first to complete, so ranks that started on different
// comms wait for each other). Otherwise segment by segment, row and column in any order: a rank's
// second call of a segment never waits, and its first waits only for the previous segment, which every
// member issues without waiting: safe.
std::string grid_scenario(int n, int segments, bool crossed) {
  std::string rows;
  std::string cols;
  for (int i = 0; i < n; ++i) {
    std::string row;
    std::string col;
    for (int j = 0; j < n; ++j) {
      row += (j ? ", " : "") + std::to_string(i * n + j);
      col += (j ? ", " : "") + std::to_string(j * n + i);
    }
    rows += (i ? ", " : "") + ("[" + row + "]");
    cols += (i ? ", " : "") + ("[" + col + "]");
  }
  std::string t = "ranks " + std::to_string(n * n) +
                  (crossed && segments >= 2 ? "\nexpect deadlock" : "\nexpect safe") +
                  "\nset comm_mode = nonblocking\n";
  t += "comm row = {" + rows + "}\ncomm col = {" + cols + "}\nrank * {\n";
  for (int r = 0; r < segments; ++r) t += "  alloc seg" + std::to_string(r) + " 64MiB\n";
  if (crossed) t += "  any_order {\n";
  for (int r = 0; r < segments; ++r) {
    if (!crossed) t += "  any_order {\n";
    t += "    register row seg" + std::to_string(r) + "\n    register col seg" + std::to_string(r) + "\n";
    if (!crossed) t += "  }\n";
  }
  if (crossed) t += "  }\n";
  t += "}\n";
  return t;
}

std::string alloc_then_register_scenario(int world, int buffers) {
  std::string t = "ranks " + std::to_string(world) + "\nexpect safe\ncomm world = [0.." + std::to_string(world - 1) +
                  "]\nrank * {\n  any_order {\n";
  for (int k = 0; k < buffers; ++k) t += "    alloc b" + std::to_string(k) + " 64MiB\n";
  t += "  }\n";
  for (int k = 0; k < buffers; ++k) t += "  register world b" + std::to_string(k) + "\n";
  t += "}\n";
  return t;
}

std::string any_order_streams_scenario(int world, int k) {
  std::string t = "ranks " + std::to_string(world) + "\nexpect safe\nset runtime_connect = off\n";
  for (int i = 0; i < k; ++i) t += "comm c" + std::to_string(i) + " = [0.." + std::to_string(world - 1) + "]\n";
  t += "rank * {\n  any_order {\n";
  for (int i = 0; i < k; ++i) t += "    all_reduce c" + std::to_string(i) + " buf on s" + std::to_string(i) + "\n";
  t += "  }\n  sync device\n}\n";
  return t;
}

void run(const Case& c, bool reduction, uint64_t limit_states, double limit_seconds) {
  collmc::model::World world = collmc::model::resolve(collmc::model::parse_string(c.text, c.family + ".cmc"));
  SearchOptions o;
  o.reduction = reduction;
  o.max_states = limit_states;
  o.time_limit_s = limit_seconds;
  o.progress = SearchOptions::Progress::Never;
  auto r = collmc::checker::check(world, o);
  const auto& s = r.stats;
  std::printf("%-28s %-12s %-9s %-13s %12llu %13llu %9.3f %12.0f %10.1f %10.1f %9.0f%s\n", c.family.c_str(),
              c.size.c_str(), reduction ? "por" : "none", std::string(collmc::model::verdict_name(r.verdict)).c_str(),
              static_cast<unsigned long long>(s.states), static_cast<unsigned long long>(s.transitions), s.seconds,
              s.states_per_second(), static_cast<double>(s.memory_bytes) / (1 << 20),
              static_cast<double>(s.peak_rss_bytes) / (1 << 20), s.bytes_per_stored_state(),
              world.expect && *world.expect != r.verdict && r.verdict != collmc::model::Verdict::Inconclusive
                  ? "  (DISAGREES WITH expect)"
                  : "");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int max_world = 16384;
  uint64_t limit_states = 2'000'000;
  double limit_seconds = 60;
  std::string family_prefix;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--limit-states") && i + 1 < argc)
      limit_states = std::stoull(argv[++i]);
    else if (!std::strcmp(argv[i], "--limit-seconds") && i + 1 < argc)
      limit_seconds = std::stod(argv[++i]);
    else if (!std::strcmp(argv[i], "--family") && i + 1 < argc)
      family_prefix = argv[++i];
    else if (!std::strcmp(argv[i], "--max-world") && i + 1 < argc)
      max_world = std::stoi(argv[++i]);
    else {
      std::fprintf(stderr,
                   "usage: collmc_bench [--quick] [--limit-states N] [--limit-seconds S] [--family PREFIX] "
                   "[--max-world W]\n");
      return 2;
    }
  }
  std::vector<Case> cases;
  std::vector<int> ring = quick ? std::vector<int>{4, 8} : std::vector<int>{4, 8, 12, 16, 20};
  for (int n : ring) {
    cases.push_back({"ring-agreed", "N=" + std::to_string(n), collmc::gen::ring_scenario(n, true)});
    cases.push_back({"ring-rotating", "N=" + std::to_string(n), collmc::gen::ring_scenario(n, false)});
  }
  std::vector<std::pair<int, int>> fanout = quick ? std::vector<std::pair<int, int>>{{4, 3}}
                                                  : std::vector<std::pair<int, int>>{{4, 3}, {8, 4}, {16, 4}, {32, 6}};
  for (auto [w, k] : fanout) {
    std::string size = "W=" + std::to_string(w) + ",K=" + std::to_string(k);
    cases.push_back({"hook-fanout-sorted", size, collmc::gen::hook_fanout_scenario(w, k, true)});
    cases.push_back({"hook-fanout-per-rank", size, collmc::gen::hook_fanout_scenario(w, k, false)});
  }
  std::vector<int> megatron = quick ? std::vector<int>{8} : std::vector<int>{8, 16, 32};
  for (int w : megatron) {
    collmc::gen::MegatronConfig m;
    m.world = w;
    m.ep = 2;
    m.dist_opt_instances = 2;
    m.order = collmc::gen::RegistrationOrder::List;
    cases.push_back({"megatron-hsdp-list", "W=" + std::to_string(w), collmc::gen::megatron_scenario(m)});
    m.order = collmc::gen::RegistrationOrder::PerRank;
    cases.push_back({"megatron-hsdp-per-rank", "W=" + std::to_string(w), collmc::gen::megatron_scenario(m)});
  }
  // The README walkthrough's Megatron-FSDP layout (TP 2, CP 2, EP 4; W = 8: TP 1, CP 1, EP 2), two
  // distributed-optimizer instances, with a training step's collectives.
  auto megatron_layout = [](int w, collmc::gen::RegistrationOrder order, collmc::gen::LateSegments late) {
    collmc::gen::MegatronConfig m;
    m.world = w;
    m.tp = w == 8 ? 1 : 2;
    m.cp = w == 8 ? 1 : 2;
    m.ep = w == 8 ? 2 : 4;
    m.dist_opt_instances = 2;
    m.order = order;
    m.late_segments = late;
    m.collectives = true;
    return m;
  };
  // That layout for every registration order and late-segment mode.
  std::vector<int> fsdp = quick ? std::vector<int>{8} : std::vector<int>{8, 16, 32, 64};
  for (int w : fsdp)
    for (auto order : {collmc::gen::RegistrationOrder::List, collmc::gen::RegistrationOrder::PerRank,
                       collmc::gen::RegistrationOrder::Sorted})
      for (auto late : {collmc::gen::LateSegments::None, collmc::gen::LateSegments::All}) {
        const collmc::gen::MegatronConfig m = megatron_layout(w, order, late);
        const char* order_name = order == collmc::gen::RegistrationOrder::List      ? "list"
                                 : order == collmc::gen::RegistrationOrder::PerRank ? "per-rank"
                                                                                    : "sorted";
        cases.push_back({std::string("megatron-fsdp-") + order_name,
                         "W=" + std::to_string(w) + (late == collmc::gen::LateSegments::All ? ",late" : ""),
                         collmc::gen::megatron_scenario(m)});
      }
  // Issue 13's scale and open-order families.
  for (int w = 64; w <= std::min(max_world, quick ? 256 : 16384); w *= 2)
    for (auto order : {collmc::gen::RegistrationOrder::Sorted, collmc::gen::RegistrationOrder::PerRank}) {
      const collmc::gen::MegatronConfig m = megatron_layout(w, order, collmc::gen::LateSegments::All);
      cases.push_back({order == collmc::gen::RegistrationOrder::Sorted ? "megatron-fsdp-sorted-scale"
                                                                       : "megatron-fsdp-per-rank-scale",
                       "W=" + std::to_string(w), collmc::gen::megatron_scenario(m), false});
    }
  for (int w : quick ? std::vector<int>{8} : std::vector<int>{8, 16, 32, 64, 128, 256, 1024}) {
    if (w > max_world) continue;
    const collmc::gen::MegatronConfig m =
        megatron_layout(w, collmc::gen::RegistrationOrder::PerRank, collmc::gen::LateSegments::All);
    std::string text = collmc::gen::megatron_scenario(m);
    text.replace(text.find("expect deadlock"), 15, "expect safe");
    cases.push_back({"megatron-fsdp-per-rank-nb", "W=" + std::to_string(w),
                     with_knob(text, "set comm_mode = nonblocking"), w == 8});
  }
  for (auto [n, r] : quick ? std::vector<std::pair<int, int>>{{4, 2}}
                           : std::vector<std::pair<int, int>>{{4, 2}, {4, 3}, {4, 4}, {8, 4}, {16, 4}})
    cases.push_back({"grid-nb", "W=" + std::to_string(n * n) + ",R=" + std::to_string(r), grid_scenario(n, r, false),
                     n * n <= 16 && r <= 2});
  for (auto [n, r] :
       quick ? std::vector<std::pair<int, int>>{{4, 2}} : std::vector<std::pair<int, int>>{{4, 2}, {8, 4}, {16, 4}})
    cases.push_back({"grid-nb-crossed", "W=" + std::to_string(n * n) + ",R=" + std::to_string(r),
                     grid_scenario(n, r, true), n * n <= 16 && r <= 2});
  for (auto [w, k] : quick ? std::vector<std::pair<int, int>>{{8, 4}}
                           : std::vector<std::pair<int, int>>{{8, 4}, {32, 8}, {256, 16}, {64, 64}})
    cases.push_back({"alloc-then-register", "W=" + std::to_string(w) + ",K=" + std::to_string(k),
                     alloc_then_register_scenario(w, k), w <= 8});
  for (auto [w, k] :
       quick ? std::vector<std::pair<int, int>>{{4, 3}} : std::vector<std::pair<int, int>>{{4, 3}, {16, 4}, {64, 8}})
    cases.push_back({"any-order-streams", "W=" + std::to_string(w) + ",K=" + std::to_string(k),
                     any_order_streams_scenario(w, k), w <= 4});
  std::printf("%-28s %-12s %-9s %-13s %12s %13s %9s %12s %10s %10s %9s\n", "family", "size", "reduction", "verdict",
              "states", "transitions", "seconds", "states/s", "mem MiB", "RSS MiB", "B/stored");
  for (const auto& c : cases) {
    if (c.family.rfind(family_prefix, 0) != 0) continue;
    run(c, true, limit_states, limit_seconds);
    if (c.without_reduction) run(c, false, limit_states, limit_seconds);
  }
  return 0;
}
