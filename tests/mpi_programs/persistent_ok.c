/* Persistent requests (collmc tests, tests/mpi_record.sh; issue 26): ranks 0 and 1 exchange a message three
 * times through requests made once with MPI_Send_init and MPI_Recv_init, each round started with
 * MPI_Startall and completed with MPI_Waitall, then freed. A correct program: the import turns every
 * MPI_Start into the operation it starts and the check must say safe, with no hang recorded. Run with -np 2. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, out = 0, in = 0;
  MPI_Request reqs[2];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int peer = 1 - rank;
  MPI_Send_init(&out, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[0]);
  MPI_Recv_init(&in, 1, MPI_INT, peer, 7, MPI_COMM_WORLD, &reqs[1]);
  for (int round = 0; round < 3; ++round) {
    out = rank * 10 + round;
    MPI_Startall(2, reqs);
    MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  }
  MPI_Request_free(&reqs[0]);
  MPI_Request_free(&reqs[1]);
  MPI_Finalize();
  return 0;
}
