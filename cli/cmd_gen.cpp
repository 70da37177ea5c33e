// collmc gen: write scenarios for real parallel layouts.
#include <iostream>

#include "cli_common.h"
#include "collmc/gen/generators.h"
#include "commands.h"

namespace collmc::cli {

using model::Verdict;

int cmd_gen(const std::vector<std::string>& args) {
  if (args.empty()) throw po::error("gen needs a family: ring, megatron, pytorch-pool or hook-fanout");
  const std::string family = args.front();
  po::options_description d("gen");
  d.add_options()("output,o", po::value<std::string>(), "write the scenario to FILE (default: stdout)")(
      "comms", po::value<int>()->default_value(3), "ring, hook-fanout: number of comms")(
      "agreed", "ring: one agreed order (safe)")("profile", po::value<std::string>()->default_value("nccl"),
                                                 "ring: nccl or mpi")(
      "ranks", po::value<int>()->default_value(4), "hook-fanout: world size")("sorted", "hook-fanout: sorted order")(
      "world", po::value<int>()->default_value(8), "megatron: world size")(
      "tp", po::value<int>()->default_value(1), "")("cp", po::value<int>()->default_value(1), "")(
      "pp", po::value<int>()->default_value(1), "")("ep", po::value<int>()->default_value(1), "")(
      "etp", po::value<int>()->default_value(1), "")("dist-opt-instances", po::value<int>()->default_value(1), "")(
      "ubr-groups", po::value<std::string>()->default_value("dense,expert,outer"),
      "megatron: groups the pool is registered on (dense, expert, outer, dense-ag)")(
      "order", po::value<std::string>()->default_value("list"), "list, per-rank or sorted")(
      "late-segments", po::value<std::string>()->default_value("none"), "none, some or all")(
      "collectives", "megatron: a training step's collectives after registration")(
      "groups", po::value<std::vector<std::string>>()->multitoken(),
      "pytorch-pool: NAME:all, NAME:consecutive:K or NAME:strided:K ...");
  po::variables_map vm;
  po::store(po::command_line_parser(std::vector<std::string>(args.begin() + 1, args.end())).options(d).run(), vm);
  po::notify(vm);
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
  std::string text;
  if (family == "pytorch-pool") {
    gen::PytorchPoolConfig c;
    c.world = vm["ranks"].as<int>();
    if (vm.count("groups")) c.groups = vm["groups"].as<std::vector<std::string>>();
    c.order = order_of();
    c.late_segments = vm["late-segments"].defaulted() ? gen::LateSegments::All : late_of();
    text = gen::pytorch_pool_scenario(c);
  } else if (family == "ring") {
    const std::string profile = vm["profile"].as<std::string>();
    if (profile != "nccl" && profile != "mpi") throw po::error("--profile takes nccl or mpi");
    text = gen::ring_scenario(vm["comms"].as<int>(), vm.count("agreed") > 0, profile == "mpi");
  } else if (family == "hook-fanout") {
    text = gen::hook_fanout_scenario(vm["ranks"].as<int>(), vm["comms"].as<int>(), vm.count("sorted") > 0);
  } else if (family == "megatron") {
    gen::MegatronConfig c;
    c.world = vm["world"].as<int>();
    c.tp = vm["tp"].as<int>();
    c.cp = vm["cp"].as<int>();
    c.pp = vm["pp"].as<int>();
    c.ep = vm["ep"].as<int>();
    c.etp = vm["etp"].as<int>();
    c.dist_opt_instances = vm["dist-opt-instances"].as<int>();
    c.ubr_groups.clear();
    std::string groups = vm["ubr-groups"].as<std::string>();
    for (size_t start = 0; start <= groups.size();) {
      size_t comma = groups.find(',', start);
      if (comma == std::string::npos) comma = groups.size();
      if (comma > start) c.ubr_groups.push_back(groups.substr(start, comma - start));
      start = comma + 1;
    }
    c.order = order_of();
    c.late_segments = late_of();
    c.collectives = vm.count("collectives") > 0;
    text = gen::megatron_scenario(c);
  } else {
    throw po::error("unknown family '" + family + "': expected ring, megatron, pytorch-pool or hook-fanout");
  }
  if (vm.count("output"))
    write_file(vm["output"].as<std::string>(), text);
  else
    std::cout << text;
  return 0;
}

}  // namespace collmc::cli
