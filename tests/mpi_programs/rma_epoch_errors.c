/* Erroneous synchronisation that MPI does not catch (collmc tests, tests/mpi_record.sh; issue 26): rank 0
 * locks a target it already holds under MPI_Win_lock_all (two access epochs at once, MPI 4.1 §12.5). Open
 * MPI 4.1 stops the run there (MPI_ERR_RMA_SYNC); the check of what ran must say usage_error. Run with -np 2. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, value = 7;
  int mem[4] = {0};
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 0) {
    MPI_Win_lock_all(0, win);
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    MPI_Win_unlock_all(win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
