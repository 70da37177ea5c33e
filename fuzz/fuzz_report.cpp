// libFuzzer: the report path (check -> wait-for graph -> DOT -> SVG through libgvc -> HTML, and the text
// and JSON reports) on generated scenarios. The input picks a generator family and its sizes (ring,
// megatron, hook-fanout, pytorch-pool) or seeds the random scenario generator of the differential tests;
// every result, whatever its verdict, is reported in every format. A rendering that Graphviz refuses
// is a std::runtime_error with a message; anything else (a crash, a sanitizer report, another
// exception) is a bug. Graphviz 2.43 corrupted the heap on this path at W = 32..256 (issue 24).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>

#include "collmc/checker/check.h"
#include "collmc/gen/generators.h"
#include "collmc/model/parser.h"
#include "collmc/model/world.h"
#include "collmc/report/check_report.h"
#include "collmc/report/html_report.h"
#include "collmc/report/wait_for_dot.h"
#include "random_scenario.h"

namespace {

// The input's bytes, one small choice at a time; zeros once they run out.
class Choices {
 public:
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  int pick(int n) { return n <= 1 ? 0 : static_cast<int>(next() % static_cast<unsigned>(n)); }
  uint32_t word() {
    uint32_t w = 0;
    for (int i = 0; i < 4; ++i) w = w << 8 | next();
    return w;
  }

 private:
  uint8_t next() { return at_ < size_ ? data_[at_++] : 0; }
  const uint8_t* data_;
  size_t size_;
  size_t at_ = 0;
};

collmc::gen::RegistrationOrder order(Choices& c) {
  constexpr collmc::gen::RegistrationOrder kOrders[] = {collmc::gen::RegistrationOrder::List,
                                                        collmc::gen::RegistrationOrder::PerRank,
                                                        collmc::gen::RegistrationOrder::Sorted};
  return kOrders[c.pick(3)];
}

collmc::gen::LateSegments late(Choices& c) {
  constexpr collmc::gen::LateSegments kLate[] = {collmc::gen::LateSegments::None, collmc::gen::LateSegments::Some,
                                                 collmc::gen::LateSegments::All};
  return kLate[c.pick(3)];
}

// A scenario from the input: a family at sizes up to 128 ranks (a case must stay fast), or a random one.
std::string scenario(Choices& c) {
  switch (c.pick(5)) {
    case 0:
      return collmc::gen::ring_scenario(2 + c.pick(127), c.pick(4) == 0, c.pick(4) == 0);
    case 1: {
      collmc::gen::MegatronConfig m;
      constexpr int kSizes[] = {1, 2, 4};
      m.tp = kSizes[c.pick(3)];
      m.cp = kSizes[c.pick(3)];
      m.pp = kSizes[c.pick(2)];
      m.ep = kSizes[c.pick(3)];
      m.dist_opt_instances = 1 + c.pick(2);
      m.world = m.tp * m.cp * m.pp * m.dist_opt_instances * m.ep * (1 + c.pick(4));
      if (m.world > 128) m.world = m.tp * m.cp * m.pp * m.ep * m.dist_opt_instances;
      m.ubr_groups = m.dist_opt_instances > 1 ? std::vector<std::string>{"dense", "expert", "outer"}
                                              : std::vector<std::string>{"dense", "expert"};
      m.order = order(c);
      m.late_segments = late(c);
      m.collectives = c.pick(2) == 0;
      return collmc::gen::megatron_scenario(m);
    }
    case 2:
      return collmc::gen::hook_fanout_scenario(2 + c.pick(127), 1 + c.pick(4), c.pick(4) == 0);
    case 3: {
      collmc::gen::PytorchPoolConfig p;
      p.world = 2 << c.pick(6);
      p.groups = {"dp:all", "tp:consecutive:2"};
      if (c.pick(2)) p.groups.push_back("ep:strided:2");
      p.order = order(c);
      p.late_segments = late(c);
      return collmc::gen::pytorch_pool_scenario(p);
    }
    default: {
      std::mt19937 rng(c.word());
      collmc::testing::RandomScenarioOptions options;
      options.max_ranks = 2 + c.pick(4);
      options.open_orders = c.pick(2) == 0;
      return collmc::testing::random_scenario(rng, options);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Choices choices(data, size);
  std::string text;
  try {
    text = scenario(choices);
  } catch (const std::invalid_argument&) {
    return 0;  // sizes a generator refuses, with its reason
  }
  collmc::model::World world;
  try {
    world = collmc::model::resolve(collmc::model::parse_string(text, "fuzz.cmc"));
  } catch (const collmc::model::InputError& e) {
    std::fprintf(stderr, "a generated scenario does not parse: %s\n%s\n", e.what(), text.c_str());
    std::abort();
  }
  collmc::checker::SearchOptions options;
  options.max_states = 20000;  // an inconclusive result is reported too
  const auto result = collmc::checker::check(world, options);
  (void)collmc::report::text_report(result, true);
  (void)collmc::report::json_report(result);
  std::string svg;
  if (!result.wait_for.empty()) {
    for (const bool full : {false, true}) {
      collmc::report::DotOptions dot_options;
      dot_options.full_graph = full;
      const std::string dot = collmc::report::wait_for_dot(world, result.wait_for, dot_options);
      try {
        svg = collmc::report::render_svg(dot);
      } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "Graphviz refused the wait-for graph: %s\n%s\n", e.what(), dot.c_str());
        std::abort();  // collmc writes the DOT: Graphviz must be able to draw it
      }
      if (svg.rfind("<svg", 0) != 0 || svg.find("</svg>") == std::string::npos) std::abort();
    }
  }
  const std::string html = collmc::report::html_report(result, svg, {"collmc check fuzz.cmc", "fuzz"});
  if (html.find("</html>") == std::string::npos) std::abort();
  return 0;
}
