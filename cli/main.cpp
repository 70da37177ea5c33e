// collmc: thin command-line front end. Dispatches to one function per subcommand (commands.h); the
// help, the version and the usage errors of every subcommand are handled here, in one place.
#include <algorithm>
#include <iostream>
#include <string_view>

#include "cli_common.h"
#include "commands.h"
#include "version.h"

namespace {

using namespace collmc::cli;

struct Command {
  std::string_view name;
  int (*run)(const std::vector<std::string>&);
  std::string_view usage;    // after "collmc "; one line per form
  std::string_view summary;  // what it does, for `collmc --help` (first sentence) and `collmc CMD --help`
};

// A command's second word: `gen FAMILY`, `trace import`.
struct Subcommand {
  std::string_view command;
  std::string_view name;
  std::string_view usage;
  std::string_view summary;
};

constexpr Command kCommands[] = {
    {"check", cmd_check, "check FILE... [options]",
     "Search every schedule of each scenario. Prints the verdict, a schedule that reaches it, where each rank "
     "stands and, for a deadlock, the wait-for cycle."},
    {"test", cmd_test, "test PATH... [options]",
     "Check every .cmc file under the paths against its `expect` line. Prints a table and exits 1 if any "
     "disagrees."},
    {"replay", cmd_replay, "replay RESULT.json|FILE.cmc [options]\nreplay --calibrate DIR... [options]",
     "Run a schedule on real hardware (NCCL on GPUs, MPI under mpirun) and compare the outcome with the "
     "model's verdict."},
    {"gen", cmd_gen, "gen FAMILY [options]", "Write a scenario for a real parallel layout or a scalable family."},
    {"shrink", cmd_shrink, "shrink FILE.cmc -o SMALL.cmc [options]",
     "Find the smallest scenario that still ends in the same kind of violation."},
    {"trace", cmd_trace, "trace import PATH... [-o FILE.cmc] [options]",
     "Turn recorder traces, Flight Recorder dumps or NCCL logs into a scenario."},
    {"record", cmd_record, "record [options] [--] PROGRAM ARGS...",
     "Run PROGRAM with the recorder preloaded, so every process writes a trace; exits as PROGRAM did."},
};

constexpr Subcommand kSubcommands[] = {
    {"gen", "ring", "gen ring [options]",
     "N two-rank communicators in a ring; every rank registers a pool on its two comms (rotating order: a "
     "deadlock; --agreed: safe)."},
    {"gen", "megatron", "gen megatron [options]",
     "Megatron-LM's process groups for a TP/CP/PP/EP layout, a symmetric pool registered on some of them."},
    {"gen", "pytorch-pool", "gen pytorch-pool --groups SPEC... [options]",
     "Plain PyTorch process groups sharing one symmetric memory pool."},
    {"gen", "hook-fanout", "gen hook-fanout [options]",
     "W ranks, K comms over all of them; the allocator hook registers a new segment on every comm."},
    {"trace", "import", "trace import PATH... [-o FILE.cmc] [options]",
     "Turn recorder traces, Flight Recorder dumps or NCCL logs into a scenario."},
};

const Command* find_command(std::string_view name) {
  for (const auto& c : kCommands)
    if (c.name == name) return &c;
  return nullptr;
}

const Subcommand* find_subcommand(std::string_view command, const std::vector<std::string>& args) {
  if (args.empty()) return nullptr;
  for (const auto& s : kSubcommands)
    if (s.command == command && s.name == args.front()) return &s;
  return nullptr;
}

bool has_subcommands(std::string_view command) {
  return std::any_of(std::begin(kSubcommands), std::end(kSubcommands),
                     [&](const Subcommand& s) { return s.command == command; });
}

// "usage: collmc A\n       collmc B\n" for a usage of one or more lines.
void print_usage(std::ostream& out, std::string_view usage) {
  std::string_view prefix = "usage: ";
  while (!usage.empty()) {
    const size_t end = std::min(usage.find('\n'), usage.size());
    out << prefix << "collmc " << usage.substr(0, end) << "\n";
    prefix = "       ";
    usage.remove_prefix(std::min(end + 1, usage.size()));
  }
}

constexpr std::string_view kExitCodes = "exit: 0 safe, 1 violation, 2 bad input, 3 inconclusive\n";

void print_overview(std::ostream& out) {
  out << "usage: collmc COMMAND [options] [arguments]\n"
         "       collmc help COMMAND | collmc COMMAND --help | collmc --version\n\n"
         "collmc checks collective registration protocols (NCCL symmetric windows, communicators,\n"
         "collectives; MPI) for deadlocks and memory errors, and replays schedules on real hardware.\n\n"
         "commands:\n";
  for (const auto& c : kCommands) {
    const std::string_view first = c.usage.substr(0, c.usage.find('\n'));
    const size_t sentence = c.summary.find(". ");
    out << "  collmc " << first << "\n      "
        << (sentence == std::string_view::npos ? c.summary : c.summary.substr(0, sentence + 1)) << "\n";
  }
  out << "\nsee `collmc COMMAND --help` for a command's options.\n" << kExitCodes;
}

void print_command_help(std::ostream& out, const Command& c) {
  print_usage(out, c.usage);
  out << "\n" << c.summary << "\n";
  if (has_subcommands(c.name)) {
    out << "\n" << (c.name == "gen" ? "families" : "commands") << ":\n";
    for (const auto& s : kSubcommands)
      if (s.command == c.name) out << "  " << s.name << "\n      " << s.summary << "\n";
    out << "\nsee `collmc " << c.name << " " << (c.name == "gen" ? "FAMILY" : "COMMAND")
        << " --help` for the options.\n";
  }
}

// `collmc CMD [SUB] --help`, once the command's parser has the options.
void print_help(std::ostream& out, const Command& c, const Subcommand* sub, const std::string& options) {
  print_usage(out, sub ? sub->usage : c.usage);
  out << "\n" << (sub ? sub->summary : c.summary) << "\n\n" << options;
  if (!options.empty() && options.back() != '\n') out << "\n";
  if (c.name == "check" || c.name == "test" || c.name == "shrink") out << "\n" << kExitCodes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    print_overview(std::cerr);
    return kExitBadInput;
  }
  std::string name = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  if (name == "--help" || name == "-h" || (name == "help" && args.empty())) {
    print_overview(std::cout);
    return 0;
  }
  if (name == "--version" || name == "version") {
    std::cout << version_text();
    return 0;
  }
  if (name == "help") {  // `collmc help CMD [SUB]` is `collmc CMD [SUB] --help`
    name = args.front();
    args.erase(args.begin());
    args.emplace_back("--help");
  }
  const Command* command = find_command(name);
  if (command == nullptr) {
    std::cerr << "collmc: unknown command '" << name << "'\n";
    print_overview(std::cerr);
    return kExitBadInput;
  }
  const Subcommand* sub = find_subcommand(command->name, args);
  if (sub == nullptr && has_subcommands(command->name) && !args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    print_command_help(std::cout, *command);
    return 0;
  }
  try {
    return command->run(args);
  } catch (const HelpRequested& help) {
    print_help(std::cout, *command, sub, help.options);
    return 0;
  } catch (const po::error& e) {
    std::cerr << "collmc " << name << ": " << e.what() << "\n";
    print_usage(std::cerr, sub ? sub->usage : command->usage);
    std::cerr << "see `collmc " << name << (sub ? " " + std::string(sub->name) : std::string()) << " --help`\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "collmc " << name << ": " << e.what() << "\n";
    return kExitBadInput;
  }
}
