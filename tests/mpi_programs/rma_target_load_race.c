/* A load of window memory by its owner while another rank's MPI_Put writes the same bytes, in one fence epoch
 * (collmc tests, tests/mpi_record.sh; issue 32): a data race, MPI 4.1 sec. 12.7. The run completes; only the
 * program's own load shows it (scripts/mpicc-loads-stores.sh). Run with -np 2. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int rank = 0, one = 1;
  volatile int mem[4] = {0};
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Win_create((void*)mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  if (rank == 0) MPI_Put(&one, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
  int seen = rank == 1 ? mem[0] : 0; /* the put may land before, during or after this load */
  MPI_Win_fence(0, win);
  if (rank == 1) printf("rank 1 saw %d\n", seen);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
