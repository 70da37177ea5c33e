/* A store to the origin buffer of an MPI_Get before the get completes (collmc tests, tests/mpi_record.sh; issue
 * 32): erroneous, MPI 4.1 sec. 12.7 ("the origin buffer ... must not be accessed until the operation completes").
 * The run completes; only the program's own store shows the error, so it is compiled with
 * scripts/mpicc-loads-stores.sh. Run with -np 2. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, mem[4] = {1, 2, 3, 4};
  volatile int got[1] = {0};
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Get((void*)got, 1, MPI_INT, 1, 2, 1, MPI_INT, win);
    got[0] = 5; /* the get is in flight until the unlock */
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
