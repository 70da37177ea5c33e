// collmc-mpi-rank PLAN BLOCK [--free]: one rank of an MPI replay on one host (collmc replay --backend
// mpi), PLAN the plan file the launcher wrote, BLOCK the name of its shared block.
// collmc-mpi-rank --store [--free]: one rank of an MPI replay that mpirun or srun started on any
// number of nodes (--launcher mpirun|srun): the plan and the coordination come from collmc's TCP
// store (store.h). Started by collmc, never by hand (docs/REPLAY.md).
#include <mpi.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "mpi_rank.h"
#include "store.h"

using namespace collmc::replay;

int main(int argc, char** argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with mpirun (or its orted), whoever kills it
  const bool store = argc >= 2 && std::strcmp(argv[1], "--store") == 0;
  if (!store && argc < 3) {
    std::fprintf(stderr,
                 "usage: collmc-mpi-rank PLAN BLOCK [--free] | --store [--run NAME] [--free] (started by collmc replay "
                 "--backend mpi)\n");
    return 2;
  }
  bool free_running = false;
  for (int i = 1; i < argc; ++i) free_running = free_running || std::strcmp(argv[i], "--free") == 0;
  // `--run NAME` only names the replay on the command line (ps): nothing to read.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank >= kMaxRanks) _exit(2);
  SharedBlock* shared = nullptr;
  StoreClient* client = nullptr;
  try {
    if (store) {
      client = &connect_rank_to_store(rank);
      shared = client->block();
    } else {
      shared = attach_shared_block(argv[2]);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collmc-mpi-rank %d: %s\n", rank, e.what());
    _exit(2);
  }
  if (rank == 0) {
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(version, &len);
    std::string v(version, static_cast<size_t>(len));
    v = v.substr(0, v.find_first_of(",\n"));
    std::snprintf(shared->library, sizeof shared->library, "%s", v.c_str());
  }
  collmc::model::World world;
  ReplayPlan plan;
  try {
    plan = client ? plan_from_text(client->plan_json(), "the plan from collmc's store", world)
                  : plan_from_file(argv[1], world);
  } catch (const std::exception& e) {
    rank_give_up(shared, rank, e.what());
  }
  if (size != world.ranks)
    rank_give_up(shared, rank,
                 "the launcher started " + std::to_string(size) + " ranks for " + std::to_string(world.ranks));
  bool threads = false;
  for (const auto& r : plan.ranks) threads = threads || r.size() > 1;
  if (threads && provided < MPI_THREAD_MULTIPLE)
    rank_give_up(shared, rank, "the program has threads and this MPI does not provide MPI_THREAD_MULTIPLE");
  int code = 0;
  {
    auto calls = make_mpi_calls(plan, rank);
    code = run_rank(plan, rank, shared, free_running, *calls);
  }
  if (code != 0) rank_exit(code);  // an error or the abort: no MPI_Finalize (peers may be blocked)
  if (client) client->flush();
  MPI_Finalize();
  return 0;
}
