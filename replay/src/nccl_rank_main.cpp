// collmc-nccl-rank [--free]: one rank of an NCCL replay that mpirun or srun started, on any number
// of nodes (collmc replay --launcher mpirun|srun). Its rank comes from the launcher's environment,
// its GPU is its rank on the node, the plan and the coordination (the unique ids rank 0 of each
// communicator makes, the sequencer's turns, the watchdog's abort) from collmc's TCP store
// (store.h). No MPI: the launcher only starts the processes. Started by collmc, never by hand.
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "nccl_library.h"
#include "rank_body.h"
#include "store.h"

using namespace collmc::replay;

int main(int argc, char** argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with its launcher's daemon, whoever kills it
  bool free_running = false;
  for (int i = 1; i < argc; ++i) free_running = free_running || std::strcmp(argv[i], "--free") == 0;
  // `--run NAME` only names the replay on the command line (ps): nothing to read.
  int rank = 0, local_rank = 0;
  if (!launcher_rank(&rank, &local_rank)) {
    std::fprintf(stderr,
                 "collmc-nccl-rank: no rank in the environment: started by collmc replay --launcher mpirun|srun\n");
    return 2;
  }
  if (rank >= kMaxRanks) return 2;
  SharedBlock* shared = nullptr;
  StoreClient* client = nullptr;
  try {
    client = &connect_rank_to_store(rank);
    shared = client->block();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collmc-nccl-rank %d: %s\n", rank, e.what());
    return 2;
  }
  collmc::model::World world;
  ReplayPlan plan;
  try {
    plan = plan_from_text(client->plan_json(), "the plan from collmc's store", world);
  } catch (const std::exception& e) {
    rank_give_up(shared, rank, e.what());
  }
  setenv("NCCL_NVLS_ENABLE", "0", 1);  // NVLink multicast stays off on the lent machines
  setenv("NCCL_RUNTIME_CONNECT", world.knobs.runtime_connect ? "1" : "0", 1);
  if (world.knobs.rma_eager_init) setenv("NCCL_RMA_EAGER_INIT", "1", 1);  // NCCL 2.31+; older ones ignore it
  std::string why;
  const int gpu = gpu_for_local_rank(local_rank, why);
  if (gpu < 0) rank_give_up(shared, rank, why);
  if (rank == 0) {
    const NcclProbe probe = probe_nccl_here();
    std::snprintf(shared->library, sizeof shared->library, "%s",
                  probe.error.empty() ? probe.describe().c_str() : probe.error.c_str());
  }
  rank_exit(run_nccl_rank(plan, rank, gpu, shared, free_running));
}
