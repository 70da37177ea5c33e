// Random small scenarios for differential testing: text in the scenario language, so every
// generated case is also a parser input.
#pragma once

#include <random>
#include <string>

namespace collmc::testing {

struct RandomScenarioOptions {
  int min_ranks = 2;
  int max_ranks = 3;
  int max_comms = 3;
  int max_statements = 4;  // per rank, top level
  bool choices = true;     // any_order, either, maybe
  bool threads = true;
  bool hazards = true;  // deregister, free
  bool knobs = true;    // random runtime_connect, comm_mode, stream_progress, profile
  // any_order blocks whose children commute (allocations; the free of a scratch buffer nothing uses
  // next to a call), to stress reductions of open orders
  bool commuting_choices = false;
};

std::string random_scenario(std::mt19937& rng, const RandomScenarioOptions& options = {});

}  // namespace collmc::testing
