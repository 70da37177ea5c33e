// collmc replay: run a schedule on real hardware and compare with the model.
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "cli_common.h"
#include "cmd_shrink.h"
#include "collmc/checker/suite.h"
#include "collmc/model/world.h"
#include "collmc/replay/plan.h"
#include "collmc/replay/replay.h"
#include "commands.h"

namespace collmc::cli {

using model::Verdict;

int cmd_replay(const std::vector<std::string>& args) {
  po::options_description d = search_options();
  d.add_options()("hang-after", po::value<Seconds>()->default_value(Seconds{5})->value_name("S"),
                  "no progress for S seconds is a hang (for hangs the model did not predict)")(
      "confirm-after", po::value<Seconds>()->default_value(Seconds{0.5})->value_name("S"),
      "every rank in the call the model predicts it blocks in and no progress for S seconds: the hang is "
      "confirmed at once (0: wait for --hang-after)")(
      "launcher", po::value<std::string>()->default_value("local")->value_name("HOW"),
      "how rank processes start: local (forked here, or mpirun on this host for MPI), mpirun or srun (one rank "
      "process per GPU or CPU rank on any number of nodes, coordinated through a TCP store)")(
      "hosts", po::value<std::string>()->value_name("LIST"),
      "with --launcher mpirun: mpirun --host LIST; with srun: --nodelist LIST")(
      "np", po::value<int>()->value_name("N"),
      "the number of rank processes: must equal the scenario's ranks (checked)")(
      "launcher-arg", po::value<std::vector<std::string>>()->value_name("ARG"),
      "with --launcher mpirun|srun: one more argument for the launcher (repeat it), e.g. --launcher-arg=--mca "
      "--launcher-arg=btl_tcp_if_include --launcher-arg=eth0")(
      "store-host", po::value<std::string>()->value_name("HOST"),
      "the address the ranks reach this host's TCP store at (default: 127.0.0.1 on one host, else this host's name)")(
      "json", po::value<std::string>()->value_name("OUT"), "write the replay report as JSON to OUT")(
      "free", "do not enforce the schedule's order (an experiment)")(
      "calibrate", "replay every scenario under the given directories and print the agreement table")(
      "table", po::value<std::string>()->value_name("OUT"), "with --calibrate: also write the table (Markdown) to OUT")(
      "backend", po::value<std::string>()->value_name("NAME"),
      "nccl (GPUs) or mpi (mpirun on CPUs); default: by the scenario's profile")(
      "shrink", "more ranks than GPUs: shrink the scenario to as many ranks first (collmc shrink)")(
      "nccl", po::value<std::string>()->value_name("LIB"),
      "load this libnccl.so in the rank processes (default: $COLLMC_NCCL_LIBRARY, else the system's libnccl.so.2); "
      "the report names the version loaded. NCCL 2.30+ lets ranks of one communicator share a GPU")(
      "ranks-per-gpu", po::value<int>()->value_name("N")->default_value(2),
      "when ranks of one communicator must share a GPU (NCCL 2.30+): at most N of them per GPU (NCCL's default "
      "resources allow 2)")("input", po::value<std::vector<std::string>>(), "result or scenario");
  const auto [vm, inputs] =
      parse_with_positional(args, d, "input", "replay needs a result (.json) or a scenario (.cmc)");
  replay::ReplayOptions options;
  options.hang_after_s = vm["hang-after"].as<Seconds>().value;
  options.free_running = vm.count("free") > 0;
  const std::string launcher = vm["launcher"].as<std::string>();
  if (launcher == "local")
    options.launcher = replay::LauncherKind::Local;
  else if (launcher == "mpirun")
    options.launcher = replay::LauncherKind::Mpirun;
  else if (launcher == "srun")
    options.launcher = replay::LauncherKind::Srun;
  else
    throw po::error("--launcher takes local, mpirun or srun, not '" + launcher + "'");
  if (options.launcher == replay::LauncherKind::Local &&
      (vm.count("hosts") || vm.count("launcher-arg") || vm.count("store-host")))
    throw po::error("--hosts, --launcher-arg and --store-host need --launcher mpirun or srun");
  if (vm.count("hosts")) options.hosts = vm["hosts"].as<std::string>();
  if (vm.count("launcher-arg")) options.launcher_args = vm["launcher-arg"].as<std::vector<std::string>>();
  if (vm.count("store-host")) options.store_host = vm["store-host"].as<std::string>();
  options.confirm_after_s = vm["confirm-after"].as<Seconds>().value;
  if (options.confirm_after_s < 0 || options.hang_after_s <= 0)
    throw po::error("--confirm-after takes S >= 0 and --hang-after S > 0");
  if (vm.count("backend")) {
    const std::string backend = vm["backend"].as<std::string>();
    if (backend != "nccl" && backend != "mpi") throw po::error("--backend takes nccl or mpi, not '" + backend + "'");
    options.backend = backend == "mpi" ? replay::BackendKind::Mpi : replay::BackendKind::Nccl;
  }
  options.ranks_per_gpu = vm["ranks-per-gpu"].as<int>();
  if (options.ranks_per_gpu < 1) throw po::error("--ranks-per-gpu takes N >= 1");
  if (vm.count("nccl")) {
    std::error_code ec;
    const auto lib = std::filesystem::absolute(vm["nccl"].as<std::string>(), ec);
    if (ec || !std::filesystem::is_regular_file(lib))
      throw po::error("--nccl " + vm["nccl"].as<std::string>() + ": no such library file");
    // Through the environment, so that every rank process sees it (forked or started by mpirun).
    options.nccl_library = lib.string();
    setenv(replay::kNcclLibraryVariable, options.nccl_library.c_str(), 1);
  }
  const auto search = to_search(vm);
  if (vm.count("json")) check_writable(vm["json"].as<std::string>());
  if (vm.count("table")) check_writable(vm["table"].as<std::string>());
  if (vm.count("calibrate")) {
    auto rows = replay::calibrate(checker::collect_scenarios(inputs), options, search);
    std::string table = replay::calibration_table(rows);
    std::cout << table;
    if (vm.count("table")) write_file(vm["table"].as<std::string>(), table);
    if (!rows.empty() && rows.back().interrupted) return 130;  // ended by the user's signal
    bool all = !rows.empty() && std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.agrees; });
    return all ? 0 : 1;
  }
  if (inputs.size() != 1) throw po::error("replay takes one result or scenario (or --calibrate DIR...)");
  model::World world;
  replay::ReplayPlan plan;
  const std::string& input = inputs.front();
  if (input.size() > 5 && input.substr(input.size() - 5) == ".json") {
    if (vm.count("shrink")) throw po::error("--shrink takes a scenario (.cmc), not a result");
    plan = replay::plan_from_json(input, world);
  } else {
    world = model::load_world(input);
    if (options.backend != replay::BackendKind::Mpi && world.knobs.profile == model::Profile::Nccl) {
      replay::NcclProbe probe;
      replay::probe_machine(probe);
      replay::model_loaded_nccl(world, probe.version);
    }
    if (vm.count("shrink")) world = shrink_for_replay(input, std::move(world), search, options.ranks_per_gpu);
    plan = replay::plan_for_scenario(world, search);
  }
  plan.world = &world;
  if (vm.count("np") && vm["np"].as<int>() != world.ranks)
    throw po::error("--np " + std::to_string(vm["np"].as<int>()) + ": the scenario has " + std::to_string(world.ranks) +
                    " ranks, and the replay runs one process per rank");
  auto report = replay::replay(plan, options);
  std::cout << replay::text_report(report);
  if (vm.count("json")) write_file(vm["json"].as<std::string>(), replay::json_report(report));
  if (report.outcome == replay::Outcome::Refused) return kExitBadInput;
  if (report.outcome == replay::Outcome::Interrupted) return 128 + report.interrupted_by;  // as the shell reports it
  return report.agrees ? 0 : 1;
}

}  // namespace collmc::cli
