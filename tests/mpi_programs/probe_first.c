/* MPI_Probe before the send (collmc tests, tests/mpi_record.sh; issue 26): each rank probes for the other's
 * message before sending its own. MPI_Probe returns only once a matching message can be received (MPI 4.1
 * sec. 3.8.1), so both wait for ever: the run hangs, and the check must find the deadlock. Run with -np 2. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, x = 0;
  MPI_Status status;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int peer = 1 - rank;
  MPI_Probe(peer, 0, MPI_COMM_WORLD, &status);
  MPI_Send(&rank, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
  MPI_Recv(&x, 1, MPI_INT, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Finalize();
  return 0;
}
