// The NCCL API as the recorder sees it: each interposer writes an entry line with the arguments, calls
// the real function, and writes a return line with the result code and the outputs (hook.h does it for
// all of them). Signatures come from nccl.h (2.28 here); the calls NCCL added later (2.29's one-sided
// operations, 2.30's revoke and grow) are declared below when the header predates them, so the same
// recorder records them in programs linked against a newer NCCL. Nothing here links NCCL.
#include <nccl.h>

#include <climits>
#include <cstdio>

#include "hook.h"
#include "nccl_names.h"

using collmc::model::OpKind;
using collmc::recorder::dtype_name;
using collmc::recorder::JsonLine;
using collmc::recorder::Library;
using collmc::recorder::no_fields;
using collmc::recorder::op_name;
using collmc::recorder::recorded_name;
using collmc::recorder::unique_id_hash;

const char* const collmc::recorder::kTraceFormat = "collmc-recorder";

#define REAL_NCCL(fn) COLLMC_REAL(fn, Library::Nccl)

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 29, 0)
extern "C" {
typedef struct {
  int opCnt;
  int peer;
  int sigIdx;
  int ctx;
} ncclWaitSignalDesc_t;
ncclResult_t ncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer, ncclWindow_t peerWin,
                           size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream);
}
#endif
#if NCCL_VERSION_CODE < NCCL_VERSION(2, 30, 0)
extern "C" {
ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags);
ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId);
ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                          ncclConfig_t* config);
}
#endif

#if NCCL_VERSION_CODE < NCCL_VERSION(2, 31, 0)
extern "C" {
// NCCL 2.31's ncclCollConfig_t (nccl.h.in of 2.31.0a16, ncclCollConfig_v23100) and the one nccl*Config
// collective recorded so far.
typedef struct ncclCollConfig_v23100 {
  size_t size;
  unsigned int magic;
  unsigned int version;
  void* ext;
  int minCTAs;
  int maxCTAs;
  int nvlsCTAs;
  int cgaClusterSize;
} ncclCollConfig_t;
ncclResult_t ncclAllReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config);
}
#endif

namespace {

// One NCCL interposer (hook.h): `Self` is the interposer itself, naming the real function's type.
template <auto Self, class WriteArgs, class WriteOutputs, class... Args>
ncclResult_t nccl_call(const char* name, WriteArgs&& write_args, WriteOutputs&& write_outputs, Args... args) {
  return collmc::recorder::record_call<Self>(name, Library::Nccl, ncclSystemError, write_args, write_outputs, args...);
}

void no_outputs(JsonLine&, ncclResult_t) {}

// `config->blocking` when the caller passed an initialized config (1, 0), else -1 (NCCL's default: blocking).
int64_t blocking_of(const ncclConfig_t* config) {
  if (config == nullptr || config->magic != 0xcafebeef || config->blocking == NCCL_CONFIG_UNDEF_INT) return -1;
  return config->blocking;
}

// A new communicator's rank and size, asked of NCCL (not recorded); -1 when it cannot say yet.
void add_rank_and_size(JsonLine& line, ncclComm_t comm, ncclResult_t result) {
  int rank = -1, nranks = -1;
  if (comm != nullptr && result == ncclSuccess) {
    if (auto user_rank = REAL_NCCL(ncclCommUserRank); user_rank != nullptr && user_rank(comm, &rank) != ncclSuccess)
      rank = -1;
    if (auto count = REAL_NCCL(ncclCommCount); count != nullptr && count(comm, &nranks) != ncclSuccess) nranks = -1;
  }
  line.i64("rank", rank).i64("nranks", nranks);
}

// The new communicator a creating call wrote into `*out` (null when it wrote none).
auto new_comm_output(const char* key, ncclComm_t* out) {
  return [key, out](JsonLine& line, ncclResult_t) { line.ptr(key, out != nullptr ? *out : nullptr); };
}
auto child_comm_output(ncclComm_t* out) {
  return [out](JsonLine& line, ncclResult_t r) {
    ncclComm_t child = out != nullptr ? *out : nullptr;
    add_rank_and_size(line.ptr("newcomm", child), child, r);
  };
}

// A collective's arguments before its operator, root and stream.
JsonLine& collective_args(JsonLine& line, ncclComm_t comm, const void* send, const void* recv, size_t count,
                          ncclDataType_t datatype) {
  return line.ptr("comm", comm)
      .ptr("sendbuff", send)
      .ptr("recvbuff", recv)
      .u64("count", count)
      .str("dtype", dtype_name(datatype));
}

// send and recv: the one buffer under its key ("sendbuff" or "recvbuff").
void p2p_args(JsonLine& line, ncclComm_t comm, const char* key, const void* buff, size_t count, ncclDataType_t datatype,
              int peer, cudaStream_t stream) {
  line.ptr("comm", comm)
      .ptr(key, buff)
      .u64("count", count)
      .str("dtype", dtype_name(datatype))
      .i64("peer", peer)
      .ptr("stream", stream);
}

}  // namespace

#pragma GCC visibility push(default)

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  return nccl_call<&ncclGetUniqueId>(
      "ncclGetUniqueId", no_fields,
      [uniqueId](JsonLine& out, ncclResult_t r) {
        if (r == ncclSuccess && uniqueId != nullptr) out.hex("uid", unique_id_hash(*uniqueId), 16);
      },
      uniqueId);
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return nccl_call<&ncclCommInitRank>(
      recorded_name(OpKind::Init),
      [&](JsonLine& in) {
        in.hex("uid", unique_id_hash(commId), 16).i64("rank", rank).i64("nranks", nranks).i64("blocking", -1);
      },
      new_comm_output("comm", comm), comm, nranks, commId, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  return nccl_call<&ncclCommInitRankConfig>(
      "ncclCommInitRankConfig",
      [&](JsonLine& in) {
        in.hex("uid", unique_id_hash(commId), 16)
            .i64("rank", rank)
            .i64("nranks", nranks)
            .i64("blocking", blocking_of(config));
      },
      new_comm_output("comm", comm), comm, nranks, commId, rank, config);
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  // Every rank passes the same ids; the first one names the communicator.
  return nccl_call<&ncclCommInitRankScalable>(
      "ncclCommInitRankScalable",
      [&](JsonLine& in) {
        in.hex("uid", (commIds != nullptr && nId > 0) ? unique_id_hash(commIds[0]) : 0, 16)
            .i64("rank", myrank)
            .i64("nranks", nranks)
            .i64("blocking", blocking_of(config))
            .i64("n_ids", nId);
      },
      new_comm_output("comm", newcomm), newcomm, nranks, myrank, nId, commIds, config);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  return nccl_call<&ncclCommInitAll>(
      "ncclCommInitAll", [&](JsonLine& in) { in.i64("ndev", ndev); },
      [comm, ndev](JsonLine& out, ncclResult_t) { out.ptr("comm", (comm != nullptr && ndev > 0) ? comm[0] : nullptr); },
      comm, ndev, devlist);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  return nccl_call<&ncclCommSplit>(
      recorded_name(OpKind::Split),
      [&](JsonLine& in) {
        in.ptr("comm", comm).i64("color", color).i64("key", key).i64("blocking", blocking_of(config));
      },
      child_comm_output(newcomm), comm, color, key, newcomm, config);
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  return nccl_call<&ncclCommShrink>(
      recorded_name(OpKind::Shrink),
      [&](JsonLine& in) { in.ptr("comm", comm).i64("exclude_count", excludeRanksCount).i64("flags", shrinkFlags); },
      child_comm_output(newcomm), comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
}

ncclResult_t ncclCommGrow(ncclComm_t comm, int nRanks, const ncclUniqueId* uniqueId, int rank, ncclComm_t* newcomm,
                          ncclConfig_t* config) {
  return nccl_call<&ncclCommGrow>(
      recorded_name(OpKind::Grow),
      [&](JsonLine& in) {
        in.ptr("comm", comm)
            .hex("uid", uniqueId != nullptr ? unique_id_hash(*uniqueId) : 0, 16)
            .i64("rank", rank)
            .i64("nranks", nRanks);
      },
      child_comm_output(newcomm), comm, nRanks, uniqueId, rank, newcomm, config);
}

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  return nccl_call<&ncclCommRevoke>(
      recorded_name(OpKind::Revoke), [&](JsonLine& in) { in.ptr("comm", comm).i64("flags", revokeFlags); }, no_outputs,
      comm, revokeFlags);
}

// The grow id (2.29+): the parent comm in, the id's hash out (the new ranks' ncclCommGrow passes it).
ncclResult_t ncclCommGetUniqueId(ncclComm_t comm, ncclUniqueId* uniqueId) {
  return nccl_call<&ncclCommGetUniqueId>(
      recorded_name(OpKind::GrowId), [&](JsonLine& in) { in.ptr("comm", comm); },
      [uniqueId](JsonLine& out, ncclResult_t r) {
        if (r == ncclSuccess && uniqueId != nullptr) out.hex("uid", unique_id_hash(*uniqueId), 16);
      },
      comm, uniqueId);
}

// finalize, destroy, abort: the communicator is the only argument.
ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  return nccl_call<&ncclCommFinalize>(
      recorded_name(OpKind::Finalize), [&](JsonLine& in) { in.ptr("comm", comm); }, no_outputs, comm);
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return nccl_call<&ncclCommDestroy>(
      recorded_name(OpKind::Destroy), [&](JsonLine& in) { in.ptr("comm", comm); }, no_outputs, comm);
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return nccl_call<&ncclCommAbort>(
      recorded_name(OpKind::Abort), [&](JsonLine& in) { in.ptr("comm", comm); }, no_outputs, comm);
}

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  return nccl_call<&ncclCommWindowRegister>(
      recorded_name(OpKind::Register),
      [&](JsonLine& in) { in.ptr("comm", comm).ptr("buff", buff).u64("size", size).i64("flags", winFlags); },
      [win](JsonLine& out, ncclResult_t) { out.ptr("win", win != nullptr ? *win : nullptr); }, comm, buff, size, win,
      winFlags);
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  return nccl_call<&ncclCommWindowDeregister>(
      recorded_name(OpKind::Deregister), [&](JsonLine& in) { in.ptr("comm", comm).ptr("win", win); }, no_outputs, comm,
      win);
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  return nccl_call<&ncclCommRegister>(
      recorded_name(OpKind::RegisterLocal),
      [&](JsonLine& in) { in.ptr("comm", comm).ptr("buff", buff).u64("size", size); },
      [handle](JsonLine& out, ncclResult_t) { out.ptr("handle", handle != nullptr ? *handle : nullptr); }, comm, buff,
      size, handle);
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  return nccl_call<&ncclCommDeregister>(
      recorded_name(OpKind::DeregisterLocal), [&](JsonLine& in) { in.ptr("comm", comm).ptr("handle", handle); },
      no_outputs, comm, handle);
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return nccl_call<&ncclMemAlloc>(
      recorded_name(OpKind::Alloc), [&](JsonLine& in) { in.u64("size", size); },
      [ptr](JsonLine& out, ncclResult_t) { out.ptr("ptr", ptr != nullptr ? *ptr : nullptr); }, ptr, size);
}

ncclResult_t ncclMemFree(void* ptr) {
  return nccl_call<&ncclMemFree>(
      recorded_name(OpKind::Free), [&](JsonLine& in) { in.ptr("ptr", ptr); }, no_outputs, ptr);
}

// Collectives and point-to-point: the entry line carries everything, the return line the result.
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclAllReduce>(
      recorded_name(OpKind::AllReduce),
      [&](JsonLine& in) {
        collective_args(in, comm, sendbuff, recvbuff, count, datatype).str("op", op_name(op)).ptr("stream", stream);
      },
      no_outputs, sendbuff, recvbuff, count, datatype, op, comm, stream);
}

// The name a per-collective config gets in the scenario (`config=NAME`), written into `out`: `maxctasN`
// when only maxCTAs is set (the form the replay runs), else the fields set, `cfg_min2_max4_nvls1_cga2`; ""
// for no config (NULL). No allocation: the hooks run inside the user's program.
void coll_config_name(const ncclCollConfig_t* config, char (&out)[64]) {
  out[0] = '\0';
  if (config == nullptr) return;
  if (config->magic != 0xcafebeef) {
    std::snprintf(out, sizeof out, "cfg_uninitialized");
    return;
  }
  if (config->minCTAs == INT_MIN && config->nvlsCTAs == INT_MIN && config->cgaClusterSize == INT_MIN &&
      config->maxCTAs > 0) {
    std::snprintf(out, sizeof out, "maxctas%d", config->maxCTAs);
    return;
  }
  const char* const keys[] = {"min", "max", "nvls", "cga"};
  const int values[] = {config->minCTAs, config->maxCTAs, config->nvlsCTAs, config->cgaClusterSize};
  int len = std::snprintf(out, sizeof out, "cfg");
  for (int i = 0; i < 4 && len > 0 && len < static_cast<int>(sizeof out); ++i)
    if (values[i] != INT_MIN)
      len += std::snprintf(out + len, sizeof out - static_cast<size_t>(len), "_%s%s%d", keys[i],
                           values[i] < 0 ? "m" : "", values[i] < 0 ? -values[i] : values[i]);
}

ncclResult_t ncclAllReduceConfig(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                 ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream, const ncclCollConfig_t* config) {
  return nccl_call<&ncclAllReduceConfig>(
      "ncclAllReduceConfig",
      [&](JsonLine& in) {
        collective_args(in, comm, sendbuff, recvbuff, count, datatype).str("op", op_name(op)).ptr("stream", stream);
        char name[64];
        coll_config_name(config, name);
        if (name[0] != '\0') in.str("config", name);
      },
      no_outputs, sendbuff, recvbuff, count, datatype, op, comm, stream, config);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclReduce>(
      recorded_name(OpKind::Reduce),
      [&](JsonLine& in) {
        collective_args(in, comm, sendbuff, recvbuff, count, datatype)
            .str("op", op_name(op))
            .i64("root", root)
            .ptr("stream", stream);
      },
      no_outputs, sendbuff, recvbuff, count, datatype, op, root, comm, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return nccl_call<&ncclBcast>(
      "ncclBcast",
      [&](JsonLine& in) {
        collective_args(in, comm, buff, buff, count, datatype).i64("root", root).ptr("stream", stream);
      },
      no_outputs, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclBroadcast>(
      recorded_name(OpKind::Broadcast),
      [&](JsonLine& in) {
        collective_args(in, comm, sendbuff, recvbuff, count, datatype).i64("root", root).ptr("stream", stream);
      },
      no_outputs, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclReduceScatter>(
      recorded_name(OpKind::ReduceScatter),
      [&](JsonLine& in) {
        collective_args(in, comm, sendbuff, recvbuff, recvcount, datatype).str("op", op_name(op)).ptr("stream", stream);
      },
      no_outputs, sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclAllGather>(
      recorded_name(OpKind::AllGather),
      [&](JsonLine& in) { collective_args(in, comm, sendbuff, recvbuff, sendcount, datatype).ptr("stream", stream); },
      no_outputs, sendbuff, recvbuff, sendcount, datatype, comm, stream);
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream) {
  return nccl_call<&ncclAlltoAll>(
      recorded_name(OpKind::AllToAll),
      [&](JsonLine& in) { collective_args(in, comm, sendbuff, recvbuff, count, datatype).ptr("stream", stream); },
      no_outputs, sendbuff, recvbuff, count, datatype, comm, stream);
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclGather>(
      "ncclGather",
      [&](JsonLine& in) {
        collective_args(in, comm, sendbuff, recvbuff, count, datatype).i64("root", root).ptr("stream", stream);
      },
      no_outputs, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclScatter>(
      "ncclScatter",
      [&](JsonLine& in) {
        collective_args(in, comm, sendbuff, recvbuff, count, datatype).i64("root", root).ptr("stream", stream);
      },
      no_outputs, sendbuff, recvbuff, count, datatype, root, comm, stream);
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return nccl_call<&ncclSend>(
      recorded_name(OpKind::Send),
      [&](JsonLine& in) { p2p_args(in, comm, "sendbuff", sendbuff, count, datatype, peer, stream); }, no_outputs,
      sendbuff, count, datatype, peer, comm, stream);
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream) {
  return nccl_call<&ncclRecv>(
      recorded_name(OpKind::Recv),
      [&](JsonLine& in) { p2p_args(in, comm, "recvbuff", recvbuff, count, datatype, peer, stream); }, no_outputs,
      recvbuff, count, datatype, peer, comm, stream);
}

// One-sided operations on registered windows (NCCL 2.29+).
ncclResult_t ncclPutSignal(const void* localbuff, size_t count, ncclDataType_t datatype, int peer, ncclWindow_t peerWin,
                           size_t peerWinOffset, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm,
                           cudaStream_t stream) {
  return nccl_call<&ncclPutSignal>(
      "ncclPutSignal",
      [&](JsonLine& in) {
        in.ptr("comm", comm)
            .ptr("sendbuff", localbuff)
            .u64("count", count)
            .str("dtype", dtype_name(datatype))
            .i64("peer", peer)
            .ptr("win", peerWin)
            .u64("offset", peerWinOffset)
            .i64("signal", sigIdx)
            .i64("ctx", ctx)
            .ptr("stream", stream);
      },
      no_outputs, localbuff, count, datatype, peer, peerWin, peerWinOffset, sigIdx, ctx, flags, comm, stream);
}

ncclResult_t ncclSignal(int peer, int sigIdx, int ctx, unsigned int flags, ncclComm_t comm, cudaStream_t stream) {
  return nccl_call<&ncclSignal>(
      "ncclSignal",
      [&](JsonLine& in) {
        in.ptr("comm", comm).i64("peer", peer).i64("signal", sigIdx).i64("ctx", ctx).ptr("stream", stream);
      },
      no_outputs, peer, sigIdx, ctx, flags, comm, stream);
}

ncclResult_t ncclWaitSignal(int nDesc, ncclWaitSignalDesc_t* signalDescs, ncclComm_t comm, cudaStream_t stream) {
  // One descriptor (the usual case) is written in full; more are counted.
  return nccl_call<&ncclWaitSignal>(
      "ncclWaitSignal",
      [&](JsonLine& in) {
        in.ptr("comm", comm).i64("n_desc", nDesc);
        if (nDesc >= 1 && signalDescs != nullptr)
          in.i64("peer", signalDescs[0].peer).i64("signal", signalDescs[0].sigIdx).i64("ops", signalDescs[0].opCnt);
        in.ptr("stream", stream);
      },
      no_outputs, nDesc, signalDescs, comm, stream);
}

ncclResult_t ncclGroupStart() { return nccl_call<&ncclGroupStart>("ncclGroupStart", no_fields, no_outputs); }

ncclResult_t ncclGroupEnd() { return nccl_call<&ncclGroupEnd>("ncclGroupEnd", no_fields, no_outputs); }

#pragma GCC visibility pop
