// Megatron-LM's process groups (megatron/core/parallel_state.py at core_v0.16.0), reduced to the
// formulas of NCCL_FACTS.md, and the Megatron-FSDP user-buffer registration protocol over them.
#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "collmc/gen/generators.h"

namespace collmc::gen {

namespace {

void require(bool ok, const std::string& why) {
  if (!ok) throw std::invalid_argument(why);
}

std::vector<std::vector<int>> chunks(const std::vector<int>& list, int parts) {
  std::vector<std::vector<int>> out;
  const size_t size = list.size() / static_cast<size_t>(parts);
  for (int p = 0; p < parts; ++p)
    out.emplace_back(list.begin() + static_cast<long>(size * static_cast<size_t>(p)),
                     list.begin() + static_cast<long>(size * static_cast<size_t>(p + 1)));
  return out;
}

std::string rank_list(const std::vector<int>& g) {
  std::string s = "[";
  for (size_t i = 0; i < g.size(); ++i) s += (i ? ", " : "") + std::to_string(g[i]);
  return s + "]";
}

}  // namespace

std::vector<GroupFamily> megatron_groups(const MegatronConfig& c) {
  const int W = c.world;
  require(W > 0 && c.tp > 0 && c.cp > 0 && c.pp > 0 && c.ep > 0 && c.etp > 0 && c.dist_opt_instances > 0,
          "every size must be positive");
  require(W % (c.tp * c.cp * c.pp) == 0,
          "world " + std::to_string(W) + " is not divisible by TP*CP*PP = " + std::to_string(c.tp * c.cp * c.pp));
  require(W % (c.etp * c.ep * c.pp) == 0,
          "world " + std::to_string(W) + " is not divisible by ETP*EP*PP = " + std::to_string(c.etp * c.ep * c.pp));
  const int DP = W / (c.tp * c.cp * c.pp);
  const int EDP = W / (c.etp * c.ep * c.pp);
  const int N = c.dist_opt_instances;
  require((DP * c.cp) % N == 0, "DP*CP = " + std::to_string(DP * c.cp) + " is not divisible by " + std::to_string(N) +
                                    " distributed-optimizer instances");
  require(EDP % N == 0, "expert DP = " + std::to_string(EDP) + " is not divisible by " + std::to_string(N) +
                            " distributed-optimizer instances");

  // DATA_PARALLEL_GROUP_WITH_CP: fixed (tp, pp), every (cp, dp), in rank order.
  std::vector<std::vector<int>> dp_cp;
  for (int pp = 0; pp < c.pp; ++pp)
    for (int tp = 0; tp < c.tp; ++tp) {
      std::vector<int> g;
      for (int dp = 0; dp < DP; ++dp)
        for (int cp = 0; cp < c.cp; ++cp) g.push_back(tp + c.tp * (cp + c.cp * (dp + DP * pp)));
      std::sort(g.begin(), g.end());
      dp_cp.push_back(g);
    }
  // EXPERT_DATA_PARALLEL_GROUP: fixed (etp, ep, pp), every edp.
  std::vector<std::vector<int>> edp;
  for (int pp = 0; pp < c.pp; ++pp)
    for (int ep = 0; ep < c.ep; ++ep)
      for (int etp = 0; etp < c.etp; ++etp) {
        std::vector<int> g;
        for (int e = 0; e < EDP; ++e) g.push_back(etp + c.etp * (ep + c.ep * (e + EDP * pp)));
        edp.push_back(g);
      }
  std::vector<GroupFamily> out;
  if (N == 1) {
    out.push_back({"dp_cp", "DATA_PARALLEL_GROUP_WITH_CP", dp_cp});
    out.push_back({"edp", "EXPERT_DATA_PARALLEL_GROUP", edp});
    return out;
  }
  GroupFamily intra{"intra_dp_cp", "INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP", {}};
  for (const auto& g : dp_cp)
    for (auto& part : chunks(g, N)) intra.groups.push_back(part);
  const int inner = EDP / N;
  GroupFamily l0{"hier_edp_l0", "HIERARCHICAL_EXPERT_DATA_PARALLEL_GROUP_L0", {}};
  GroupFamily l1{"hier_edp_l1", "HIERARCHICAL_EXPERT_DATA_PARALLEL_GROUP_L1", {}};
  for (const auto& g : edp) {
    for (auto& part : chunks(g, N)) l0.groups.push_back(part);
    for (int j = 0; j < inner; ++j) {
      std::vector<int> stride;
      for (size_t k = static_cast<size_t>(j); k < g.size(); k += static_cast<size_t>(inner)) stride.push_back(g[k]);
      l1.groups.push_back(stride);
    }
  }
  out.push_back(intra);
  out.push_back(l0);
  out.push_back(l1);
  return out;
}

std::string megatron_scenario(const MegatronConfig& c) {
  std::vector<GroupFamily> families = megatron_groups(c);
  // The registration list: dense FSDP group, expert FSDP group, and with N > 1 the outer (L1) group.
  std::map<std::string, std::string> role = {{"dense", families[0].name}, {"expert", families[1].name}};
  if (families.size() > 2) role["outer"] = families[2].name;
  std::vector<std::string> chosen;
  for (const auto& g : c.ubr_groups) {
    auto it = role.find(g);
    require(it != role.end(), "unknown registration group '" + g + "' for this configuration (expected " +
                                  std::string(families.size() > 2 ? "dense, expert or outer" : "dense or expert") +
                                  ")");
    chosen.push_back(it->second);
  }
  require(!chosen.empty(), "no registration group");
  if (c.order == RegistrationOrder::Sorted) std::sort(chosen.begin(), chosen.end());
  const bool deadlock_expected = c.order == RegistrationOrder::PerRank && chosen.size() > 1;

  std::ostringstream out;
  out << "# Megatron-FSDP with NCCL user-buffer registration: world " << c.world << ", TP " << c.tp << ", CP " << c.cp
      << ", PP " << c.pp << ", EP " << c.ep << ", ETP " << c.etp << ", " << c.dist_opt_instances
      << " distributed-optimizer instance(s).\n"
      << "# Groups from megatron/core/parallel_state.py (dense rank = tp + TP*(cp + CP*(dp + DP*pp)),\n"
      << "# expert rank = etp + ETP*(ep + EP*(edp + EDP*pp))).\n";
  out << "ranks " << c.world << "\nname \"megatron-fsdp W=" << c.world << " order="
      << (c.order == RegistrationOrder::List      ? "list"
          : c.order == RegistrationOrder::PerRank ? "per-rank"
                                                  : "sorted")
      << "\"\n";
  out << "expect " << (deadlock_expected ? "deadlock" : "safe") << "\n";
  for (const auto& f : families) {
    out << "# " << f.megatron << "\ncomm " << f.name << " = {";
    for (size_t i = 0; i < f.groups.size(); ++i) out << (i ? ", " : "") << rank_list(f.groups[i]);
    out << "}\n";
  }
  out << "rank * {\n  # the global pool, registered on every chosen group\n  alloc pool 64MiB\n";
  if (c.order == RegistrationOrder::PerRank && chosen.size() > 1) {
    out << "  any_order {  # the order each rank's allocator hook iterates its map in\n";
    for (const auto& g : chosen) out << "    register " << g << " pool\n";
    out << "  }\n";
  } else {
    for (const auto& g : chosen) out << "  register " << g << " pool\n";
  }
  out << "  all_reduce " << chosen.front() << " pool\n  sync main\n}\n";
  return out.str();
}

}  // namespace collmc::gen
