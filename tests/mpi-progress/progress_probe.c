// Does an MPI library move a rooted collective while its early ranks wait outside MPI? (issue 23,
// `mpi_progress`; docs/SEMANTICS_NOTES.md, "MPI progress"). Run by scripts/mpi-progress-probes.sh.
//   progress_probe bcast|reduce|ibcast BYTES DIR
// bcast, reduce: the blocking collective; its early ranks (the broadcast's root, the reduce's other
//   ranks) then wait outside MPI, polling files in DIR, as a rank blocked in ncclCommInitRank or a
//   TCPStore wait does, until every late rank has finished its collective.
// ibcast: the root posts MPI_Ibcast and waits outside MPI the same way before its MPI_Wait; the
//   others run MPI_Ibcast + MPI_Wait.
// Prints "completed" on rank 0, or "HANG" (and aborts the job) after 5 s without the late ranks.
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int late_ranks_done(const char* dir, int size, int root_is_late) {
  char path[512];
  for (int r = 0; r < size; ++r) {
    const int late = (r == 0) == root_is_late;
    snprintf(path, sizeof path, "%s/done.%d", dir, r);
    if (late && access(path, F_OK) != 0) return 0;
  }
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 4) {
    if (rank == 0) fprintf(stderr, "usage: progress_probe bcast|reduce|ibcast BYTES DIR\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const char* mode = argv[1];
  const int bytes = atoi(argv[2]);
  const char* dir = argv[3];
  char* in = calloc((size_t)bytes, 1);
  char* out = calloc((size_t)bytes, 1);
  MPI_Request request = MPI_REQUEST_NULL;
  int early;  // this rank waits outside MPI after (or, for ibcast, between) its collective's calls
  if (strcmp(mode, "reduce") == 0) {
    MPI_Reduce(in, out, bytes, MPI_CHAR, MPI_SUM, 0, MPI_COMM_WORLD);
    early = rank != 0;
  } else if (strcmp(mode, "ibcast") == 0) {
    MPI_Ibcast(in, bytes, MPI_CHAR, 0, MPI_COMM_WORLD, &request);
    if (rank != 0) MPI_Wait(&request, MPI_STATUS_IGNORE);
    early = rank == 0;
  } else {
    MPI_Bcast(in, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
    early = rank == 0;
  }
  if (!early) {
    char path[512];
    snprintf(path, sizeof path, "%s/done.%d", dir, rank);
    fclose(fopen(path, "w"));
  } else {
    for (int i = 0; !late_ranks_done(dir, size, strcmp(mode, "reduce") == 0); ++i) {
      if (i == 100) {
        fprintf(stderr, "HANG\n");
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
      usleep(50000);
    }
    if (request != MPI_REQUEST_NULL) MPI_Wait(&request, MPI_STATUS_IGNORE);
  }
  MPI_Finalize();
  if (rank == 0) printf("completed\n");
  free(in);
  free(out);
  return 0;
}
