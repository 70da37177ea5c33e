/* A data race between two ranks (collmc tests, tests/mpi_record.sh; issue 26): in one fence epoch rank 0
 * and rank 2 both put into the same int of rank 1's window (MPI 4.1 §12.7: conflicting accesses in one
 * epoch are erroneous). The run completes; the check must say usage_error. Run with -np 3. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, value = 0;
  int mem[4] = {0};
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  value = rank;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank != 1) MPI_Put(&value, 1, MPI_INT, 1, 2, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
