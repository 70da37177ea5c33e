/* Collectives in different orders (collmc tests, tests/mpi_record.sh): two communicators duplicated from
 * MPI_COMM_WORLD; even ranks all-reduce on A then on B, odd ranks on B then on A. Each all-reduce waits
 * for a peer that is in the other one: the run hangs (Open MPI 4.1). Run with -np 2 (or any even count). */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, x = 1, y = 0;
  MPI_Comm a, b;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_dup(MPI_COMM_WORLD, &a);
  MPI_Comm_dup(MPI_COMM_WORLD, &b);
  if (rank % 2 == 0) {
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, a);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, b);
  } else {
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, b);
    MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, a);
  }
  MPI_Comm_free(&a);
  MPI_Comm_free(&b);
  MPI_Finalize();
  return 0;
}
