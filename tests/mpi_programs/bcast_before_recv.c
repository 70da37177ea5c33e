/* A broadcast against a receive (collmc tests, tests/mpi_record.sh; issue 26, MBI CallOrdering_Recv_Send_Bcast_nok):
 * rank 0 broadcasts, then sends to rank 1; rank 1 receives from rank 0, then joins the broadcast. Open MPI
 * sends a one-int broadcast eagerly, so the root returns at once and the run completes; but MPI lets a
 * broadcast synchronize its members (MPI 4.1 sec. 6.1), and then each rank waits for the other. The import
 * must keep the completed broadcast (no history left out) and the check must find the deadlock. Run with -np 2. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, x = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Send(&rank, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  } else if (rank == 1) {
    MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(&x, 1, MPI_INT, 0, MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
