// Issue 32: a correct MPI program (two ranks) made of the patterns that a reading stricter than MPI 4.1 once
// reported (MPI-CorrBench's correct codes): arguments MPI ignores, communicators from every constructor and
// handles reused after a free, buffered sends, a derived type against its basic type, a receive larger than
// its message, a cancelled receive, a matched probe, a communicator freed before its window, a lock epoch
// between fences. `collmc record` + `trace import` + `check` must say safe.
#include <mpi.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = 1 - rank;
  int all[4] = {rank, rank, rank, rank};

  // MPI_IN_PLACE: the send count and type are ignored (MPI 4.1 sec. 6.7), MPI_DATATYPE_NULL included.
  MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD);
  // A gather's receive arguments are ignored on every rank but the root (MPI 4.1 sec. 6.5).
  int mine = rank, gathered[2] = {0, 0};
  if (rank == 0)
    MPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, gathered, 1, MPI_INT, 0, MPI_COMM_WORLD);
  else
    MPI_Gather(&mine, 1, MPI_INT, NULL, 0, MPI_DATATYPE_NULL, 0, MPI_COMM_WORLD);

  // Constructors over a group only, intercommunicators, their merge, a nonblocking dup; each freed, and the
  // handle values MPI then hands out again are new communicators.
  for (int round = 0; round < 2; ++round) {
    MPI_Group world_group, pair_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    int members[2] = {0, 1};
    MPI_Group_incl(world_group, 2, members, &pair_group);
    MPI_Comm pair;
    MPI_Comm_create_group(MPI_COMM_WORLD, pair_group, 7, &pair);
    MPI_Reduce(&mine, gathered, 1, MPI_INT, MPI_SUM, 1, pair);
    MPI_Comm half, inter, merged, copy;
    MPI_Comm_split(MPI_COMM_WORLD, rank, 0, &half);
    MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, peer, 9, &inter);
    if (rank == 0) {  // rank 0 of the remote group: the other process
      MPI_Send(&mine, 1, MPI_INT, 0, 3, inter);
      MPI_Recv(gathered, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(gathered, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
      MPI_Send(&mine, 1, MPI_INT, 0, 3, inter);
    }
    MPI_Intercomm_merge(inter, rank, &merged);
    MPI_Request dup_request;
    MPI_Comm_idup(merged, &copy, &dup_request);
    MPI_Wait(&dup_request, MPI_STATUS_IGNORE);
    MPI_Barrier(copy);
    MPI_Comm_free(&copy);
    MPI_Comm_free(&merged);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Comm_free(&pair);
    MPI_Group_free(&pair_group);
    MPI_Group_free(&world_group);
  }

  // Buffered sends complete locally (MPI 4.1 sec. 3.4): a head-to-head exchange is correct with them.
  int bsize = 0;
  MPI_Pack_size(4, MPI_INT, MPI_COMM_WORLD, &bsize);
  bsize += MPI_BSEND_OVERHEAD;
  void* attached = malloc((size_t)bsize);
  MPI_Buffer_attach(attached, bsize);
  int out[4] = {1, 2, 3, 4}, in[100];
  MPI_Bsend(out, 4, MPI_INT, peer, 1, MPI_COMM_WORLD);
  MPI_Recv(in, 4, MPI_INT, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  MPI_Buffer_detach(&attached, &bsize);
  free(attached);

  // Type signatures, flattened (MPI 4.1 sec. 3.3.1): one contiguous(4, MPI_INT) is four MPI_INT; a receive
  // may be larger than the message (sec. 3.2.4).
  MPI_Datatype four;
  MPI_Type_contiguous(4, MPI_INT, &four);
  MPI_Type_commit(&four);
  if (rank == 0) {
    MPI_Send(out, 1, four, 1, 2, MPI_COMM_WORLD);
  } else {
    MPI_Recv(in, 100, MPI_INT, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  MPI_Type_free(&four);

  // A receive from any source, cancelled before any message could match it (MPI 4.1 sec. 3.8.4).
  MPI_Request cancelled;
  MPI_Irecv(in, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &cancelled);
  MPI_Cancel(&cancelled);
  MPI_Wait(&cancelled, MPI_STATUS_IGNORE);

  // A matched probe takes the message; its MPI_Mrecv receives it (MPI 4.1 sec. 3.8.2).
  if (rank == 0) {
    MPI_Send(out, 2, MPI_INT, 1, 5, MPI_COMM_WORLD);
  } else {
    MPI_Message message;
    MPI_Status status;
    MPI_Mprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &message, &status);
    MPI_Mrecv(in, 2, MPI_INT, &message, MPI_STATUS_IGNORE);
  }

  // A window outlives the communicator it was made on (MPI 4.1 sec. 12.2); a lock epoch between two fences
  // (MPICH test/mpi/rma/mixedsync.c).
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  int* base = calloc(8, sizeof(int));
  MPI_Win win;
  MPI_Win_create(base, 8 * sizeof(int), sizeof(int), MPI_INFO_NULL, dup, &win);
  MPI_Comm_free(&dup);
  MPI_Win_fence(0, win);
  MPI_Put(&mine, 1, MPI_INT, peer, rank, 1, MPI_INT, win);
  MPI_Win_fence(0, win);
  MPI_Win_lock(MPI_LOCK_EXCLUSIVE, peer, 0, win);
  MPI_Put(&mine, 1, MPI_INT, peer, 2 + rank, 1, MPI_INT, win);
  MPI_Win_unlock(peer, win);
  MPI_Win_fence(0, win);
  MPI_Win_free(&win);
  free(base);

  MPI_Finalize();
  return 0;
}
