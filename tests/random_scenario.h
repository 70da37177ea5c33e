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
  // Orders left open (issue 13): consecutive calls wrapped in any_orders of 2-3 children (sometimes
  // nested), collectives on several streams, allocations in any order, nonblocking comms more often;
  // children that commute (different comms, streams, buffers) and children that do not (one comm
  // twice, a buffer allocated next to its use), to stress the reduction of commuting any_orders.
  bool open_orders = false;
  // Issue 23: a release picked per case (2.30.7, 2.29.7 or 2.23.4) and its calls: one-sided rings and
  // puts (the first call's rendezvous, the symmetric source), shrink and grow of the first comm, and a
  // teardown of one comm by destroy, abort or revoke (abort waits for the peers before 2.24).
  bool nccl_releases = false;
  // Issue 36: with nccl_releases, only 2.31.0a16 and 2.32.6 (the destroy and finalize barrier, the RMA
  // setup at the first registration, config=, launch_order_implicit, gin windows; the teardown of one
  // comm by destroy, abort, finalize or revoke).
  bool nccl_231_only = false;
};

std::string random_scenario(std::mt19937& rng, const RandomScenarioOptions& options = {});

}  // namespace collmc::testing
