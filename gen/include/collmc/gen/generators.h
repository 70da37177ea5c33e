// Scenario generators for real parallel layouts and scalable families. Each returns scenario text
// (LANGUAGE.md) with comments saying what every part stands for.
#pragma once

#include <string>
#include <vector>

namespace collmc::gen {

enum class RegistrationOrder {
  List,     // every rank registers on the groups in the configured list order
  PerRank,  // each rank picks its own order (the allocator hook's hash-map order): any_order
  Sorted,   // one order every rank agrees on (sorted by group name)
};

// Late pool segments: allocated after registration; the allocator hook registers each new segment
// on every group that registered the pool, in the registration order's discipline.
enum class LateSegments { None, Some, All };  // Some: every rank but the last

// Megatron-LM's groups (megatron/core/parallel_state.py; NCCL_FACTS.md has the formulas).
struct MegatronConfig {
  int world = 8;
  int tp = 1, cp = 1, pp = 1, ep = 1, etp = 1;
  int dist_opt_instances = 1;
  std::vector<std::string> ubr_groups = {"dense", "expert", "outer"};
  RegistrationOrder order = RegistrationOrder::List;
  LateSegments late_segments = LateSegments::None;
  bool collectives = false;  // a training step's all-reduce on every chosen group after registration
};

// A group family: disjoint rank lists covering the world.
struct GroupFamily {
  std::string name;      // the scenario's comm family name
  std::string megatron;  // Megatron's name for it
  std::vector<std::vector<int>> groups;
};

// Throws std::invalid_argument with the reason when sizes do not divide.
std::vector<GroupFamily> megatron_groups(const MegatronConfig& config);
std::string megatron_scenario(const MegatronConfig& config);
// The same registration over the groups a job really built (Flight Recorder pg_config, the torch shim's records):
// `built` holds each group family by its Megatron-LM name (`megatron`: the group_desc, e.g.
// INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP) with its instances; the roles dense, expert and outer are found by
// those names (megatron_group_roles). Uses config's world, ubr_groups, order, late_segments, collectives.
std::string megatron_scenario_from_groups(const std::vector<GroupFamily>& built, const MegatronConfig& config,
                                          const std::string& source);
// For each registration role, the Megatron-LM group names (group_desc) that play it, preferred first.
const std::vector<std::pair<std::string, std::vector<std::string>>>& megatron_group_roles();

// Plain PyTorch process groups sharing one symmetric pool (register_mem_pool on each, in list order).
// Group specs: `NAME:all`, `NAME:consecutive:K` (blocks of K ranks), `NAME:strided:K` (K ranks
// spaced W/K apart). Throws std::invalid_argument for a spec that does not fit the world.
struct PytorchPoolConfig {
  int world = 4;
  std::vector<std::string> groups;
  RegistrationOrder order = RegistrationOrder::List;  // of the hook's late-segment registrations
  LateSegments late_segments = LateSegments::All;
};
std::string pytorch_pool_scenario(const PytorchPoolConfig& config);

// N two-rank communicators in a ring (comm c_i = [i, i+1 mod N]); every rank registers a pool on
// its two comms, in rotating order (rank i: c_i, then c_{i-1}: a deadlock) or in agreed order
// (lower comm index first: safe). `mpi` writes the MPI profile.
std::string ring_scenario(int comms, bool agreed, bool mpi = false);

// W ranks and K comms over all of them; a new pool segment is registered on every comm, in an order
// each rank picks (any_order: a deadlock) or sorted (safe), then an all-reduce on the first comm.
std::string hook_fanout_scenario(int ranks, int comms, bool sorted);

}  // namespace collmc::gen
