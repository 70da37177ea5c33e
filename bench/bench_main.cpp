// Benchmarks on scalable families: prints states, time, states per second and memory, with and
// without the partial-order reduction.
// Usage: collmc_bench [--quick] [--limit-states N] [--limit-seconds S] [--family PREFIX]
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
};

void run(const Case& c, bool reduction, uint64_t limit_states, double limit_seconds) {
  collmc::model::World world = collmc::model::resolve(collmc::model::parse_string(c.text, c.family + ".cmc"));
  SearchOptions o;
  o.reduction = reduction;
  o.max_states = limit_states;
  o.time_limit_s = limit_seconds;
  auto r = collmc::checker::check(world, o);
  const auto& s = r.stats;
  std::printf("%-26s %-10s %-9s %-13s %12llu %13llu %9.3f %12.0f %10.1f %10.1f%s\n", c.family.c_str(), c.size.c_str(),
              reduction ? "por" : "none", std::string(collmc::model::verdict_name(r.verdict)).c_str(),
              static_cast<unsigned long long>(s.states), static_cast<unsigned long long>(s.transitions), s.seconds,
              s.states_per_second(), static_cast<double>(s.memory_bytes) / (1 << 20),
              static_cast<double>(s.peak_rss_bytes) / (1 << 20),
              world.expect && *world.expect != r.verdict && r.verdict != collmc::model::Verdict::Inconclusive
                  ? "  (DISAGREES WITH expect)"
                  : "");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
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
    else {
      std::fprintf(stderr, "usage: collmc_bench [--quick] [--limit-states N] [--limit-seconds S] [--family PREFIX]\n");
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
  // The README walkthrough's layout (TP 2, CP 2, EP 4, 2 optimizer instances; W = 8: TP 1, CP 1, EP 2)
  // with a training step's collectives, for every registration order and late-segment mode.
  std::vector<int> fsdp = quick ? std::vector<int>{8} : std::vector<int>{8, 16, 32, 64};
  for (int w : fsdp)
    for (auto order : {collmc::gen::RegistrationOrder::List, collmc::gen::RegistrationOrder::PerRank,
                       collmc::gen::RegistrationOrder::Sorted})
      for (auto late : {collmc::gen::LateSegments::None, collmc::gen::LateSegments::All}) {
        collmc::gen::MegatronConfig m;
        m.world = w;
        m.tp = w == 8 ? 1 : 2;
        m.cp = w == 8 ? 1 : 2;
        m.ep = w == 8 ? 2 : 4;
        m.dist_opt_instances = 2;
        m.order = order;
        m.late_segments = late;
        m.collectives = true;
        const char* order_name = order == collmc::gen::RegistrationOrder::List      ? "list"
                                 : order == collmc::gen::RegistrationOrder::PerRank ? "per-rank"
                                                                                    : "sorted";
        cases.push_back({std::string("megatron-fsdp-") + order_name,
                         "W=" + std::to_string(w) + (late == collmc::gen::LateSegments::All ? ",late" : ""),
                         collmc::gen::megatron_scenario(m)});
      }
  std::printf("%-26s %-10s %-9s %-13s %12s %13s %9s %12s %10s %10s\n", "family", "size", "reduction", "verdict",
              "states", "transitions", "seconds", "states/s", "mem MiB", "RSS MiB");
  for (const auto& c : cases) {
    if (c.family.rfind(family_prefix, 0) != 0) continue;
    run(c, true, limit_states, limit_seconds);
    run(c, false, limit_states, limit_seconds);
  }
  return 0;
}
