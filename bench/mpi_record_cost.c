/* The MPI recorder's cost per call (docs/PERFORMANCE.md, "The MPI recorder"): times N calls of
 * MPI_Barrier and of MPI_Allreduce (one int) on MPI_COMM_SELF, which return at once, so what is timed is the
 * library's own path plus whatever is preloaded. Prints ns per call. Build and run:
 *   mpicc -O2 -o /tmp/cost bench/mpi_record_cost.c
 *   mpirun -np 1 /tmp/cost 200000                                        # no recorder
 *   mpirun -np 1 -x LD_PRELOAD=build/cli/libcollmc_record_mpi.so /tmp/cost 200000         # pass-through
 *   mpirun -np 1 -x LD_PRELOAD=build/cli/libcollmc_record_mpi.so -x COLLMC_TRACE_DIR=/tmp/t /tmp/cost 200000 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(int argc, char** argv) {
  long n = argc > 1 ? atol(argv[1]) : 100000;
  int x = 1, y = 0;
  MPI_Init(&argc, &argv);
  double t0 = now_ns();
  for (long i = 0; i < n; ++i) MPI_Barrier(MPI_COMM_SELF);
  double t1 = now_ns();
  for (long i = 0; i < n; ++i) MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_SELF);
  double t2 = now_ns();
  printf("MPI_Barrier(MPI_COMM_SELF): %.0f ns per call\n", (t1 - t0) / (double)n);
  printf("MPI_Allreduce(1 int, MPI_COMM_SELF): %.0f ns per call\n", (t2 - t1) / (double)n);
  MPI_Finalize();
  return 0;
}
