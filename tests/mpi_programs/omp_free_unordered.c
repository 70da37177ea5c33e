// A real cross-thread ordering bug: one thread frees a communicator while the other may still use it (no
// barrier between: `single nowait`). The run happened to use it first (the free waits a while), but nothing
// orders the two threads: MPI 4.1 sec. 11.6 leaves that to the program. With the threads' synchronization
// recorded the import keeps them concurrent, and the check finds the free before the use.
#include <mpi.h>
#include <omp.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int provided = 0, rank = 0, size = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int out = rank, in = -1;
#pragma omp parallel num_threads(2)
  {
    if (omp_get_thread_num() == 1)
      MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, 1, &in, 1, MPI_INT, (rank + size - 1) % size, 1, dup,
                   MPI_STATUS_IGNORE);
    if (omp_get_thread_num() == 0) {
      usleep(200000);  // the run's own order: the other thread's Sendrecv first
      MPI_Comm_free(&dup);
    }
  }
  MPI_Finalize();
  return 0;
}
