// collmc-mpi-rank PLAN BLOCK [--free]: one rank of an MPI replay, started by mpirun (never by hand).
// PLAN is the plan file the launcher wrote, BLOCK the name of its shared block (docs/REPLAY.md).
#include <mpi.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "mpi_rank.h"

using namespace collmc::replay;

namespace {

// A rank that cannot run its plan says why in its slot and leaves; mpirun then ends the job.
[[noreturn]] void give_up(SharedBlock* shared, int rank, const std::string& why) {
  RankSlot& slot = shared->ranks[rank];
  std::snprintf(slot.error, sizeof slot.error, "%s", why.c_str());
  slot.pid.store(static_cast<int32_t>(getpid()));
  slot.attached.store(1);
  slot.status.store(kError);
  shared->progress.fetch_add(1);
  _exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // dies with mpirun, whoever kills it
  if (argc < 3) {
    std::fprintf(stderr, "usage: collmc-mpi-rank PLAN BLOCK [--free] (started by collmc replay --backend mpi)\n");
    return 2;
  }
  const bool free_running = argc > 3 && std::strcmp(argv[3], "--free") == 0;
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  SharedBlock* shared = nullptr;
  try {
    shared = attach_shared_block(argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "collmc-mpi-rank %d: %s\n", rank, e.what());
    _exit(2);
  }
  if (rank >= kMaxRanks) _exit(2);
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
    plan = plan_from_file(argv[1], world);
  } catch (const std::exception& e) {
    give_up(shared, rank, e.what());
  }
  if (size != world.ranks)
    give_up(shared, rank, "mpirun started " + std::to_string(size) + " ranks for " + std::to_string(world.ranks));
  bool threads = false;
  for (const auto& r : plan.ranks) threads = threads || r.size() > 1;
  if (threads && provided < MPI_THREAD_MULTIPLE)
    give_up(shared, rank, "the program has threads and this MPI does not provide MPI_THREAD_MULTIPLE");
  int code = 0;
  {
    auto calls = make_mpi_calls(plan, rank);
    code = run_rank(plan, rank, shared, free_running, *calls);
  }
  if (code != 0) _exit(code);  // an error or the abort: no MPI_Finalize (peers may be blocked)
  MPI_Finalize();
  return 0;
}
