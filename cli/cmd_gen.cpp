// collmc gen: write scenarios for real parallel layouts.
#include <algorithm>
#include <iostream>

#include "collmc/model/source.h"

#include "cli_common.h"
#include "collmc/gen/generators.h"
#include "commands.h"

namespace collmc::cli {

using model::Verdict;

namespace {

enum class Family { Ring, Megatron, PytorchPool, HookFanout };

constexpr std::pair<const char*, Family> kFamilies[] = {
    {"ring", Family::Ring},
    {"megatron", Family::Megatron},
    {"pytorch-pool", Family::PytorchPool},
    {"hook-fanout", Family::HookFanout},
};

Family family_named(const std::string& name) {
  for (const auto& [n, f] : kFamilies)
    if (name == n) return f;
  std::vector<std::string> names;
  for (const auto& [n, f] : kFamilies) names.emplace_back(n);
  const auto guess = model::closest_spelling(name, names);
  throw po::error("unknown family '" + name + "'" + (guess ? "; did you mean '" + *guess + "'?" : "") +
                  " (expected ring, megatron, pytorch-pool or hook-fanout)");
}

// Each family's options, so that `collmc gen FAMILY --help` lists exactly what FAMILY reads.
po::options_description family_options(Family family) {
  po::options_description d;
  d.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                  "write the scenario to FILE (default, or '-': standard output)");
  // The world size: `--ranks N` and `--world N` are the same option in every family.
  auto world = [&d](const char* what, int by_default) {
    d.add_options()("ranks", po::value<int>()->value_name("N"),
                    (std::string(what) + " (default " + std::to_string(by_default) + ")").c_str())(
        "world", po::value<int>()->value_name("N"), "the same as --ranks");
  };
  auto order = [&d](const char* what) {
    d.add_options()("order", po::value<std::string>()->default_value("list")->value_name("ORDER"), what);
  };
  auto late_segments = [&d](const char* by_default) {
    d.add_options()("late-segments", po::value<std::string>()->default_value(by_default)->value_name("WHICH"),
                    "pool segments allocated after registration, which the allocator hook registers on every "
                    "group: none, some (every rank but the last) or all");
  };
  auto size = [&d](const char* name, int by_default, const char* what) {
    d.add_options()(name, po::value<int>()->default_value(by_default)->value_name("N"), what);
  };
  switch (family) {
    case Family::Ring:
      size("comms", 3, "number of two-rank communicators (and ranks) in the ring");
      world("the same as --comms: the ring has as many ranks as comms", 3);
      d.add_options()("agreed", "register in one agreed order, lower comm first (safe)")(
          "profile", po::value<std::string>()->default_value("nccl")->value_name("PROFILE"), "nccl or mpi");
      break;
    case Family::Megatron:
      world("world size (ranks)", 8);
      size("tp", 1, "tensor-parallel size");
      size("cp", 1, "context-parallel size");
      size("pp", 1, "pipeline-parallel size");
      size("ep", 1, "expert-parallel size");
      size("etp", 1, "expert tensor-parallel size");
      size("dist-opt-instances", 1, "distributed-optimizer instances (the data-parallel group split into this many)");
      d.add_options()("ubr-groups", po::value<std::string>()->value_name("LIST"),
                      "groups the symmetric pool is registered on, comma-separated: dense, expert, outer (needs "
                      "--dist-opt-instances 2 or more), dense-ag (default: dense,expert, and outer when there is one)");
      order("registration order: list (every rank in the list order), per-rank (each rank its own order) or sorted");
      late_segments("none");
      d.add_options()("collectives", "a training step's all-reduce on every chosen group after registration");
      break;
    case Family::PytorchPool:
      world("world size (ranks)", 4);
      d.add_options()("groups", po::value<std::vector<std::string>>()->multitoken()->value_name("SPEC"),
                      "process groups: NAME:all, NAME:consecutive:K (blocks of K ranks) or NAME:strided:K (K ranks "
                      "spaced W/K apart); default: dp:consecutive:2 ep:strided:2");
      order("order of the hook's late-segment registrations: list, per-rank or sorted");
      late_segments("all");
      break;
    case Family::HookFanout:
      world("world size (ranks)", 4);
      size("comms", 3, "communicators over all ranks");
      d.add_options()("sorted", "register on the comms in sorted order (safe); default: each rank its own order");
      break;
  }
  return d;
}

}  // namespace

int cmd_gen(const std::vector<std::string>& args) {
  if (args.empty()) throw po::error("gen needs a family: ring, megatron, pytorch-pool or hook-fanout");
  const Family family = family_named(args.front());
  const po::variables_map vm =
      parse_options(std::vector<std::string>(args.begin() + 1, args.end()), family_options(family));
  auto order_of = [&]() {
    const std::string order = vm["order"].as<std::string>();
    if (order == "list") return gen::RegistrationOrder::List;
    if (order == "per-rank") return gen::RegistrationOrder::PerRank;
    if (order == "sorted") return gen::RegistrationOrder::Sorted;
    throw po::error("--order takes list, per-rank or sorted");
  };
  auto late_of = [&]() {
    const std::string late = vm["late-segments"].as<std::string>();
    if (late == "none") return gen::LateSegments::None;
    if (late == "some") return gen::LateSegments::Some;
    if (late == "all") return gen::LateSegments::All;
    throw po::error("--late-segments takes none, some or all");
  };
  // --ranks and --world name one thing; both given, they must agree.
  auto world_size = [&](int by_default) {
    if (vm.count("ranks") && vm.count("world") && vm["ranks"].as<int>() != vm["world"].as<int>())
      throw po::error("--ranks " + std::to_string(vm["ranks"].as<int>()) + " and --world " +
                      std::to_string(vm["world"].as<int>()) + " disagree (they are the same option)");
    if (vm.count("ranks")) return vm["ranks"].as<int>();
    if (vm.count("world")) return vm["world"].as<int>();
    return by_default;
  };
  std::string text;
  switch (family) {
    case Family::PytorchPool: {
      gen::PytorchPoolConfig c;
      c.world = world_size(4);
      // By default two overlapping families (blocks of two, and ranks W/2 apart), so that the family
      // works with no option, like the others.
      c.groups = vm.count("groups") ? vm["groups"].as<std::vector<std::string>>()
                                    : std::vector<std::string>{"dp:consecutive:2", "ep:strided:2"};
      c.order = order_of();
      c.late_segments = late_of();
      text = gen::pytorch_pool_scenario(c);
      break;
    }
    case Family::Ring: {
      const std::string profile = vm["profile"].as<std::string>();
      if (profile != "nccl" && profile != "mpi") throw po::error("--profile takes nccl or mpi");
      int comms = vm["comms"].as<int>();
      if (vm.count("ranks") || vm.count("world")) {
        if (!vm["comms"].defaulted() && world_size(comms) != comms)
          throw po::error("--comms " + std::to_string(comms) + " and --ranks " + std::to_string(world_size(comms)) +
                          " disagree: a ring has as many ranks as comms");
        comms = world_size(comms);
      }
      text = gen::ring_scenario(comms, vm.count("agreed") > 0, profile == "mpi");
      break;
    }
    case Family::HookFanout:
      text = gen::hook_fanout_scenario(world_size(4), vm["comms"].as<int>(), vm.count("sorted") > 0);
      break;
    case Family::Megatron: {
      gen::MegatronConfig c;
      c.world = world_size(8);
      c.tp = vm["tp"].as<int>();
      c.cp = vm["cp"].as<int>();
      c.pp = vm["pp"].as<int>();
      c.ep = vm["ep"].as<int>();
      c.etp = vm["etp"].as<int>();
      c.dist_opt_instances = vm["dist-opt-instances"].as<int>();
      c.ubr_groups.clear();
      // The outer group exists only with two or more optimizer instances: the default leaves it out
      // otherwise, so that `collmc gen megatron` works with no option at all.
      const bool has_outer = c.dist_opt_instances > 1;
      std::string groups = vm.count("ubr-groups") ? vm["ubr-groups"].as<std::string>()
                           : has_outer            ? std::string("dense,expert,outer")
                                                  : std::string("dense,expert");
      for (size_t start = 0; start <= groups.size();) {
        size_t comma = groups.find(',', start);
        if (comma == std::string::npos) comma = groups.size();
        if (comma > start) c.ubr_groups.push_back(groups.substr(start, comma - start));
        start = comma + 1;
      }
      if (!has_outer && std::find(c.ubr_groups.begin(), c.ubr_groups.end(), "outer") != c.ubr_groups.end())
        throw po::error(
            "--ubr-groups outer needs --dist-opt-instances 2 or more (the outer group joins the "
            "optimizer instances); with one instance use --ubr-groups dense,expert");
      c.order = order_of();
      c.late_segments = late_of();
      c.collectives = vm.count("collectives") > 0;
      text = gen::megatron_scenario(c);
      break;
    }
  }
  const std::string output = vm.count("output") ? vm["output"].as<std::string>() : "-";
  write_file(output, text);
  if (!is_stdout(output)) std::cerr << "wrote " << output << "\n";
  return 0;
}

}  // namespace collmc::cli
