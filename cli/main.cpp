// collmc: thin command-line front end. Dispatches to one function per subcommand (commands.h); the
// help, the version and the usage errors of every subcommand are handled here, in one place.
#include <algorithm>
#include <iostream>
#include <string_view>

#include "cli_common.h"
#include "collmc/model/source.h"
#include "commands.h"
#include "version.h"

namespace {

using namespace collmc::cli;

struct Command {
  std::string_view name;
  int (*run)(const std::vector<std::string>&);
  std::string_view usage;    // after "collmc "; one line per form
  std::string_view summary;  // what it does, for `collmc --help` (first sentence) and `collmc CMD --help`
  std::string_view exits;    // its exit statuses, the footer of `collmc CMD --help`
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
     "Search every schedule of each scenario ('-': standard input). Prints the verdict, a schedule that reaches "
     "it, where each rank stands and, for a deadlock, the wait-for cycle. Ctrl-C stops the search: the verdict is "
     "then inconclusive (interrupted), with the statistics and the requested files; a second Ctrl-C ends collmc.",
     "exit: 0 safe, 1 violation, 2 bad input, 3 inconclusive (a limit), 4 safe in the model but the recorded run\n"
     "      hung (`observed hung`: the hang is outside what its source records), 130 interrupted (Ctrl-C)\n"
     "      with several files the most severe wins, whatever their order: 130, then 2, 1, 4, 3, 0\n"
     "      with --expect: 0 agrees, 1 disagrees, 3 not proven (inconclusive), 2 bad input\n"},
    {"test", cmd_test, "test PATH... [options]",
     "Check every .cmc file under the paths against its `expect` line. Prints a table and exits 1 if any "
     "disagrees.",
     "exit: 0 every file agrees with its expect line, 1 some file disagrees, is inconclusive or has no expect line,\n"
     "      2 bad input (a path that is not there, no .cmc file under the paths, a file that does not parse)\n"},
    {"replay", cmd_replay, "replay RESULT.json|FILE.cmc [options]\nreplay --calibrate DIR... [options]",
     "Run a schedule on real hardware (NCCL on GPUs, MPI under mpirun) and compare the outcome with the "
     "model's verdict.",
     "exit: 0 the hardware agrees with the model, 1 it disagrees, 2 refused (no usable GPU, ranks that do not fit)\n"
     "      or bad input, 128+N ended by signal N (130: Ctrl-C); --calibrate: 0 all agree, 1 some disagree\n"},
    {"gen", cmd_gen, "gen FAMILY [options]", "Write a scenario for a real parallel layout or a scalable family.",
     "exit: 0 written, 2 bad input (an unknown option or a layout that does not fit the world)\n"},
    {"shrink", cmd_shrink, "shrink FILE.cmc -o SMALL.cmc [options]",
     "Find the smallest scenario that still ends in the same kind of violation.",
     "exit: 0 shrunk, 1 shrunk but not down to --max-ranks, 2 bad input or nothing to shrink (a safe scenario),\n"
     "      3 inconclusive (a limit stopped the check: no counterexample to shrink)\n"},
    {"trace", cmd_trace, "trace import PATH... [-o FILE.cmc] [options]",
     "Turn recorder traces, Flight Recorder dumps or NCCL logs into a scenario.",
     "exit: 0 imported, 2 bad input (traces that cannot be read or do not fit together)\n"},
    {"record", cmd_record, "record [options] [--] PROGRAM ARGS...",
     "Run PROGRAM with the recorder preloaded (and, for a Python program, the torch shim on PYTHONPATH), so "
     "every process writes a trace; exits as PROGRAM did. Ctrl-C "
     "(SIGINT) and SIGTERM are passed on to the program's process group; the traces written so far are kept.",
     "exit: the program's own status, 128+N when signal N ended it (130: Ctrl-C), 124 when --time-limit or\n"
     "      --hang-after stopped it, 127 when it could not be started, 2 bad input (a non-empty --out without "
     "--force),\n"
     "      5 when --watch named a hang (whatever ended the program then: --on-hang abort, a limit, the user)\n"},
    {"watch", cmd_watch, "watch DIR [options]\nwatch --flight-recorder DIR [options]",
     "Follow the trace folder of a running job and name a hang as soon as it is certain (the check's "
     "diagnosis, the scenario of the calls so far in DIR/watch); or wait for PyTorch's Flight Recorder dumps "
     "and check them once every rank's has landed.",
     "exit: 5 a hang named, 0 the job ended with none (every traced process of this host gone), 124 --time-limit,\n"
     "      128+N a signal; --flight-recorder: check's status for the dumps (0 safe, 1 violation, 3 inconclusive,\n"
     "      4 safe in the model but the dumps say the run hung), 124 --time-limit before every dump landed,\n"
     "      2 dumps that cannot be read\n"},
};

constexpr Subcommand kSubcommands[] = {
    {"gen", "ring", "gen ring [options]",
     "N two-rank communicators in a ring; every rank registers a pool on its two comms (rotating order: a "
     "deadlock; --agreed: safe)."},
    {"gen", "megatron", "gen megatron [options]",
     "Megatron-LM's process groups for a TP/CP/PP/EP layout, a symmetric pool registered on some of them."},
    {"gen", "pytorch-pool", "gen pytorch-pool [--groups SPEC...] [options]",
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

constexpr std::string_view kExitCodes =
    "exit: 0 safe, 1 violation, 2 bad input, 3 inconclusive (check; `collmc CMD --help` lists each command's)\n";

// "did you mean": the names of every command.
std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const auto& c : kCommands) names.emplace_back(c.name);
  names.emplace_back("help");
  names.emplace_back("version");
  return names;
}

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
  out << "\n" << c.exits;
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
  if (name == "--version" || name == "-V" || name == "version") {
    std::cout << version_text();
    return 0;
  }
  if (name == "help") {  // `collmc help CMD [SUB]` is `collmc CMD [SUB] --help`
    if (args.front() == "--help" || args.front() == "-h") {
      print_overview(std::cout);
      return 0;
    }
    name = args.front();
    args.erase(args.begin());
    args.emplace_back("--help");
  }
  const Command* command = find_command(name);
  if (command == nullptr) {
    // As git: one line and the likely command, not the whole overview.
    std::cerr << "collmc: unknown command '" << name << "'\n";
    if (auto guess = collmc::model::closest_spelling(name, command_names()))
      std::cerr << "help: did you mean 'collmc " << *guess << "'?\n";
    std::cerr << "see `collmc --help` for the commands\n";
    return kExitBadInput;
  }
  const Subcommand* sub = find_subcommand(command->name, args);
  if (sub == nullptr && has_subcommands(command->name) && !args.empty() && (args[0] == "--help" || args[0] == "-h")) {
    print_command_help(std::cout, *command);
    return 0;
  }
  // Every error names the command as typed: "collmc trace import: ...", "collmc gen megatron: ...".
  const std::string who = "collmc " + name + (sub ? " " + std::string(sub->name) : std::string());
  try {
    return command->run(args);
  } catch (const HelpRequested& help) {
    print_help(std::cout, *command, sub, help.options);
    return 0;
  } catch (const po::error& e) {
    std::cerr << who << ": " << e.what() << "\n";
    print_usage(std::cerr, sub ? sub->usage : command->usage);
    std::cerr << "see `" << who << " --help`\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << who << ": " << e.what() << "\n";
    return kExitBadInput;
  }
}
