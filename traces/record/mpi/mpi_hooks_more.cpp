// The MPI recorder's hooks for the calls issue 32 added (docs/TRACES.md, "MPI recorder format"): every
// constructor and destructor of a communicator, every send mode, cancel, matched probes, datatypes (with their
// flattened signatures), the other RMA calls, collectives with a type per peer, neighbourhood collectives,
// generalized requests. mpi_hooks.cpp has the others; mpi_hook_args.h what both share.
#include "mpi_hook_args.h"

using namespace collmc::recorder::mpi_hooks;  // NOLINT(google-build-using-namespace): the hooks' own helpers

#pragma GCC visibility push(default)
extern "C" {

// ---- issue 32: every constructor and destructor of a communicator ----------------------------------------
int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_create_group",
      [&](JsonLine& l) {
        int size = -1;
        if (group != MPI_GROUP_NULL) PMPI_Group_size(group, &size);
        handle(l, "comm", comm).i64("tag", tag).i64("group_size", size);
      },
      [&] { return PMPI_Comm_create_group(comm, group, tag, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_dup_with_info", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Comm_dup_with_info(comm, info, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
// A nonblocking dup: its communicator may be used once the request completed (MPI 4.1 sec. 7.4.2).
int MPI_Comm_idup(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* req) {
  return recorded(
      "MPI_Comm_idup", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Comm_idup(comm, newcomm, req); },
      [&](JsonLine& l, int r) {
        new_comm(l, r, newcomm, false);
        handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL);
      });
}
int MPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
                         MPI_Comm* newintercomm) {
  return recorded(
      "MPI_Intercomm_create",
      [&](JsonLine& l) {
        handle(l, "comm", local_comm).i64("local_leader", local_leader).i64("remote_leader", remote_leader);
        handle(l, "peer_comm", peer_comm).i64("tag", tag);
      },
      [&] { return PMPI_Intercomm_create(local_comm, local_leader, peer_comm, remote_leader, tag, newintercomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newintercomm); });
}
int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  return recorded(
      "MPI_Intercomm_merge", [&](JsonLine& l) { handle(l, "comm", intercomm).i64("high", high); },
      [&] { return PMPI_Intercomm_merge(intercomm, high, newintracomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newintracomm); });
}
int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  return recorded(
      "MPI_Cart_sub", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Cart_sub(comm, remain_dims, newcomm); }, [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Graph_create(MPI_Comm comm, int nnodes, const int index[], const int edges[], int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Graph_create", [&](JsonLine& l) { handle(l, "comm", comm).i64("nnodes", nnodes); },
      [&] { return PMPI_Graph_create(comm, nnodes, index, edges, reorder, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Dist_graph_create(MPI_Comm comm, int n, const int sources[], const int degrees[], const int destinations[],
                          const int weights[], MPI_Info info, int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Dist_graph_create", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] { return PMPI_Dist_graph_create(comm, n, sources, degrees, destinations, weights, info, reorder, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Dist_graph_create_adjacent(MPI_Comm comm, int indegree, const int sources[], const int sourceweights[],
                                   int outdegree, const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Dist_graph_create_adjacent", [&](JsonLine& l) { handle(l, "comm", comm); },
      [&] {
        return PMPI_Dist_graph_create_adjacent(comm, indegree, sources, sourceweights, outdegree, destinations,
                                               destweights, info, reorder, newcomm);
      },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_disconnect(MPI_Comm* comm) {
  return recorded(
      "MPI_Comm_disconnect", [&](JsonLine& l) { handle(l, "comm", comm != nullptr ? *comm : MPI_COMM_NULL); },
      [&] { return PMPI_Comm_disconnect(comm); }, no_out);
}

// ---- issue 32: every send mode, cancel, matched probes ------------------------------------------------
int MPI_Ibsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Ibsend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Ibsend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Irsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Irsend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Irsend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Cancel(MPI_Request* req) {
  return recorded(
      "MPI_Cancel", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Cancel(req); }, no_out);
}
int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Iprobe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Iprobe(source, tag, comm, flag, st); },
      [&](JsonLine& l, int r) {
        l.i64("flag", flag != nullptr ? *flag : 0);
        if (flag != nullptr && *flag != 0) status_out(l, r, *st);
      });
}
// A matched probe takes the message out of matching (MPI 4.1 sec. 3.8.2): the receive happens here; the
// MPI_Mrecv or MPI_Imrecv of its message handle only copies it.
int MPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message* message, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Mprobe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Mprobe(source, tag, comm, message, st); },
      [&](JsonLine& l, int r) {
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL);
        status_out(l, r, *st);
      });
}
int MPI_Improbe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Improbe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Improbe(source, tag, comm, flag, message, st); },
      [&](JsonLine& l, int r) {
        l.i64("flag", flag != nullptr ? *flag : 0);
        if (flag == nullptr || *flag == 0) return;
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL);
        status_out(l, r, *st);
      });
}
int MPI_Mrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Mrecv",
      [&](JsonLine& l) {
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig");
        memory(l, "buf", "bytes", buf, count, type);
      },
      [&] { return PMPI_Mrecv(buf, count, type, message, st); }, [&](JsonLine& l, int r) { status_out(l, r, *st); });
}
int MPI_Imrecv(void* buf, int count, MPI_Datatype type, MPI_Message* message, MPI_Request* req) {
  return recorded(
      "MPI_Imrecv",
      [&](JsonLine& l) {
        handle(l, "message", message != nullptr ? *message : MPI_MESSAGE_NULL).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig");
        memory(l, "buf", "bytes", buf, count, type);
      },
      [&] { return PMPI_Imrecv(buf, count, type, message, req); },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Buffer_attach(void* buffer, int size) {
  return recorded(
      "MPI_Buffer_attach", [&](JsonLine& l) { l.ptr("buf", buffer).i64("size", size); },
      [&] { return PMPI_Buffer_attach(buffer, size); }, no_out);
}
int MPI_Buffer_detach(void* buffer, int* size) {
  return recorded(
      "MPI_Buffer_detach", no_args, [&] { return PMPI_Buffer_detach(buffer, size); }, no_out);
}

// ---- issue 32: datatypes: constructors (with the new type's flattened signature), commit, free ----------
int MPI_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_contiguous", t, [&] { return PMPI_Type_contiguous(count, old, t); });
}
int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_vector", t, [&] { return PMPI_Type_vector(count, blocklength, stride, old, t); });
}
int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_create_hvector", t,
                   [&] { return PMPI_Type_create_hvector(count, blocklength, stride, old, t); });
}
int MPI_Type_indexed(int count, const int blocklengths[], const int displs[], MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_indexed", t, [&] { return PMPI_Type_indexed(count, blocklengths, displs, old, t); });
}
int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displs[], MPI_Datatype old,
                             MPI_Datatype* t) {
  return type_made("MPI_Type_create_hindexed", t,
                   [&] { return PMPI_Type_create_hindexed(count, blocklengths, displs, old, t); });
}
int MPI_Type_create_indexed_block(int count, int blocklength, const int displs[], MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_create_indexed_block", t,
                   [&] { return PMPI_Type_create_indexed_block(count, blocklength, displs, old, t); });
}
int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displs[], MPI_Datatype old,
                                   MPI_Datatype* t) {
  return type_made("MPI_Type_create_hindexed_block", t,
                   [&] { return PMPI_Type_create_hindexed_block(count, blocklength, displs, old, t); });
}
int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displs[], const MPI_Datatype types[],
                           MPI_Datatype* t) {
  return type_made("MPI_Type_create_struct", t,
                   [&] { return PMPI_Type_create_struct(count, blocklengths, displs, types, t); });
}
int MPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
                             MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_create_subarray", t,
                   [&] { return PMPI_Type_create_subarray(ndims, sizes, subsizes, starts, order, old, t); });
}
int MPI_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype* t) {
  return type_made("MPI_Type_create_resized", t, [&] { return PMPI_Type_create_resized(old, lb, extent, t); });
}
int MPI_Type_dup(MPI_Datatype old, MPI_Datatype* t) {
  return type_made("MPI_Type_dup", t, [&] { return PMPI_Type_dup(old, t); });
}
int MPI_Type_commit(MPI_Datatype* t) {
  return recorded(
      "MPI_Type_commit", [&](JsonLine& l) { handle(l, "type", t != nullptr ? *t : MPI_DATATYPE_NULL); },
      [&] { return PMPI_Type_commit(t); }, no_out);
}
int MPI_Type_free(MPI_Datatype* t) {
  return recorded(
      "MPI_Type_free", [&](JsonLine& l) { handle(l, "type", t != nullptr ? *t : MPI_DATATYPE_NULL); },
      [&] { return PMPI_Type_free(t); }, no_out);
}

// ---- issue 32: the other RMA calls -------------------------------------------------------------------
int MPI_Win_flush_local_all(MPI_Win win) {
  return recorded(
      "MPI_Win_flush_local_all", [&](JsonLine& l) { handle(l, "win", win); },
      [&] { return PMPI_Win_flush_local_all(win); }, no_out);
}
int MPI_Win_sync(MPI_Win win) {
  return recorded(
      "MPI_Win_sync", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_sync(win); }, no_out);
}
int MPI_Win_test(MPI_Win win, int* flag) {
  return recorded(
      "MPI_Win_test", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_test(win, flag); },
      [&](JsonLine& l, int) { l.i64("flag", flag != nullptr ? *flag : 0); });
}
// Request-based transfers (MPI 4.1 sec. 12.3.5): an RMA call of its epoch whose request completes it locally.
int MPI_Rput(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Rput",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] {
        return PMPI_Rput(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Rget(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Rget",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] {
        return PMPI_Rget(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Raccumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                    int target_count, MPI_Datatype target_type, MPI_Op o, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Raccumulate",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
        op(l, o);
      },
      [&] {
        return PMPI_Raccumulate(origin, origin_count, origin_type, target, target_disp, target_count, target_type, o,
                                win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
int MPI_Rget_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result, int result_count,
                        MPI_Datatype result_type, int target, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_type, MPI_Op o, MPI_Win win, MPI_Request* req) {
  return recorded(
      "MPI_Rget_accumulate",
      [&](JsonLine& l) {
        const bool no_op = o == MPI_NO_OP;  // the origin arguments are ignored (MPI 4.1 sec. 12.3.4)
        rma_args(l, win, no_op ? result : origin, no_op ? result_count : origin_count,
                 no_op ? result_type : origin_type, target, target_disp, target_count, target_type);
        result_memory(l, result, result_count, result_type);
        op(l, o);
      },
      [&] {
        return PMPI_Rget_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target,
                                    target_disp, target_count, target_type, o, win, req);
      },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
// Atomic read-modify-write transfers: accesses like MPI_Accumulate's (they do not race with each other).
int MPI_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result, int result_count,
                       MPI_Datatype result_type, int target, MPI_Aint target_disp, int target_count,
                       MPI_Datatype target_type, MPI_Op o, MPI_Win win) {
  return recorded(
      "MPI_Get_accumulate",
      [&](JsonLine& l) {
        // With MPI_NO_OP the origin arguments are ignored (MPI 4.1 sec. 12.3.4): the result's are written.
        const bool no_op = o == MPI_NO_OP;
        rma_args(l, win, no_op ? result : origin, no_op ? result_count : origin_count,
                 no_op ? result_type : origin_type, target, target_disp, target_count, target_type);
        result_memory(l, result, result_count, result_type);
        op(l, o);
      },
      [&] {
        return PMPI_Get_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target,
                                   target_disp, target_count, target_type, o, win);
      },
      no_out);
}
int MPI_Fetch_and_op(const void* origin, void* result, MPI_Datatype type, int target, MPI_Aint target_disp, MPI_Op o,
                     MPI_Win win) {
  return recorded(
      "MPI_Fetch_and_op",
      [&](JsonLine& l) {
        rma_args(l, win, origin, 1, type, target, target_disp, 1, type);
        result_memory(l, result, 1, type);
        op(l, o);
      },
      [&] { return PMPI_Fetch_and_op(origin, result, type, target, target_disp, o, win); }, no_out);
}
int MPI_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype type, int target,
                         MPI_Aint target_disp, MPI_Win win) {
  return recorded(
      "MPI_Compare_and_swap",
      [&](JsonLine& l) {
        rma_args(l, win, origin, 1, type, target, target_disp, 1, type);
        result_memory(l, result, 1, type);
      },
      [&] { return PMPI_Compare_and_swap(origin, compare, result, type, target, target_disp, win); }, no_out);
}

// ---- issue 32: collectives with a type per peer (their types are not compared) -------------------------
int MPI_Alltoallw(const void* s, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* r,
                  const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm) {
  return recorded(
      "MPI_Alltoallw", [&](JsonLine& l) { handle(l, "comm", comm).i64("count", -1); },
      [&] { return PMPI_Alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm); }, no_out);
}
int MPI_Ialltoallw(const void* s, const int scounts[], const int sdispls[], const MPI_Datatype stypes[], void* r,
                   const int rcounts[], const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                   MPI_Request* req) {
  return recorded(
      "MPI_Ialltoallw", [&](JsonLine& l) { handle(l, "comm", comm).i64("count", -1); },
      [&] { return PMPI_Ialltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm, req); },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}
// Neighbourhood collectives (MPI 4.1 sec. 8.6): every member of the topology communicator calls them.
int MPI_Neighbor_allgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                           MPI_Comm comm) {
  return neighbor("MPI_Neighbor_allgather", comm,
                  [&] { return PMPI_Neighbor_allgather(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Neighbor_allgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[],
                            const int displs[], MPI_Datatype rtype, MPI_Comm comm) {
  return neighbor("MPI_Neighbor_allgatherv", comm,
                  [&] { return PMPI_Neighbor_allgatherv(s, scount, stype, r, rcounts, displs, rtype, comm); });
}
int MPI_Neighbor_alltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                          MPI_Comm comm) {
  return neighbor("MPI_Neighbor_alltoall", comm,
                  [&] { return PMPI_Neighbor_alltoall(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Neighbor_alltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype, void* r,
                           const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  return neighbor("MPI_Neighbor_alltoallv", comm, [&] {
    return PMPI_Neighbor_alltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm);
  });
}
int MPI_Neighbor_alltoallw(const void* s, const int scounts[], const MPI_Aint sdispls[], const MPI_Datatype stypes[],
                           void* r, const int rcounts[], const MPI_Aint rdispls[], const MPI_Datatype rtypes[],
                           MPI_Comm comm) {
  return neighbor("MPI_Neighbor_alltoallw", comm, [&] {
    return PMPI_Neighbor_alltoallw(s, scounts, sdispls, stypes, r, rcounts, rdispls, rtypes, comm);
  });
}
// A generalized request (MPI 4.1 sec. 13.2): completed by the program itself, not by a peer.
int MPI_Grequest_start(MPI_Grequest_query_function* query, MPI_Grequest_free_function* free_fn,
                       MPI_Grequest_cancel_function* cancel, void* extra, MPI_Request* req) {
  return recorded(
      "MPI_Grequest_start", no_args, [&] { return PMPI_Grequest_start(query, free_fn, cancel, extra, req); },
      [&](JsonLine& l, int) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); });
}

}  // extern "C"
#pragma GCC visibility pop
