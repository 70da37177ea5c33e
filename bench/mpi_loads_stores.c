/* What the program's own loads and stores cost under the MPI recorder (docs/PERFORMANCE.md, "Loads and stores"):
 * one rank sums and rewrites an array it never gives MPI (every access takes the recorder's unwatched path),
 * then one it made a window (every access is watched and folded into runs). Compile with mpicc (no callbacks) or
 * scripts/mpicc-loads-stores.sh; run with `mpirun -np 1 ./a.out N`, under `collmc record` or not. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double seconds(void) { return MPI_Wtime(); }

static long pass(int* a, long n, int rounds) {
  long sum = 0;
  for (int r = 0; r < rounds; ++r)
    for (long i = 0; i < n; ++i) {
      sum += a[i];
      a[i] = (int)(sum & 0xff);
    }
  return sum;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const long n = 1 << 16;
  const int rounds = argc > 1 ? atoi(argv[1]) : 200;
  int* plain = calloc((size_t)n, sizeof(int));
  int* shared = calloc((size_t)n, sizeof(int));
  MPI_Win win;
  MPI_Win_create(shared, n * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  double t0 = seconds();
  long s1 = pass(plain, n, rounds);
  double t1 = seconds();
  MPI_Win_fence(0, win);
  long s2 = pass(shared, n, rounds);
  MPI_Win_fence(0, win);
  double t2 = seconds();
  const double accesses = 2.0 * (double)n * rounds;
  printf("unwatched: %.2f ns per access; watched: %.2f ns per access (%ld %ld)\n", 1e9 * (t1 - t0) / accesses,
         1e9 * (t2 - t1) / accesses, s1, s2);
  MPI_Win_free(&win);
  free(plain);
  free(shared);
  MPI_Finalize();
  return 0;
}
