/* Loads and stores of RMA memory that MPI 4.1 sec. 12.7 allows (collmc tests, tests/mpi_record.sh; issue 32): the
 * origin buffer of a get read and written only after the unlock completed it, the target's window read only after
 * the fence that ends the put's epoch, and a store to bytes of the window that no transfer reaches. Compiled with
 * scripts/mpicc-loads-stores.sh, so the check sees each access; it must say safe. Run with -np 2. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank = 0, one = 1;
  volatile int mem[4] = {0};
  volatile int got[1] = {0};
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_create((void*)mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
  if (rank == 1) mem[3] = 7; /* no transfer reaches these bytes */
  MPI_Win_fence(0, win);
  const int seen = rank == 1 ? mem[0] : 0; /* after the fence: the put is complete */
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Get((void*)got, 1, MPI_INT, 1, 3, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    got[0] += 1; /* the unlock completed the get */
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d: %d %d\n", rank, seen, got[0]);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
