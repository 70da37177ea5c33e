// v-collectives (MPI 4.1 sec. 6.5-6.8): each pair of ranks must pass one type signature, the sender's
// count and type against the receiver's count for it and type; the counts differ from rank to rank legally.
// Here rank r contributes r + 1 elements to an MPI_Allgatherv and sends r + j + 1 to rank j in an
// MPI_Alltoallv and an MPI_Gatherv/MPI_Scatterv pair, every receive count saying the same; and rank 0 sends
// floats and receives ints in an MPI_Alltoallv whose self counts are zero (rank 1 the reverse): correct.
// Built with -DWRONG_TYPE, odd ranks pass MPI_FLOAT where even ranks pass MPI_INT to the MPI_Allgatherv
// (MBI's ParamMatching_Data_Allgatherv_nok): the type signatures of a pair differ, erroneous.
#include <mpi.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > 8) MPI_Abort(MPI_COMM_WORLD, 2);
  int send[16] = {0}, recv[128] = {0}, counts[8], displs[8], rcounts[8], rdispls[8];
  MPI_Datatype type = MPI_INT;
#ifdef WRONG_TYPE
  if (rank % 2 == 1) type = MPI_FLOAT;
#endif
  for (int i = 0; i < size; ++i) {
    counts[i] = i + 1;  // what rank i contributes
    displs[i] = i * 8;
  }
  MPI_Allgatherv(send, rank + 1, type, recv, counts, displs, type, MPI_COMM_WORLD);

  // Rank r sends r + j + 1 elements to rank j, and rank j receives r + j + 1 from rank r.
  for (int j = 0; j < size; ++j) {
    counts[j] = rank + j + 1;
    displs[j] = 0;
    rcounts[j] = j + rank + 1;
    rdispls[j] = j * 16;
  }
  MPI_Alltoallv(send, counts, displs, MPI_INT, recv, rcounts, rdispls, MPI_INT, MPI_COMM_WORLD);
  MPI_Gatherv(send, rank + 1, MPI_INT, recv, counts, rdispls, MPI_INT, 0, MPI_COMM_WORLD);
  MPI_Scatterv(send, counts, displs, MPI_INT, recv, rank + 1, MPI_INT, 0, MPI_COMM_WORLD);

  // Different types on one rank's two sides, matched pair by pair: ranks 0 and 1 send each other two
  // elements (a float from rank 0 is received as a float by rank 1, rank 1's int as an int by rank 0) and
  // nothing to themselves; every other rank takes no part in this exchange.
  for (int j = 0; j < size; ++j) counts[j] = rcounts[j] = (rank < 2 && j < 2 && j != rank) ? 2 : 0;
  MPI_Datatype stype = rank == 0 ? MPI_FLOAT : MPI_INT, rtype = rank == 0 ? MPI_INT : MPI_FLOAT;
  MPI_Alltoallv(send, counts, displs, stype, recv, rcounts, rdispls, rtype, MPI_COMM_WORLD);

  MPI_Finalize();
  return 0;
}
