// collmc gen: write scenarios for real parallel layouts.
#include <algorithm>
#include <iostream>
#include <map>

#include "collmc/model/source.h"

#include "cli_common.h"
#include "collmc/gen/generators.h"
#include "collmc/model/parser.h"
#include "collmc/traces/import.h"
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

// Megatron-LM's argument names for the sizes `gen megatron` takes, and its own short names.
constexpr std::pair<const char*, const char*> kMegatronNames[] = {
    {"tensor-model-parallel-size", "tp"},   {"context-parallel-size", "cp"},
    {"pipeline-model-parallel-size", "pp"}, {"expert-model-parallel-size", "ep"},
    {"expert-tensor-parallel-size", "etp"}, {"num-distributed-optimizer-instances", "dist-opt-instances"},
};

// The sizes a pasted launch line sets (Megatron-LM's names and `--name=N`; torchrun's --nproc-per-node and
// --nnodes, or --world-size, make the world), by gen megatron's own names; `ignored` gets the flags it does
// not use.
std::map<std::string, int> megatron_line_sizes(const std::string& line, std::vector<std::string>& ignored) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  for (char c : line) {
    if (quote != 0) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ' ' || c == '\t' || c == '\n' || c == '\\') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  auto number = [](const std::string& flag, const std::string& text) {
    try {
      size_t used = 0;
      const int v = std::stoi(text, &used);
      if (used == text.size() && v > 0) return v;
    } catch (const std::exception&) {
    }
    throw po::error("--megatron-args: " + flag + " takes a positive number, not '" + text + "'");
  };
  std::map<std::string, int> out;
  int nproc = 0, nnodes = 0;
  for (size_t i = 0; i < words.size(); ++i) {
    const std::string& w = words[i];
    if (w.rfind("--", 0) != 0) continue;  // a program, a value of an ignored flag
    std::string flag = w.substr(2), value;
    if (const size_t eq = flag.find('='); eq != std::string::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    std::replace(flag.begin(), flag.end(), '_', '-');
    const char* ours = nullptr;
    for (const auto& [name, same] : kMegatronNames)
      if (flag == name) ours = same;
    const bool world_flag = flag == "nproc-per-node" || flag == "nnodes" || flag == "world-size";
    if (ours == nullptr && !world_flag) {
      ignored.push_back("--" + flag);
      continue;
    }
    if (value.empty()) {
      if (i + 1 >= words.size()) throw po::error("--megatron-args: --" + flag + " has no value");
      value = words[++i];
    }
    const int v = number("--" + flag, value);
    if (flag == "nproc-per-node")
      nproc = v;
    else if (flag == "nnodes")
      nnodes = v;
    else if (flag == "world-size")
      out["world"] = v;
    else
      out[ours] = v;
  }
  if (nproc > 0 && !out.count("world")) out["world"] = nproc * std::max(nnodes, 1);
  return out;
}

// The group families a job built, by name (a group's description: torch's group_desc, which Megatron-LM sets),
// from its Flight Recorder dumps or torch shim traces; `world` gets the job's world size.
std::vector<gen::GroupFamily> families_built(const std::vector<std::string>& paths, int& world) {
  traces::ImportOptions options;
  options.full_history = true;
  const traces::Trace trace = traces::import_traces(paths, traces::TraceFormat::Auto, options);
  world = trace.world_size;
  std::map<std::string, gen::GroupFamily> by_name;
  for (const auto& c : trace.comms) {
    // Flight Recorder labels read "pg NAME (DESC)"; the torch shim's are the description itself.
    std::string desc = c.label;
    if (const size_t open = desc.find(" ("); open != std::string::npos && desc.back() == ')')
      desc = desc.substr(open + 2, desc.size() - open - 3);
    std::vector<std::pair<int, int>> members;
    for (const auto& [global, local] : c.members) members.emplace_back(local, global);
    std::sort(members.begin(), members.end());
    std::vector<int> ranks;
    for (const auto& m : members) ranks.push_back(m.second);
    gen::GroupFamily& f = by_name[desc];
    f.megatron = desc;
    if (std::find(f.groups.begin(), f.groups.end(), ranks) == f.groups.end()) f.groups.push_back(ranks);
  }
  std::vector<gen::GroupFamily> out;
  for (auto& [n, f] : by_name) out.push_back(std::move(f));
  return out;
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
      // Megatron-LM's own names (megatron/training/arguments.py), the same sizes: a launch line pasted as it is.
      for (const auto& [name, same] : kMegatronNames)
        d.add_options()(name, po::value<int>()->value_name("N"), (std::string("the same as --") + same).c_str());
      d.add_options()("groups-from", po::value<std::vector<std::string>>()->multitoken()->value_name("PATH"),
                      "take the groups the job really built instead of computing them: Flight Recorder dumps (their "
                      "pg_config) or torch shim traces (collmc record), found by Megatron-LM's group names "
                      "(INTRA_PARTIAL_DATA_PARALLEL_GROUP_WITH_CP, EXPERT_DATA_PARALLEL_GROUP, ...)");
      d.add_options()("megatron-args", po::value<std::string>()->value_name("LINE"),
                      "a Megatron-LM (or torchrun) launch line, pasted: its parallel sizes "
                      "(--tensor-model-parallel-size, ..., --num-distributed-optimizer-instances) and the world "
                      "(--nproc-per-node x --nnodes, or --world-size); flags collmc does not use are ignored, with a "
                      "note");
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
    const int given = vm.count("ranks")   ? vm["ranks"].as<int>()
                      : vm.count("world") ? vm["world"].as<int>()
                                          : by_default;
    // The sizes `check` takes (model::kMaxWorldRanks): a scenario gen writes is one check reads.
    if (given < 1 || given > model::kMaxWorldRanks)
      throw po::error("world size " + std::to_string(given) + " out of range: expected 1.." +
                      std::to_string(model::kMaxWorldRanks) + " (the sizes `collmc check` takes)");
    return given;
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
      // A size may come from collmc's name, Megatron-LM's name or the pasted launch line; given twice, the
      // values must agree.
      std::vector<std::string> ignored;
      const std::map<std::string, int> pasted =
          vm.count("megatron-args") ? megatron_line_sizes(vm["megatron-args"].as<std::string>(), ignored)
                                    : std::map<std::string, int>{};
      auto sized = [&](const std::string& ours, int by_default) {
        std::vector<std::pair<std::string, int>> given;
        if (vm.count(ours) && !vm[ours].defaulted()) given.emplace_back("--" + ours, vm[ours].as<int>());
        for (const auto& [name, same] : kMegatronNames)
          if (ours == same && vm.count(name)) given.emplace_back(std::string("--") + name, vm[name].as<int>());
        if (auto it = pasted.find(ours); it != pasted.end()) given.emplace_back("--megatron-args", it->second);
        for (const auto& g : given)
          if (g.second != given.front().second)
            throw po::error(given.front().first + " " + std::to_string(given.front().second) + " and " + g.first + " " +
                            std::to_string(g.second) + " disagree (they set the same size)");
        return given.empty() ? by_default : given.front().second;
      };
      gen::MegatronConfig c;
      c.world = world_size(8);
      if (auto it = pasted.find("world"); it != pasted.end()) {
        if ((vm.count("ranks") || vm.count("world")) && world_size(8) != it->second)
          throw po::error("--world " + std::to_string(world_size(8)) + " and the launch line's world " +
                          std::to_string(it->second) + " disagree");
        c.world = it->second;
      }
      c.tp = sized("tp", 1);
      c.cp = sized("cp", 1);
      c.pp = sized("pp", 1);
      c.ep = sized("ep", 1);
      c.etp = sized("etp", 1);
      c.dist_opt_instances = sized("dist-opt-instances", 1);
      if (!ignored.empty()) {
        std::string list;
        for (size_t i = 0; i < ignored.size() && i < 12; ++i) list += (i ? ", " : "") + ignored[i];
        if (ignored.size() > 12) list += ", ... (" + std::to_string(ignored.size()) + " in all)";
        std::cerr << "note: --megatron-args: ignored " << ignored.size() << " flag" << (ignored.size() == 1 ? "" : "s")
                  << " that do not change the process groups: " << list << "\n";
      }
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
      if (vm.count("groups-from") && !vm.count("ubr-groups")) c.ubr_groups.clear();  // every role the job has
      if (!vm.count("groups-from") && !has_outer &&
          std::find(c.ubr_groups.begin(), c.ubr_groups.end(), "outer") != c.ubr_groups.end())
        throw po::error(
            "--ubr-groups outer needs --dist-opt-instances 2 or more (the outer group joins the "
            "optimizer instances); with one instance use --ubr-groups dense,expert");
      c.order = order_of();
      c.late_segments = late_of();
      c.collectives = vm.count("collectives") > 0;
      if (vm.count("groups-from")) {
        const auto paths = vm["groups-from"].as<std::vector<std::string>>();
        int job_world = 0;
        const auto built = families_built(paths, job_world);
        if (!vm.count("ranks") && !vm.count("world") && !pasted.count("world")) c.world = job_world;
        std::string source;
        for (const auto& p : paths) source += (source.empty() ? "" : " ") + p;
        text = gen::megatron_scenario_from_groups(built, c, source);
      } else {
        text = gen::megatron_scenario(c);
      }
      break;
    }
  }
  const std::string output = vm.count("output") ? vm["output"].as<std::string>() : "-";
  write_file(output, text);
  if (!is_stdout(output)) std::cerr << "wrote " << output << "\n";
  return 0;
}

}  // namespace collmc::cli
