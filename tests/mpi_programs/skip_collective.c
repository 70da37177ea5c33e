/* A rank that skips a collective (collmc tests, tests/mpi_record.sh): every rank all-reduces twice on
 * MPI_COMM_WORLD, but the last rank skips the second one and goes on to MPI_Finalize. The others wait in
 * the all-reduce for ever. Run with -np 2 or more. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, size = 1, x = 1, y = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank != size - 1) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
