// collmc: thin command-line front end. Dispatches to one function per subcommand (commands.h).
#include <iostream>
#include <map>

#include "cli_common.h"
#include "commands.h"

namespace {

using namespace collmc::cli;

void usage(std::ostream& out) {
  out << "usage: collmc check FILE... [--json OUT] [--dot OUT] [--svg OUT] [--html OUT] [--full-graph] [--shortest]\n"
         "                          [--no-reduction] [--max-states N] [--time-limit S] [--max-memory MiB]\n"
         "                          [--quiet] [--expect]\n"
         "       collmc test PATH... [--max-states N] [--time-limit S] [--max-memory MiB]\n"
         "       collmc replay RESULT.json|FILE.cmc [--backend nccl|mpi] [--hang-after S] [--json OUT] [--shrink]\n"
         "                     [--launcher local|mpirun|srun] [--hosts LIST] [--np N] [--confirm-after S]\n"
         "       collmc gen ring --comms N [--agreed] [--profile mpi] [-o FILE]\n"
         "       collmc gen megatron --world W [--tp N --cp N --pp N --ep N --etp N] [--dist-opt-instances N]\n"
         "                  [--ubr-groups dense,expert,outer,dense-ag] [--order list|per-rank|sorted]\n"
         "                  [--late-segments none|some|all] [--collectives] [-o FILE]\n"
         "       collmc gen pytorch-pool --ranks W --groups SPEC... [--order ...] [--late-segments ...] [-o FILE]\n"
         "       collmc gen hook-fanout --ranks W --comms K [--sorted] [-o FILE]\n"
         "       collmc replay --calibrate DIR... [--backend nccl|mpi] [--hang-after S] [--table OUT.md]\n"
         "       collmc shrink FILE.cmc -o SMALL.cmc [--max-ranks N] [--time-limit S] [--max-states N]\n"
         "       collmc trace import PATH... -o FILE.cmc [--format auto|recorder|flight-recorder|nccl-log]\n"
         "       collmc record [--out DIR] -- PROGRAM ARGS...   (exits as PROGRAM did)\n"
         "exit: 0 safe, 1 violation, 2 bad input, 3 inconclusive\n";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(std::cerr);
    return kExitBadInput;
  }
  std::string cmd = argv[1];
  std::vector<std::string> args(argv + 2, argv + argc);
  try {
    const std::map<std::string, int (*)(const std::vector<std::string>&)> commands = {
        {"check", cmd_check},   {"test", cmd_test},   {"replay", cmd_replay}, {"gen", cmd_gen},
        {"shrink", cmd_shrink}, {"trace", cmd_trace}, {"record", cmd_record},
    };
    if (auto it = commands.find(cmd); it != commands.end()) return it->second(args);
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      usage(std::cout);
      return 0;
    }
    std::cerr << "collmc: unknown command '" << cmd << "'\n";
    usage(std::cerr);
    return kExitBadInput;
  } catch (const po::error& e) {
    std::cerr << "collmc " << cmd << ": " << e.what() << "\n";
    usage(std::cerr);
    return kExitBadInput;
  } catch (const std::exception& e) {
    std::cerr << "collmc " << cmd << ": " << e.what() << "\n";
    return kExitBadInput;
  }
}
