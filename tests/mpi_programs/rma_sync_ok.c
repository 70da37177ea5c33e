/* A correct one-sided program (collmc tests, tests/mpi_record.sh; issue 26): every synchronisation MPI 4.1
 * §12.5 offers, each epoch opened and closed, transfers to disjoint bytes or ordered by their epochs, and
 * every nonblocking request completed. The check must say safe (no usage_error). Run with -np 3. */
#include <mpi.h>

int main(int argc, char** argv) {
  int rank = 0, size = 1, one = 1, got = 0;
  int mem[8] = {0};
  MPI_Win win;
  MPI_Group world, peers;
  MPI_Request req;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int next = (rank + 1) % size;
  MPI_Win_create(mem, sizeof mem, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
  /* fence epoch: each rank writes its own slot of its neighbour's window */
  MPI_Win_fence(0, win);
  MPI_Put(&rank, 1, MPI_INT, next, rank, 1, MPI_INT, win);
  MPI_Win_fence(MPI_MODE_NOSUCCEED, win);
  /* passive target: exclusive locks serialise two writers of the same bytes */
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
  MPI_Put(&one, 1, MPI_INT, 0, 7, 1, MPI_INT, win);
  MPI_Win_unlock(0, win);
  MPI_Barrier(MPI_COMM_WORLD);
  /* lock_all with a flush between a get and a send of the same buffer */
  MPI_Win_lock_all(0, win);
  MPI_Get(&got, 1, MPI_INT, next, 6, 1, MPI_INT, win);
  MPI_Win_flush(next, win);
  MPI_Win_unlock_all(win);
  MPI_Isend(&got, 1, MPI_INT, next, 3, MPI_COMM_WORLD, &req);
  MPI_Recv(&one, 1, MPI_INT, (rank + size - 1) % size, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Wait(&req, MPI_STATUS_IGNORE);
  /* post/start/complete/wait between ranks 0 and 1 */
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  if (rank < 2) {
    const int other = 1 - rank;
    MPI_Group_incl(world, 1, &other, &peers);
    MPI_Win_post(peers, 0, win);
    MPI_Win_start(peers, 0, win);
    MPI_Put(&rank, 1, MPI_INT, other, 5, 1, MPI_INT, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    MPI_Group_free(&peers);
  }
  MPI_Group_free(&world);
  MPI_Win_free(&win);
  MPI_Finalize();
  return 0;
}
