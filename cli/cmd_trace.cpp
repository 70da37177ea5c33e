// collmc trace import: turn recorder traces, Flight Recorder dumps or NCCL logs into a scenario.
#include <iostream>

#include "cli_common.h"
#include "collmc/model/parser.h"
#include "collmc/model/source.h"
#include "collmc/traces/import.h"
#include "commands.h"

namespace collmc::cli {

int cmd_trace(const std::vector<std::string>& args) {
  if (args.empty() || args.front() != "import")
    throw po::error(
        "trace needs a subcommand: import PATH... -o FILE.cmc [--format auto|recorder|flight-recorder|nccl-log]");
  po::options_description d("trace import");
  d.add_options()("output,o", po::value<std::string>(), "write the scenario to FILE (default: stdout)")(
      "format", po::value<std::string>()->default_value("auto"), "auto, recorder, flight-recorder or nccl-log")(
      "name", po::value<std::string>(), "the scenario's title")("no-origins", "leave out the per-call origin comments")(
      "quiet", "do not print the summary")("path", po::value<std::vector<std::string>>(), "trace files or directories");
  auto [vm, paths] = parse_with_positional(std::vector<std::string>(args.begin() + 1, args.end()), d, "path",
                                           "trace import needs PATH... (trace files or directories)");
  traces::TraceFormat format;
  try {
    format = traces::parse_trace_format(vm["format"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  try {
    traces::Trace trace = traces::import_traces(paths, format);
    traces::EmitOptions options;
    if (vm.count("name")) options.name = vm["name"].as<std::string>();
    options.include_origins = !vm.count("no-origins");
    std::string text = traces::emit_scenario(trace, options);
    // The emitter promises a scenario that parses; hold it to that before writing anything.
    model::parse_string(text, vm.count("output") ? vm["output"].as<std::string>() : "<imported>");
    std::ostream& report = vm.count("output") ? std::cout : std::cerr;
    if (!vm.count("quiet")) {
      report << "imported " << trace.format << " traces: " << trace.world_size << " ranks, " << trace.comms.size()
             << " communicators\n";
      for (const auto& n : trace.notes) report << "  partial: " << n << "\n";
      for (const auto& line : traces::summarize(trace)) report << "  " << line << "\n";
    }
    if (vm.count("output")) {
      write_file(vm["output"].as<std::string>(), text);
      if (!vm.count("quiet")) report << "wrote " << vm["output"].as<std::string>() << "\n";
    } else {
      std::cout << text;
    }
    return kExitSafe;
  } catch (const traces::TraceInputError& e) {
    std::cerr << "collmc trace import: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace collmc::cli
