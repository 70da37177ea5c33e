/* A four-rank cycle over pair communicators while the other ranks compute (issue 35, the live watch).
 * Four MPI_Comm_split calls make the pairs P0 = {0,1}, P1 = {1,2}, P2 = {2,3}, P3 = {3,0}. Rank i of 0..3
 * waits (i+1) x 100 ms, then enters MPI_Barrier on P_i: it waits for rank i+1, which is in the barrier of
 * P_(i+1); rank 3 closes the cycle, about 0.4 s after the start. Ranks 4.. compute for SECONDS (argv[1],
 * default 20) and then join an MPI_Barrier on MPI_COMM_WORLD, which can never complete. Run with -np 8
 * (any -np >= 5). Under `collmc record --watch` the hang is named while ranks 4.. still compute. */
#include <mpi.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char** argv) {
  int rank = 0;
  MPI_Comm pair[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const double seconds = argc > 1 ? atof(argv[1]) : 20.0;
  for (int i = 0; i < 4; ++i) {
    const int member = rank < 4 && (rank == i || rank == (i + 1) % 4);
    MPI_Comm_split(MPI_COMM_WORLD, member ? 0 : MPI_UNDEFINED, rank, &pair[i]);
  }
  if (rank < 4) {
    usleep((useconds_t)(rank + 1) * 100000);
    MPI_Barrier(pair[rank]);
  } else {
    /* Computing: no MPI call until the time is up. */
    volatile double x = 0;
    const double end = now() + seconds;
    while (now() < end)
      for (int k = 0; k < 100000; ++k) x += 1e-9 * k;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return 0;
}
