// Megatron-LM's process groups (megatron/core/parallel_state.py at core_v0.16.0), reduced to the
// formulas of NCCL_FACTS.md, and the Megatron-FSDP user-buffer registration protocol over them.
#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "collmc/gen/generators.h"
#include "collmc/model/world.h"

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

namespace {

// The registration protocol over `groups` (comm family names), shared by the Megatron and PyTorch
// generators: the pool in list order (register_mem_pool), optional collectives, late segments
// registered by the allocator hook in the configured order.
std::string registration_body(const std::vector<std::string>& groups, RegistrationOrder order, LateSegments late,
                              bool collectives, bool hook_orders_pool, int world) {
  auto registrations = [&](const std::string& buffer, bool per_rank, const std::string& indent) {
    std::string out;
    if (per_rank && groups.size() > 1) {
      out += indent + "any_order {  # the order the allocator hook iterates its unordered_map in\n";
      for (const auto& g : groups) out += indent + "  register " + g + " " + buffer + "\n";
      out += indent + "}\n";
    } else {
      for (const auto& g : groups) out += indent + "register " + g + " " + buffer + "\n";
    }
    return out;
  };
  const bool per_rank = order == RegistrationOrder::PerRank;
  std::string out = "rank * {\n  # the global pool, registered on every chosen group\n  alloc pool 64MiB\n";
  out += registrations("pool", per_rank && hook_orders_pool, "  ");
  if (collectives) {
    out += "  # a training step: one collective per group on the registered pool\n";
    for (const auto& g : groups) out += "  all_reduce " + g + " pool\n";
    out += "  sync main\n";
  }
  if (late != LateSegments::None) {
    std::string indent = "  ";
    if (late == LateSegments::Some) {
      // Every rank but the last: the last one's groups then wait for it (groups have 2+ ranks).
      out += "  # only some ranks grow the pool by a new segment (every rank but the last)\n  when rank in [0.." +
             std::to_string(world - 2) + "] {\n";
      indent = "    ";
    } else {
      out += "  # every rank grows the pool by a new segment\n";
    }
    out += indent + "alloc late 1GiB\n" + registrations("late", per_rank, indent);
    if (late == LateSegments::Some) out += "  }\n";
  }
  out += "  all_reduce " + groups.front() + " pool\n  sync main\n}\n";
  return out;
}

bool registration_deadlocks(size_t groups, RegistrationOrder order, LateSegments late, bool hook_orders_pool) {
  if (late == LateSegments::Some) return true;  // ranks without the segment never join its registration
  const bool cross = order == RegistrationOrder::PerRank && groups > 1;
  return cross && (hook_orders_pool || late == LateSegments::All);
}

const char* order_name(RegistrationOrder o) {
  return o == RegistrationOrder::List ? "list" : o == RegistrationOrder::PerRank ? "per-rank" : "sorted";
}
const char* late_name(LateSegments l) {
  return l == LateSegments::None ? "none" : l == LateSegments::Some ? "some" : "all";
}

}  // namespace

namespace {

// The scenario of Megatron-FSDP's registration over `families` (comm families; `role` names the family of
// each registration group: dense, expert, outer), under `header` (# lines saying where the groups are from).
std::string megatron_registration_scenario(std::vector<GroupFamily> families, std::map<std::string, std::string> role,
                                           const MegatronConfig& c, const std::string& header) {
  // dense-ag: Megatron's separate all-gather communicator (create_all_gather_group,
  // DATA_PARALLEL_GROUP_WITH_CP_AG): the same ranks as the dense FSDP group, its own NCCL comm.
  if (std::find(c.ubr_groups.begin(), c.ubr_groups.end(), "dense-ag") != c.ubr_groups.end() && role.count("dense")) {
    const auto dense = std::find_if(families.begin(), families.end(),
                                    [&](const GroupFamily& f) { return f.name == role.at("dense"); });
    GroupFamily ag{dense->name + "_ag", dense->megatron + "_AG", dense->groups};
    role["dense-ag"] = ag.name;
    families.push_back(ag);
  }
  std::vector<std::string> chosen;
  std::string known;
  for (const auto& [r, f] : role)
    if (r != "dense-ag") known += (known.empty() ? "" : ", ") + r;
  for (const auto& g : c.ubr_groups) {
    auto it = role.find(g);
    require(it != role.end(),
            "unknown registration group '" + g + "' for this configuration (expected " + known + " or dense-ag)");
    chosen.push_back(it->second);
  }
  require(!chosen.empty(), "no registration group");
  if (c.order == RegistrationOrder::Sorted) std::sort(chosen.begin(), chosen.end());
  const bool deadlock_expected = registration_deadlocks(chosen.size(), c.order, c.late_segments, true);

  std::ostringstream out;
  out << header << "Registration order: " << order_name(c.order) << "; late segments: " << late_name(c.late_segments)
      << ".\n";
  out << "ranks " << c.world << "\nname \"megatron-fsdp W=" << c.world << " order=" << order_name(c.order)
      << " late=" << late_name(c.late_segments) << "\"\n";
  out << "expect " << (deadlock_expected ? "deadlock" : "safe") << "\n";
  for (const auto& f : families) {
    out << "# " << f.megatron << "\ncomm " << f.name << " = {";
    for (size_t i = 0; i < f.groups.size(); ++i) out << (i ? ", " : "") << model::rank_list_text(f.groups[i]);
    out << "}\n";
  }
  out << registration_body(chosen, c.order, c.late_segments, c.collectives, true, c.world);
  return out.str();
}

}  // namespace

std::string megatron_scenario(const MegatronConfig& c) {
  std::vector<GroupFamily> families = megatron_groups(c);
  // The registration list: dense FSDP group, expert FSDP group, and with N > 1 the outer (L1) group.
  std::map<std::string, std::string> role = {{"dense", families[0].name}, {"expert", families[1].name}};
  if (families.size() > 2) role["outer"] = families[2].name;
  std::ostringstream header;
  header << "# Megatron-FSDP with NCCL user-buffer registration: world " << c.world << ", TP " << c.tp << ", CP "
         << c.cp << ", PP " << c.pp << ", EP " << c.ep << ", ETP " << c.etp << ", " << c.dist_opt_instances
         << " distributed-optimizer instance(s).\n"
         << "# Groups from megatron/core/parallel_state.py (dense rank = tp + TP*(cp + CP*(dp + DP*pp)),\n"
         << "# expert rank = etp + ETP*(ep + EP*(edp + EDP*pp))). ";
  return megatron_registration_scenario(std::move(families), std::move(role), c, header.str());
}

const std::vector<std::pair<std::string, std::vector<std::string>>>& megatron_group_roles() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> roles = {
      {"dense", {"INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP", "DATA_PARALLEL_GROUP_WITH_CP"}},
      {"expert",
       {"HIERARCHICAL_EXPERT_DATA_PARALLEL_GROUP_L0", "INTRA_PARTIAL_EXPERT_DATA_PARALLEL_GROUP",
        "EXPERT_DATA_PARALLEL_GROUP"}},
      {"outer", {"HIERARCHICAL_EXPERT_DATA_PARALLEL_GROUP_L1", "INTER_PARTIAL_EXPERT_DATA_PARALLEL_GROUP"}},
  };
  return roles;
}

std::string megatron_scenario_from_groups(const std::vector<GroupFamily>& built, const MegatronConfig& c,
                                          const std::string& source) {
  std::vector<GroupFamily> families;
  std::map<std::string, std::string> role;
  for (const auto& [r, names] : megatron_group_roles()) {
    for (const auto& n : names) {
      auto it = std::find_if(built.begin(), built.end(), [&](const GroupFamily& f) { return f.megatron == n; });
      if (it == built.end()) continue;
      GroupFamily f = *it;
      f.name = r == "dense" ? "intra_dp_cp" : r == "expert" ? "hier_edp_l0" : "hier_edp_l1";
      // Every rank must be in one instance of the family for `register FAMILY` to name one group.
      std::vector<int> seen(static_cast<size_t>(c.world), 0);
      for (const auto& g : f.groups)
        for (int m : g) {
          require(m >= 0 && m < c.world,
                  n + ": rank " + std::to_string(m) + " is outside the world of " + std::to_string(c.world));
          ++seen[static_cast<size_t>(m)];
        }
      require(std::all_of(seen.begin(), seen.end(), [](int k) { return k == 1; }),
              n + ": the groups the job built do not hold every rank exactly once");
      role[r] = f.name;
      families.push_back(std::move(f));
      break;
    }
  }
  require(
      role.count("dense") || role.count("expert"),
      "the job's groups hold none of Megatron-LM's data-parallel groups (INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP, "
      "DATA_PARALLEL_GROUP_WITH_CP, EXPERT_DATA_PARALLEL_GROUP, ...): are they named (group_desc)?");
  MegatronConfig config = c;
  if (config.ubr_groups.empty())
    for (const auto& [r, f] : role) config.ubr_groups.push_back(r);
  std::ostringstream header;
  header << "# Megatron-FSDP with NCCL user-buffer registration over the groups the job built (" << source
         << "): world " << c.world << ".\n# ";
  return megatron_registration_scenario(std::move(families), std::move(role), config, header.str());
}

std::string pytorch_pool_scenario(const PytorchPoolConfig& c) {
  require(c.world >= 2, "a pool shared by process groups needs at least 2 ranks");
  require(!c.groups.empty(), "no process group (--groups NAME:all|NAME:consecutive:K|NAME:strided:K)");
  std::ostringstream out;
  std::vector<std::string> names;
  std::ostringstream comms;
  for (const auto& spec : c.groups) {
    const size_t colon = spec.find(':');
    require(colon != std::string::npos && colon > 0,
            "group spec '" + spec + "': expected NAME:all, NAME:consecutive:K or NAME:strided:K");
    const std::string name = spec.substr(0, colon), kind = spec.substr(colon + 1);
    names.push_back(name);
    if (kind == "all") {
      comms << "comm " << name << " = all\n";
      continue;
    }
    const size_t colon2 = kind.find(':');
    require(colon2 != std::string::npos, "group spec '" + spec + "': expected a size after '" + kind + ":'");
    const std::string how = kind.substr(0, colon2);
    int k = 0;
    try {
      k = std::stoi(kind.substr(colon2 + 1));
    } catch (...) {
      require(false, "group spec '" + spec + "': the size is not a number");
    }
    require(k >= 1 && c.world % k == 0, "group spec '" + spec + "': world " + std::to_string(c.world) +
                                            " is not divisible by " + std::to_string(k));
    std::vector<std::vector<int>> groups;
    if (how == "consecutive") {
      for (int g = 0; g < c.world / k; ++g) {
        std::vector<int> members;
        for (int i = 0; i < k; ++i) members.push_back(g * k + i);
        groups.push_back(members);
      }
    } else if (how == "strided") {
      const int stride = c.world / k;
      for (int j = 0; j < stride; ++j) {
        std::vector<int> members;
        for (int i = 0; i < k; ++i) members.push_back(j + i * stride);
        groups.push_back(members);
      }
    } else {
      require(false, "group spec '" + spec + "': expected consecutive or strided");
    }
    comms << "comm " << name << " = {";
    for (size_t i = 0; i < groups.size(); ++i) comms << (i ? ", " : "") << model::rank_list_text(groups[i]);
    comms << "}\n";
  }
  std::vector<std::string> hook_order = names;
  if (c.order == RegistrationOrder::Sorted) std::sort(hook_order.begin(), hook_order.end());
  const bool deadlock = registration_deadlocks(names.size(), c.order, c.late_segments, false);
  out << "# PyTorch process groups sharing one memory pool: register_mem_pool(pool, symm=True) on each\n"
      << "# group in list order; the allocator hook then registers every new segment on every group\n"
      << "# (hook order: " << order_name(c.order) << "; late segments: " << late_name(c.late_segments) << ").\n"
      << "ranks " << c.world << "\nname \"pytorch pool over " << names.size() << " groups, hook order "
      << order_name(c.order) << "\"\nexpect " << (deadlock ? "deadlock" : "safe") << "\n"
      << comms.str();
  // register_mem_pool runs in list order on every rank; only the hook's order varies.
  std::string body = registration_body(hook_order, c.order, c.late_segments, false, false, c.world);
  if (hook_order != names) {
    // The pool itself was registered in list order: rewrite those lines.
    std::string list_regs, hook_regs;
    for (const auto& g : names) list_regs += "  register " + g + " pool\n";
    for (const auto& g : hook_order) hook_regs += "  register " + g + " pool\n";
    body.replace(body.find(hook_regs), hook_regs.size(), list_regs);
  }
  out << body;
  return out.str();
}

}  // namespace collmc::gen
