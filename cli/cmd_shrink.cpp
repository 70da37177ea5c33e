// collmc shrink: the smallest scenario found that still ends in the same kind of violation.
#include "cmd_shrink.h"

#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "cli_common.h"
#include "collmc/model/world.h"
#include "collmc/replay/nccl_support.h"
#include "collmc/replay/replay.h"
#include "collmc/shrink/shrink.h"
#include "commands.h"

namespace collmc::cli {

namespace {

shrink::ShrinkOptions options_for(const checker::SearchOptions& search) {
  shrink::ShrinkOptions options;
  options.search = search;
  // --time-limit bounds the whole shrink; each check gets what is left of it.
  options.time_limit_s = search.time_limit_s;
  options.search.time_limit_s = 0;
  return options;
}

}  // namespace

model::World shrink_for_replay(const std::string& input, model::World world, const checker::SearchOptions& search,
                               int ranks_per_gpu) {
  if (world.knobs.profile != model::Profile::Nccl) return world;
  replay::NcclProbe probe;
  // Nothing to do when there is no GPU (the replay says why it cannot run), or when the ranks fit
  // (ranks that share no communicator may share a GPU, and from NCCL 2.30 ranks of one may too).
  if (!replay::probe_machine(probe).empty() || probe.gpus < 1) return world;
  const int gpus = probe.gpus;
  if (replay::place_ranks(world, gpus, probe.version, ranks_per_gpu).refusal.empty()) return world;
  shrink::ShrinkOptions options = options_for(search);
  // As many ranks as the GPUs hold: one each, or from NCCL 2.30 up to ranks_per_gpu of a comm each.
  options.max_ranks = probe.version >= replay::kNcclMultiRankGpuSince ? gpus * ranks_per_gpu : gpus;
  options.source_name = input;
  options.output_name = std::filesystem::path(input).stem().string() + ".shrunk.cmc";
  const auto result = shrink::shrink(world, options);
  if (result.outcome != shrink::Outcome::Shrunk)
    throw std::runtime_error(input + " has " + std::to_string(world.ranks) + " ranks and this machine " +
                             std::to_string(gpus) + " GPU(s), and there is no violation to shrink (its check is " +
                             std::string(model::verdict_name(result.verdict)) + ")");
  if (!result.reached_max_ranks)
    throw std::runtime_error("no failing scenario of at most " + std::to_string(options.max_ranks) +
                             " ranks (what the GPUs here hold) found in " + input + "; the smallest has " +
                             std::to_string(result.stats.after.ranks));
  write_file(options.output_name, result.text);
  std::cout << "shrunk " << input << " from " << world.ranks << " to " << result.stats.after.ranks
            << " ranks to fit the " << gpus << " GPU(s) here; replaying " << options.output_name << "\n"
            << shrink::stats_text(result.stats);
  return model::load_world(options.output_name);
}

int cmd_shrink(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("output,o", po::value<std::string>()->value_name("OUT"),
                  "write the shrunk scenario to OUT (required; not the input)")(
      "max-ranks", po::value<int>()->default_value(0)->value_name("N"),
      "aim at N ranks or fewer (the GPUs at hand); exit 1 if no such scenario was found")(
      "input", po::value<std::vector<std::string>>(), "scenario");
  const auto [vm, inputs] = parse_with_positional(args, d, "input", "shrink needs a scenario (.cmc)");
  if (inputs.size() != 1) throw po::error("shrink takes one scenario");
  if (!vm.count("output")) throw po::error("shrink needs -o OUT for the shrunk scenario");
  shrink::ShrinkOptions options = options_for(to_search(vm));
  options.max_ranks = vm["max-ranks"].as<int>();
  if (options.max_ranks < 0) throw po::error("--max-ranks must be at least 1");
  options.source_name = inputs.front();
  options.output_name = vm["output"].as<std::string>();
  {
    // Overwriting the input would lose the scenario that fails: refuse, as cp refuses a file onto itself.
    namespace fs = std::filesystem;
    std::error_code in_ec, out_ec;
    const fs::path in = fs::weakly_canonical(options.source_name, in_ec);
    const fs::path out = fs::weakly_canonical(options.output_name, out_ec);
    if (!in_ec && !out_ec && in == out)
      throw po::error("-o " + options.output_name + " is the input: write the shrunk scenario to another file");
  }
  check_writable(options.output_name);
  const model::World world = model::load_world(inputs.front());
  const auto result = shrink::shrink(world, options);
  if (result.outcome == shrink::Outcome::Safe) {
    std::cerr << "collmc shrink: " << inputs.front() << " is safe: there is no violation to shrink\n";
    return kExitBadInput;
  }
  if (result.outcome == shrink::Outcome::Inconclusive) {
    std::cerr << "collmc shrink: the check of " << inputs.front()
              << " is inconclusive (a limit stopped it): there is no counterexample to shrink\n";
    return kExitInconclusive;
  }
  write_file(options.output_name, result.text);
  std::cout << inputs.front() << ": " << model::verdict_name(result.verdict) << ", shrunk to " << options.output_name
            << "\n"
            << shrink::stats_text(result.stats);
  if (result.time_limit_hit)
    std::cout << "the time limit stopped the shrink: the result is the smallest found by then\n";
  if (!result.reached_max_ranks) {
    std::cout << "could not reach " << options.max_ranks << " ranks: the smallest failing scenario found has "
              << result.stats.after.ranks << "\n";
    return kExitViolation;
  }
  return 0;
}

}  // namespace collmc::cli
