// Two OpenMP sections on each of two ranks: one sends to the peer, the other receives from it (CorrBench's
// openmp/threading/correct/finalize). Safe: the receiving thread never waits for its own rank's send. Taken in
// the order the calls were entered, both ranks' sends may come first and stand head to head (a false deadlock);
// with the threads' synchronization recorded (OMPT) the two sections are concurrent.
#include <mpi.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const int peer = 1 - rank;
  int out[64] = {0}, in[64] = {0};
#pragma omp parallel sections num_threads(2)
  {
#pragma omp section
    MPI_Ssend(out, 64, MPI_INT, peer, 7, MPI_COMM_WORLD);
#pragma omp section
    MPI_Recv(in, 64, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  return 0;
}
