// The MPI calls the MPI recorder sees (docs/TRACES.md, "MPI recorder format"): the profiling interface.
// Each MPI_X defined here overrides the MPI library's (weak) MPI_X for the whole process when the
// library is preloaded, writes an entry line with the arguments, calls PMPI_X, and writes a return line
// with the result and the outputs. Communicators, windows, requests and groups are written as their
// handles' bits ("0x..."): the reader follows them through the process's own calls.
// This file holds start and end, communicators, windows, collectives, point to point and completion;
// mpi_hooks_more.cpp the rest; mpi_hook_args.h what both share.
#include "mpi_hook_args.h"

const char* const collmc::recorder::kTraceFormat = "collmc-mpi-recorder";

using namespace collmc::recorder::mpi_hooks;  // NOLINT(google-build-using-namespace): the hooks' own helpers

#pragma GCC visibility push(default)
extern "C" {

// ---- start and end ---------------------------------------------------------------------------------
int MPI_Init(int* argc, char*** argv) {
  return recorded(
      "MPI_Init", no_args, [&] { return PMPI_Init(argc, argv); }, init_out);
}
int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return recorded(
      "MPI_Init_thread", [&](JsonLine& l) { l.i64("required", required); },
      [&] { return PMPI_Init_thread(argc, argv, required, provided); }, init_out);
}
int MPI_Finalize(void) {
  return recorded(
      "MPI_Finalize", no_args, [] { return PMPI_Finalize(); }, no_out);
}
int MPI_Abort(MPI_Comm comm, int errorcode) {
  return recorded(
      "MPI_Abort", [&](JsonLine& l) { handle(l, "comm", comm).i64("errorcode", errorcode); },
      [&] { return PMPI_Abort(comm, errorcode); }, no_out);
}

// ---- communicators ---------------------------------------------------------------------------------
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_split",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("color", color == MPI_UNDEFINED ? -1 : color).i64("key", key);
        if (color < 0 && color != MPI_UNDEFINED) l.i64("invalid_color", color);  // MPI 4.1 §7.4.2: erroneous
      },
      [&] { return PMPI_Comm_split(comm, color, key, newcomm); }, [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_split_type",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("color", split_type == MPI_UNDEFINED ? -1 : split_type).i64("key", key);
      },
      [&] { return PMPI_Comm_split_type(comm, split_type, key, info, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_dup", [&](JsonLine& l) { handle(l, "comm", comm); }, [&] { return PMPI_Comm_dup(comm, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Comm_create",
      [&](JsonLine& l) {
        int size = -1;
        if (group != MPI_GROUP_NULL) PMPI_Group_size(group, &size);
        handle(l, "comm", comm);
        handle(l, "group", group).i64("group_size", size);
      },
      [&] { return PMPI_Comm_create(comm, group, newcomm); }, [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
// Cartesian topologies (issue 26): a creation is a communicator creation; a query on a communicator without
// a Cartesian topology, or a creation with a dimension below one, is erroneous (MPI 4.1 §8.5).
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* newcomm) {
  return recorded(
      "MPI_Cart_create",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("ndims", ndims);
        int64_t bad = 0;
        for (int i = 0; i < ndims && dims != nullptr; ++i)
          if (dims[i] <= 0) bad = dims[i];
        if (ndims < 0 || bad != 0) l.i64("invalid_dim", ndims < 0 ? ndims : bad);
      },
      [&] { return PMPI_Cart_create(comm, ndims, dims, periods, reorder, newcomm); },
      [&](JsonLine& l, int r) { new_comm(l, r, newcomm); });
}
int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  return recorded(
      "MPI_Cart_get",
      [&](JsonLine& l) {
        handle(l, "comm", comm);
        int topo = MPI_UNDEFINED;
        if (comm != MPI_COMM_NULL && PMPI_Topo_test(comm, &topo) == MPI_SUCCESS && topo != MPI_CART)
          l.i64("not_cartesian", 1);
      },
      [&] { return PMPI_Cart_get(comm, maxdims, dims, periods, coords); }, no_out);
}
int MPI_Comm_free(MPI_Comm* comm) {
  return recorded(
      "MPI_Comm_free", [&](JsonLine& l) { handle(l, "comm", comm != nullptr ? *comm : MPI_COMM_NULL); },
      [&] { return PMPI_Comm_free(comm); }, no_out);
}

// ---- windows ---------------------------------------------------------------------------------------
int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return recorded(
      "MPI_Win_create",
      [&](JsonLine& l) {
        handle(l, "comm", comm).ptr("base", base).i64("size", size).i64("disp_unit", disp_unit);
        watch_memory(base, size);  // the window's memory: other ranks' transfers reach it
      },
      [&] { return PMPI_Win_create(base, size, disp_unit, info, comm, win); },
      [&](JsonLine& l, int) { handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL); });
}
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return recorded(
      "MPI_Win_allocate", [&](JsonLine& l) { handle(l, "comm", comm).i64("size", size).i64("disp_unit", disp_unit); },
      [&] { return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win); },
      [&](JsonLine& l, int r) {
        void* base = nullptr;
        if (r == MPI_SUCCESS && baseptr != nullptr) std::memcpy(&base, baseptr, sizeof base);
        if (r == MPI_SUCCESS) watch_memory(base, size);
        handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL).ptr("base", base);
      });
}
int MPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
  return recorded(
      "MPI_Win_allocate_shared",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("size", size).i64("disp_unit", disp_unit); },
      [&] { return PMPI_Win_allocate_shared(size, disp_unit, info, comm, baseptr, win); },
      [&](JsonLine& l, int r) {
        void* base = nullptr;
        if (r == MPI_SUCCESS && baseptr != nullptr) std::memcpy(&base, baseptr, sizeof base);
        if (r == MPI_SUCCESS) watch_memory(base, size);
        handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL).ptr("base", base);
      });
}
int MPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  return recorded(
      "MPI_Win_create_dynamic", [&](JsonLine& l) { handle(l, "comm", comm).ptr("base", nullptr).i64("size", 0); },
      [&] { return PMPI_Win_create_dynamic(info, comm, win); },
      [&](JsonLine& l, int) { handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL); });
}
int MPI_Win_free(MPI_Win* win) {
  return recorded(
      "MPI_Win_free", [&](JsonLine& l) { handle(l, "win", win != nullptr ? *win : MPI_WIN_NULL); },
      [&] { return PMPI_Win_free(win); }, no_out);
}
int MPI_Win_fence(int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_fence",
      [&](JsonLine& l) {
        handle(l, "win", win).i64("assert", assertion).i64("nosucceed", (assertion & MPI_MODE_NOSUCCEED) != 0 ? 1 : 0);
      },
      [&] { return PMPI_Win_fence(assertion, win); }, no_out);
}
int MPI_Win_lock(int lock_type, int rank, int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_lock",
      [&](JsonLine& l) {
        handle(l, "win", win).i64("target", rank).str("lock", lock_type == MPI_LOCK_EXCLUSIVE ? "exclusive" : "shared");
      },
      [&] { return PMPI_Win_lock(lock_type, rank, assertion, win); }, no_out);
}
int MPI_Win_unlock(int rank, MPI_Win win) {
  return recorded(
      "MPI_Win_unlock", [&](JsonLine& l) { handle(l, "win", win).i64("target", rank); },
      [&] { return PMPI_Win_unlock(rank, win); }, no_out);
}
int MPI_Win_lock_all(int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_lock_all", [&](JsonLine& l) { handle(l, "win", win).i64("assert", assertion); },
      [&] { return PMPI_Win_lock_all(assertion, win); }, no_out);
}
int MPI_Win_unlock_all(MPI_Win win) {
  return recorded(
      "MPI_Win_unlock_all", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_unlock_all(win); },
      no_out);
}
int MPI_Win_flush(int rank, MPI_Win win) {
  return recorded(
      "MPI_Win_flush", [&](JsonLine& l) { handle(l, "win", win).i64("target", rank); },
      [&] { return PMPI_Win_flush(rank, win); }, no_out);
}
int MPI_Win_flush_all(MPI_Win win) {
  return recorded(
      "MPI_Win_flush_all", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_flush_all(win); },
      no_out);
}
int MPI_Win_flush_local(int rank, MPI_Win win) {
  return recorded(
      "MPI_Win_flush_local", [&](JsonLine& l) { handle(l, "win", win).i64("target", rank); },
      [&] { return PMPI_Win_flush_local(rank, win); }, no_out);
}
int MPI_Put(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  return recorded(
      "MPI_Put",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] { return PMPI_Put(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win); },
      no_out);
}
int MPI_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_type, MPI_Win win) {
  return recorded(
      "MPI_Get",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
      },
      [&] { return PMPI_Get(origin, origin_count, origin_type, target, target_disp, target_count, target_type, win); },
      no_out);
}
int MPI_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_type, MPI_Op o, MPI_Win win) {
  return recorded(
      "MPI_Accumulate",
      [&](JsonLine& l) {
        rma_args(l, win, origin, origin_count, origin_type, target, target_disp, target_count, target_type);
        op(l, o);
      },
      [&] {
        return PMPI_Accumulate(origin, origin_count, origin_type, target, target_disp, target_count, target_type, o,
                               win);
      },
      no_out);
}

// ---- generalized active target synchronisation (post, start, complete, wait) ---------------------------
int MPI_Win_post(MPI_Group group, int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_post",
      [&](JsonLine& l) {
        handle(l, "win", win).i64("assert", assertion);
        // The group as world ranks: the reader pairs each start epoch with its target's post epoch (issue 32).
        if (group != MPI_GROUP_NULL) world_ranks(l, "group", group);
      },
      [&] { return PMPI_Win_post(group, assertion, win); }, no_out);
}
int MPI_Win_start(MPI_Group group, int assertion, MPI_Win win) {
  return recorded(
      "MPI_Win_start",
      [&](JsonLine& l) {
        handle(l, "win", win).i64("assert", assertion);
        // The group as world ranks: the reader pairs each start epoch with its target's post epoch (issue 32).
        if (group != MPI_GROUP_NULL) world_ranks(l, "group", group);
      },
      [&] { return PMPI_Win_start(group, assertion, win); }, no_out);
}
int MPI_Win_complete(MPI_Win win) {
  return recorded(
      "MPI_Win_complete", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_complete(win); }, no_out);
}
int MPI_Win_wait(MPI_Win win) {
  return recorded(
      "MPI_Win_wait", [&](JsonLine& l) { handle(l, "win", win); }, [&] { return PMPI_Win_wait(win); }, no_out);
}

// ---- blocking collectives --------------------------------------------------------------------------
int MPI_Barrier(MPI_Comm comm) {
  return blocking("MPI_Barrier", {comm, 0, MPI_DATATYPE_NULL, nullptr, kNotRooted}, [&] { return PMPI_Barrier(comm); });
}
int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
  return blocking("MPI_Bcast", {comm, count, type, nullptr, root},
                  [&] { return PMPI_Bcast(buf, count, type, root, comm); });
}
int MPI_Reduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, int root, MPI_Comm comm) {
  return blocking("MPI_Reduce", {comm, count, type, &o, root},
                  [&] { return PMPI_Reduce(s, r, count, type, o, root, comm); });
}
int MPI_Allreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Allreduce", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Allreduce(s, r, count, type, o, comm); });
}
int MPI_Scan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Scan", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Scan(s, r, count, type, o, comm); });
}
int MPI_Exscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Exscan", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Exscan(s, r, count, type, o, comm); });
}
int MPI_Reduce_scatter_block(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter_block", {comm, count, type, &o, kNotRooted},
                  [&] { return PMPI_Reduce_scatter_block(s, r, count, type, o, comm); });
}
int MPI_Reduce_scatter(const void* s, void* r, const int counts[], MPI_Datatype type, MPI_Op o, MPI_Comm comm) {
  return blocking("MPI_Reduce_scatter", {comm, -1, type, &o, kNotRooted},
                  [&] { return PMPI_Reduce_scatter(s, r, counts, type, o, comm); });
}
int MPI_Allgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                  MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;  // the send count and type are ignored (MPI 4.1 sec. 6.7)
  return blocking("MPI_Allgather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip},
                  [&] { return PMPI_Allgather(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Allgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                   MPI_Datatype rtype, MPI_Comm comm) {
  return blocking("MPI_Allgatherv", allgatherv_args(comm, s, scount, stype, rcounts, rtype),
                  [&] { return PMPI_Allgatherv(s, scount, stype, r, rcounts, displs, rtype, comm); });
}
int MPI_Gather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
               MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;  // at the root: its send arguments are ignored (MPI 4.1 sec. 6.5)
  return blocking("MPI_Gather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, root, ip},
                  [&] { return PMPI_Gather(s, scount, stype, r, rcount, rtype, root, comm); });
}
int MPI_Gatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                MPI_Datatype rtype, int root, MPI_Comm comm) {
  return blocking("MPI_Gatherv", gatherv_args(comm, s, scount, stype, rcounts, rtype, root),
                  [&] { return PMPI_Gatherv(s, scount, stype, r, rcounts, displs, rtype, root, comm); });
}
int MPI_Scatter(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm) {
  const bool ip = r == MPI_IN_PLACE;  // at the root: its receive arguments are ignored (MPI 4.1 sec. 6.6)
  return blocking("MPI_Scatter", {comm, ip ? scount : rcount, ip ? stype : rtype, nullptr, root, ip},
                  [&] { return PMPI_Scatter(s, scount, stype, r, rcount, rtype, root, comm); });
}
int MPI_Scatterv(const void* s, const int scounts[], const int displs[], MPI_Datatype stype, void* r, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm) {
  return blocking("MPI_Scatterv", scatterv_args(comm, scounts, stype, r, rcount, rtype, root),
                  [&] { return PMPI_Scatterv(s, scounts, displs, stype, r, rcount, rtype, root, comm); });
}
int MPI_Alltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                 MPI_Comm comm) {
  const bool ip = s == MPI_IN_PLACE;  // the send count and type are ignored (MPI 4.1 sec. 6.8)
  return blocking("MPI_Alltoall", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip},
                  [&] { return PMPI_Alltoall(s, scount, stype, r, rcount, rtype, comm); });
}
int MPI_Alltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype, void* r,
                  const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm) {
  return blocking("MPI_Alltoallv", alltoallv_args(comm, s, scounts, stype, rcounts, rtype),
                  [&] { return PMPI_Alltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm); });
}

// ---- nonblocking collectives -----------------------------------------------------------------------
int MPI_Ibarrier(MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Ibarrier", {comm, 0, MPI_DATATYPE_NULL, nullptr, kNotRooted}, req,
                     [&] { return PMPI_Ibarrier(comm, req); });
}
int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Ibcast", {comm, count, type, nullptr, root}, req,
                     [&] { return PMPI_Ibcast(buf, count, type, root, comm, req); });
}
int MPI_Ireduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, int root, MPI_Comm comm,
                MPI_Request* req) {
  return nonblocking("MPI_Ireduce", {comm, count, type, &o, root}, req,
                     [&] { return PMPI_Ireduce(s, r, count, type, o, root, comm, req); });
}
int MPI_Iallreduce(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iallreduce", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Iallreduce(s, r, count, type, o, comm, req); });
}
int MPI_Iscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iscan", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Iscan(s, r, count, type, o, comm, req); });
}
int MPI_Iexscan(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iexscan", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Iexscan(s, r, count, type, o, comm, req); });
}
int MPI_Ireduce_scatter_block(const void* s, void* r, int count, MPI_Datatype type, MPI_Op o, MPI_Comm comm,
                              MPI_Request* req) {
  return nonblocking("MPI_Ireduce_scatter_block", {comm, count, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Ireduce_scatter_block(s, r, count, type, o, comm, req); });
}
int MPI_Iallgather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype,
                   MPI_Comm comm, MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Iallgather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip}, req,
                     [&] { return PMPI_Iallgather(s, scount, stype, r, rcount, rtype, comm, req); });
}
int MPI_Igather(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
                MPI_Comm comm, MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Igather", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, root, ip}, req,
                     [&] { return PMPI_Igather(s, scount, stype, r, rcount, rtype, root, comm, req); });
}
int MPI_Iscatter(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, int root,
                 MPI_Comm comm, MPI_Request* req) {
  const bool ip = r == MPI_IN_PLACE;
  return nonblocking("MPI_Iscatter", {comm, ip ? scount : rcount, ip ? stype : rtype, nullptr, root, ip}, req,
                     [&] { return PMPI_Iscatter(s, scount, stype, r, rcount, rtype, root, comm, req); });
}
int MPI_Ialltoall(const void* s, int scount, MPI_Datatype stype, void* r, int rcount, MPI_Datatype rtype, MPI_Comm comm,
                  MPI_Request* req) {
  const bool ip = s == MPI_IN_PLACE;
  return nonblocking("MPI_Ialltoall", {comm, ip ? rcount : scount, ip ? rtype : stype, nullptr, kNotRooted, ip}, req,
                     [&] { return PMPI_Ialltoall(s, scount, stype, r, rcount, rtype, comm, req); });
}

int MPI_Ireduce_scatter(const void* s, void* r, const int counts[], MPI_Datatype type, MPI_Op o, MPI_Comm comm,
                        MPI_Request* req) {
  return nonblocking("MPI_Ireduce_scatter", {comm, -1, type, &o, kNotRooted}, req,
                     [&] { return PMPI_Ireduce_scatter(s, r, counts, type, o, comm, req); });
}
int MPI_Iallgatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                    MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iallgatherv", allgatherv_args(comm, s, scount, stype, rcounts, rtype), req,
                     [&] { return PMPI_Iallgatherv(s, scount, stype, r, rcounts, displs, rtype, comm, req); });
}
int MPI_Igatherv(const void* s, int scount, MPI_Datatype stype, void* r, const int rcounts[], const int displs[],
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Igatherv", gatherv_args(comm, s, scount, stype, rcounts, rtype, root), req,
                     [&] { return PMPI_Igatherv(s, scount, stype, r, rcounts, displs, rtype, root, comm, req); });
}
int MPI_Iscatterv(const void* s, const int scounts[], const int displs[], MPI_Datatype stype, void* r, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Iscatterv", scatterv_args(comm, scounts, stype, r, rcount, rtype, root), req,
                     [&] { return PMPI_Iscatterv(s, scounts, displs, stype, r, rcount, rtype, root, comm, req); });
}
int MPI_Ialltoallv(const void* s, const int scounts[], const int sdispls[], MPI_Datatype stype, void* r,
                   const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm, MPI_Request* req) {
  return nonblocking("MPI_Ialltoallv", alltoallv_args(comm, s, scounts, stype, rcounts, rtype), req, [&] {
    return PMPI_Ialltoallv(s, scounts, sdispls, stype, r, rcounts, rdispls, rtype, comm, req);
  });
}

// ---- point to point --------------------------------------------------------------------------------
int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Send", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Send(buf, count, type, dest, tag, comm); });
}
int MPI_Ssend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Ssend", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Ssend(buf, count, type, dest, tag, comm); });
}
int MPI_Bsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Bsend", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Bsend(buf, count, type, dest, tag, comm); });
}
int MPI_Rsend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
  return send_like("MPI_Rsend", buf, count, type, dest, tag, comm,
                   [&] { return PMPI_Rsend(buf, count, type, dest, tag, comm); });
}
int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Isend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Isend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Issend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Issend", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Issend(buf, count, type, dest, tag, comm, req); });
}
int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Recv",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("count", count);
        dtype(l, "dtype", type, "dtype_sig").i64("peer", peer_rank(source)).i64("tag", tag_value(tag));
        memory(l, "buf", "bytes", buf, count, type);
      },
      [&] { return PMPI_Recv(buf, count, type, source, tag, comm, st); },
      [&](JsonLine& l, int r) { status_out(l, r, *st); });
}
int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Irecv", buf, count, type, source, tag, comm, req,
                    [&] { return PMPI_Irecv(buf, count, type, source, tag, comm, req); });
}
int MPI_Sendrecv(const void* sbuf, int scount, MPI_Datatype stype, int dest, int stag, void* rbuf, int rcount,
                 MPI_Datatype rtype, int source, int rtag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Sendrecv",
      [&](JsonLine& l) {
        handle(l, "comm", comm).i64("count", scount);
        dtype(l, "dtype", stype, "dtype_sig").i64("peer", peer_rank(dest)).i64("tag", tag_value(stag));
        l.i64("recv_count", rcount);
        dtype(l, "recv_dtype", rtype, "recv_dtype_sig")
            .i64("recv_peer", peer_rank(source))
            .i64("recv_tag", tag_value(rtag));
        memory(l, "buf", "bytes", sbuf, scount, stype);
        memory(l, "recv_buf", "recv_bytes", rbuf, rcount, rtype);
      },
      [&] { return PMPI_Sendrecv(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, st); },
      [&](JsonLine& l, int r) { status_out(l, r, *st); });
}
// Persistent requests (issue 26): the reader keeps each one's operation and turns every MPI_Start of the
// request into it (MPI 4.1 sec. 3.9).
int MPI_Send_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Send_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Send_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Ssend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Ssend_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Ssend_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Bsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Bsend_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Bsend_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Rsend_init(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Rsend_init", buf, count, type, dest, tag, comm, req,
                    [&] { return PMPI_Rsend_init(buf, count, type, dest, tag, comm, req); });
}
int MPI_Recv_init(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* req) {
  return isend_like("MPI_Recv_init", buf, count, type, source, tag, comm, req,
                    [&] { return PMPI_Recv_init(buf, count, type, source, tag, comm, req); });
}
int MPI_Start(MPI_Request* req) {
  return recorded(
      "MPI_Start", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Start(req); }, no_out);
}
int MPI_Startall(int count, MPI_Request reqs[]) {
  return recorded(
      "MPI_Startall",
      [&](JsonLine& l) {
        ListText list;
        for (int i = 0; i < count && reqs != nullptr; ++i) list.add_hex(bits(reqs[i]));
        l.i64("n", count).str("reqs", list.text());
      },
      [&] { return PMPI_Startall(count, reqs); }, no_out);
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Probe",
      [&](JsonLine& l) { handle(l, "comm", comm).i64("peer", peer_rank(source)).i64("tag", tag_value(tag)); },
      [&] { return PMPI_Probe(source, tag, comm, st); }, [&](JsonLine& l, int r) { status_out(l, r, *st); });
}

// ---- completion ------------------------------------------------------------------------------------
int MPI_Wait(MPI_Request* req, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Wait", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Wait(req, st); }, [&](JsonLine& l, int r) { status_out(l, r, *st); });
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status statuses[]) {
  return all_of_requests("MPI_Waitall", count, reqs, statuses, nullptr,
                         [&](MPI_Status* st) { return PMPI_Waitall(count, reqs, st); });
}
int MPI_Testall(int count, MPI_Request reqs[], int* flag, MPI_Status statuses[]) {
  return all_of_requests("MPI_Testall", count, reqs, statuses, flag,
                         [&](MPI_Status* st) { return PMPI_Testall(count, reqs, flag, st); });
}
int MPI_Waitany(int count, MPI_Request reqs[], int* index, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Waitany",
      [&](JsonLine& l) {
        ListText list;
        for (int i = 0; i < count && reqs != nullptr; ++i) list.add_hex(bits(reqs[i]));
        l.i64("n", count).str("reqs", list.text());
      },
      [&] { return PMPI_Waitany(count, reqs, index, st); },
      [&](JsonLine& l, int r) {
        l.i64("index", index != nullptr && *index != MPI_UNDEFINED ? *index : -1);
        status_out(l, r, *st);
      });
}
int MPI_Test(MPI_Request* req, int* flag, MPI_Status* status) {
  MPI_Status mine;
  MPI_Status* st = status == MPI_STATUS_IGNORE ? &mine : status;
  return recorded(
      "MPI_Test", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Test(req, flag, st); },
      [&](JsonLine& l, int r) {
        l.i64("flag", flag != nullptr ? *flag : 0);
        status_out(l, r, *st);
      });
}
int MPI_Waitsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  return some_of_requests("MPI_Waitsome", incount, reqs, outcount, indices,
                          [&] { return PMPI_Waitsome(incount, reqs, outcount, indices, statuses); });
}
int MPI_Testsome(int incount, MPI_Request reqs[], int* outcount, int indices[], MPI_Status statuses[]) {
  return some_of_requests("MPI_Testsome", incount, reqs, outcount, indices,
                          [&] { return PMPI_Testsome(incount, reqs, outcount, indices, statuses); });
}
int MPI_Testany(int count, MPI_Request reqs[], int* index, int* flag, MPI_Status* status) {
  int one = 0;
  int done = 0;
  return some_of_requests("MPI_Testany", count, reqs, &done, &one, [&] {
    const int r = PMPI_Testany(count, reqs, index, flag, status);
    if (r == MPI_SUCCESS && flag != nullptr && *flag != 0 && index != nullptr && *index != MPI_UNDEFINED) {
      one = *index;
      done = 1;
    }
    return r;
  });
}
int MPI_Request_free(MPI_Request* req) {
  return recorded(
      "MPI_Request_free", [&](JsonLine& l) { handle(l, "req", req != nullptr ? *req : MPI_REQUEST_NULL); },
      [&] { return PMPI_Request_free(req); }, no_out);
}

}  // extern "C"
#pragma GCC visibility pop
