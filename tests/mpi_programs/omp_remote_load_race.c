// A thread's load of window memory races with another rank's put (RMARaceBench's MPIRMA/hybrid/011): rank 0
// puts into rank 1's window under a lock, then meets rank 1 in a barrier; on rank 1 only the master thread
// takes part in the barrier (`omp master`, no barrier of the team), and the team's other thread loads the
// window meanwhile: nothing orders its load after the put (MPI 4.1 sec. 12.7). With ORDERED the load comes
// after a barrier of the team that follows the master's MPI_Barrier: correct.
#include <mpi.h>
#include <omp.h>
#include <stdio.h>

int main(int argc, char** argv) {
  int provided = 0, rank = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (provided < MPI_THREAD_MULTIPLE) MPI_Abort(MPI_COMM_WORLD, 2);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  int* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
  base[0] = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  int value = 42, seen = 0;
  if (rank == 0) {
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
    MPI_Put(&value, 1, MPI_INT, 1, 0, 1, MPI_INT, win);
    MPI_Win_unlock(1, win);
    MPI_Barrier(MPI_COMM_WORLD);
  } else {
#pragma omp parallel num_threads(2) reduction(+ : seen)
    {
#pragma omp master
      MPI_Barrier(MPI_COMM_WORLD);
#ifdef ORDERED
#pragma omp barrier
#endif
      if (omp_get_thread_num() == 1) seen += base[0];
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  printf("rank %d saw %d\n", rank, seen);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
