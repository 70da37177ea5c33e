/* A wildcard-receive race (collmc tests, tests/mpi_record.sh): rank 0 receives from MPI_ANY_SOURCE, then
 * from rank 2. Ranks 1 and 2 each send it one message. If the wildcard receive takes rank 2's message,
 * the second receive waits for a message rank 2 never sends: a deadlock. Rank 2 sends late, so in
 * practice the wildcard matches rank 1 and the run completes; the check must still find the order that
 * hangs. Run with -np 3. */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

int main(int argc, char** argv) {
  int rank = 0, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Status status;
    MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &status);
    MPI_Recv(&x, 1, MPI_INT, 2, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    printf("rank 0: the wildcard receive matched rank %d\n", status.MPI_SOURCE);
  } else {
    if (rank == 2) usleep(300 * 1000); /* let rank 1's message arrive first */
    x = rank;
    MPI_Send(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
