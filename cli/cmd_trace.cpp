// collmc trace import: turn recorder traces, Flight Recorder dumps or NCCL logs into a scenario.
#include <iostream>
#include <sstream>

#include "cli_common.h"
#include "collmc/model/parser.h"
#include "collmc/model/source.h"
#include "collmc/traces/import.h"
#include "collmc/traces/open_orders.h"
#include "collmc/traces/predict.h"
#include "commands.h"

namespace collmc::cli {

namespace {

traces::OpenOrdersOptions open_orders_options(const po::variables_map& vm) {
  traces::OpenOrdersOptions options;
  std::string kinds = vm["open-kinds"].as<std::string>();
  if (kinds == "all") {
    for (auto k : traces::all_open_kinds()) options.kinds.insert(k);
  } else {
    size_t pos = 0;
    while (pos <= kinds.size()) {
      size_t comma = kinds.find(',', pos);
      std::string name = kinds.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
      auto kind = traces::parse_open_kind(name);
      if (!kind)
        throw po::error("--open-kinds: unknown kind '" + name + "' (expected all, or registrations, comms, threads)");
      options.kinds.insert(*kind);
      if (comma == std::string::npos) break;
      pos = comma + 1;
    }
  }
  if (vm.count("keep-order")) {
    for (const auto& spec : vm["keep-order"].as<std::vector<std::string>>()) {
      try {
        options.keep.push_back(traces::parse_keep_order(spec));
      } catch (const std::invalid_argument& e) {
        throw po::error(e.what());
      }
    }
  }
  return options;
}

}  // namespace

int cmd_trace(const std::vector<std::string>& args) {
  if (args.empty() || args.front().rfind('-', 0) == 0)
    throw po::error(
        "trace needs a subcommand: import PATH... -o FILE.cmc [--format auto|recorder|flight-recorder|nccl-log]");
  if (args.front() != "import")
    throw po::error("unknown subcommand '" + args.front() + "'" +
                    (model::closest_spelling(args.front(), {"import"}) ? "; did you mean 'import'?"
                                                                       : " (the one there is: import)"));
  po::options_description d("trace import");
  d.add_options()("output,o", po::value<std::string>()->value_name("FILE"),
                  "write the scenario to FILE (default, or '-': standard output; the summary then goes to stderr)")(
      "format", po::value<std::string>()->default_value("auto")->value_name("FORMAT"),
      "auto, recorder, flight-recorder or nccl-log")("name", po::value<std::string>()->value_name("TEXT"),
                                                     "the scenario's title")(
      "no-origins", "leave out the per-call origin comments")("quiet", "do not print the summary")(
      "verbose", "print every line of the summary (default: at most about 40)")(
      "full-history",
      "keep every call (default: per communicator, leave out the collectives every member completed before the "
      "earliest one some member did not; they cannot take part in a hang, and the summary says what was left out)")(
      "threads", po::value<unsigned>()->default_value(0)->value_name("N"), "read files on N threads (0: one per core)")(
      "open-orders",
      "predict: write the recorded orders the program does not force as any_order, so the check explores "
      "the orders another run of the program could take; the summary says which orders were opened and why, "
      "and whether another order deadlocks (docs/TRACES.md, \"Open orders\", says what is assumed)")(
      "open-kinds", po::value<std::string>()->default_value("all")->value_name("LIST"),
      "with --open-orders: the kinds of order to open, comma-separated: registrations (window or buffer "
      "registrations, or deregistrations, issued back to back with no call between them, as from an "
      "allocator hook or a loop over a map), comms (registrations, collectives and send/recv on different "
      "communicators between the same host syncs, sharing no buffer), threads (calls of different host "
      "threads: already concurrent, listed), or all")(
      "keep-order", po::value<std::vector<std::string>>()->value_name("SPEC"),
      "with --open-orders: keep a recorded order the program forces. COMM: calls on COMM keep their place; "
      "COMM1,COMM2: calls on these keep their order relative to each other; rank=R: nothing of rank R is "
      "opened. COMM is a communicator's id, label or scenario name. Repeatable")(
      "no-predict", "with --open-orders: do not check the recorded and the opened orders at import")(
      "predict-time", po::value<Seconds>()->default_value(Seconds{60})->value_name("S"),
      "with --open-orders: seconds each of the two checks may take before it says inconclusive (0: no limit)")(
      "path", po::value<std::vector<std::string>>(), "trace files or directories");
  auto [vm, paths] = parse_with_positional(std::vector<std::string>(args.begin() + 1, args.end()), d, "path",
                                           "trace import needs PATH... (trace files or directories)");
  traces::TraceFormat format;
  try {
    format = traces::parse_trace_format(vm["format"].as<std::string>());
  } catch (const std::invalid_argument& e) {
    throw po::error(e.what());
  }
  const bool open = vm.count("open-orders") > 0;
  if (!open)
    for (const char* needs_open : {"keep-order", "no-predict", "open-kinds", "predict-time"})
      if (vm.count(needs_open) && !vm[needs_open].defaulted())
        throw po::error(std::string("--") + needs_open + " needs --open-orders");
  try {
    traces::ImportOptions import_options;
    // Open orders predict what another run could do with the same calls, completed ones included: the trim
    // keeps only what the recorded order's hang needs, so it is off with --open-orders.
    import_options.full_history = vm.count("full-history") > 0 || open;
    import_options.threads = vm["threads"].as<unsigned>();
    traces::Trace trace = traces::import_traces(paths, format, import_options);
    traces::EmitOptions options;
    if (vm.count("name")) options.name = vm["name"].as<std::string>();
    options.include_origins = !vm.count("no-origins");
    // "-" (or no -o): the scenario on stdout, everything else on stderr.
    const bool to_file = vm.count("output") && !is_stdout(vm["output"].as<std::string>());
    if (to_file) check_writable(vm["output"].as<std::string>());
    const std::string out_name = to_file ? vm["output"].as<std::string>() : "<imported>";
    const std::string recorded_text = traces::emit_scenario(trace, options);
    std::string text = recorded_text;
    std::vector<std::string> open_lines;
    std::optional<traces::OpenOrdersResult> opened;
    if (open) {
      try {
        opened = traces::open_orders(trace, open_orders_options(vm));
      } catch (const std::invalid_argument& e) {
        throw po::error(e.what());
      }
      open_lines = traces::open_orders_summary(*opened);
      options.header_comments.push_back("Orders opened by --open-orders (`any_order`): another run may take them.");
      for (const auto& line : open_lines) options.header_comments.push_back(line);
      text = traces::emit_scenario(opened->trace, options);
    }
    // The emitter promises a scenario that parses; hold it to that before writing anything.
    model::parse_string(text, out_name);
    std::ostream& report = to_file ? std::cout : std::cerr;
    if (!vm.count("quiet")) {
      for (const auto& line : traces::import_summary(trace, vm.count("verbose") > 0)) report << line << "\n";
      for (const auto& line : open_lines) report << "  " << line << "\n";
    }
    if (to_file) {
      write_file(vm["output"].as<std::string>(), text);
      if (!vm.count("quiet")) report << "wrote " << vm["output"].as<std::string>() << "\n";
    } else {
      std::cout << text;
    }
    if (opened && !opened->opened.empty() && !vm.count("no-predict")) {
      checker::SearchOptions search;
      search.time_limit_s = vm["predict-time"].as<Seconds>().value;
      traces::Prediction prediction = traces::predict(recorded_text, text, out_name, search);
      report << "prediction: " << prediction.finding << "\n";
      // The summary keeps to the cycle; the whole counterexample is `collmc check`'s to print.
      if (!prediction.report.empty() && !vm.count("quiet")) {
        std::istringstream lines(prediction.report);
        bool in_cycle = false;
        for (std::string line; std::getline(lines, line);) {
          if (line.rfind("wait-for cycle", 0) == 0) in_cycle = true;
          if (line.rfind("statistics:", 0) == 0) in_cycle = false;
          if (in_cycle) report << "  " << line << "\n";
        }
        report << "  the schedule, where each rank stands and the statistics: collmc check "
               << (to_file ? vm["output"].as<std::string>() : std::string("FILE")) << "\n";
      }
    }
    return kExitSafe;
  } catch (const traces::TraceInputError& e) {
    std::cerr << "collmc trace import: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace collmc::cli
