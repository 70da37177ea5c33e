// Thread 0 of a team frees a communicator that thread 1 used; a barrier orders the free after thread 1's
// MPI_Sendrecv (as the implicit barrier of an `omp single` does in CorrBench's
// openmp/ordering/correct/dependant/comm_free). Safe; without the barrier recorded the free could be taken
// first (a false use after free).
#include <mpi.h>
#include <omp.h>

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
#pragma omp barrier
    if (omp_get_thread_num() == 0) MPI_Comm_free(&dup);
  }
  MPI_Finalize();
  return 0;
}
