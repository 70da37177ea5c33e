// Issue 32: buffered sends complete locally, but each rank then receives a tag the other never sends: both
// receives wait forever (a real hang; collmc: deadlock).
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int bsize = 0;
  MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &bsize);
  bsize += MPI_BSEND_OVERHEAD;
  void* attached = malloc((size_t)bsize);
  MPI_Buffer_attach(attached, bsize);
  int out[4] = {1, 2, 3, 4}, in[4];
  MPI_Bsend(out, 4, MPI_INT, 1 - rank, 1, MPI_COMM_WORLD);
  MPI_Recv(in, 4, MPI_INT, 1 - rank, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Buffer_detach(&attached, &bsize);
  free(attached);
  MPI_Finalize();
  return 0;
}
