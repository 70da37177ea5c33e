/* Windows created in crossed orders on two communicators (collmc tests, tests/mpi_record.sh): the world
 * is split into A (every rank, key = rank) and B (every rank, reversed); rank 0 creates a window on A then
 * on B, the other ranks on B then on A. MPI_Win_create is collective: each rank waits in its first
 * creation for a peer that is in the other one. Run with -np 2. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, size = 1;
  int mem[4] = {0, 0, 0, 0};
  MPI_Comm a, b;
  MPI_Win wa, wb;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &a);
  MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &b);
  if (rank == 0) {
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, a, &wa);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, b, &wb);
  } else {
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, b, &wb);
    MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, a, &wa);
  }
  MPI_Win_free(&wa);
  MPI_Win_free(&wb);
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  MPI_Finalize();
  return 0;
}
