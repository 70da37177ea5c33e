/* A correct program that uses what the others do not (collmc tests, tests/mpi_record.sh): a ring exchange
 * with MPI_Irecv/MPI_Isend/MPI_Waitall, an MPI_Sendrecv, a nonblocking barrier, a window with fences and
 * a wildcard receive that cannot go wrong (one sender). The check must say safe. Run with -np 3. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, size = 1, in = 0, out = 0, got = 0;
  int mem[4] = {0, 0, 0, 0};
  MPI_Request reqs[2], barrier;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
  out = rank;
  MPI_Irecv(&in, 1, MPI_INT, prev, 0, MPI_COMM_WORLD, &reqs[0]);
  MPI_Isend(&out, 1, MPI_INT, next, 0, MPI_COMM_WORLD, &reqs[1]);
  MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
  MPI_Sendrecv(&out, 1, MPI_INT, next, 1, &in, 1, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Ibarrier(MPI_COMM_WORLD, &barrier);
  MPI_Wait(&barrier, MPI_STATUS_IGNORE);
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  MPI_Win_fence(0, win);
  MPI_Put(&out, 1, MPI_INT, next, 0, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  if (rank == 0)
    MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else if (rank == 1)
    MPI_Send(&out, 1, MPI_INT, 0, 2, MPI_COMM_WORLD);
  MPI_Finalize();
  return 0;
}
