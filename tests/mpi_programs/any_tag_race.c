/* A race through MPI_ANY_TAG (collmc tests, tests/mpi_record.sh; issue 26): rank 1 receives from
 * MPI_ANY_SOURCE with MPI_ANY_TAG, then from MPI_ANY_SOURCE with tag 1. Rank 0 sends tag 1, rank 2 tag 2.
 * Rank 0 sends late, so in practice the first receive takes rank 2's message, the second rank 0's, and the
 * run completes; the check must still find the order where MPI_ANY_TAG takes rank 0's message and the
 * receive of tag 1 then waits for ever. Run with -np 3. */
#include <mpi.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank = 0, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 1) {
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    if (rank == 0) usleep(300 * 1000); /* let rank 2's message arrive first */
    MPI_Send(&rank, 1, MPI_INT, 1, rank == 0 ? 1 : 2, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
