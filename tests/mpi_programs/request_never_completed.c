/* A nonblocking send whose request is never completed (collmc tests, tests/mpi_record.sh; issue 26): rank 0
 * posts MPI_Isend and calls MPI_Finalize without a wait (MPI 4.1 §3.7.3). The receive matches it, so the run
 * completes; the check must say usage_error. Run with -np 2. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, value = 5;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) MPI_Isend(&value, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, &req);
  if (rank == 1) MPI_Recv(&value, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
