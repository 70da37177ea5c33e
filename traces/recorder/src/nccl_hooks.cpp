// The NCCL 2.28 API as the recorder sees it: each interposer writes an entry line with the arguments,
// calls the real function, and writes a return line with the result code and the outputs.
// Signatures come from nccl.h; nothing here links NCCL.
#include <nccl.h>

#include <climits>

#include "call_record.h"
#include "nccl_names.h"
#include "real_symbols.h"

using collmc::recorder::CallRecord;
using collmc::recorder::dtype_name;
using collmc::recorder::JsonLine;
using collmc::recorder::Library;
using collmc::recorder::op_name;
using collmc::recorder::report_missing;
using collmc::recorder::unique_id_hash;

const char* const collmc::recorder::kTraceFormat = "collmc-recorder";

#define REAL_NCCL(fn) COLLMC_REAL(fn, Library::Nccl)

namespace {

ncclResult_t missing(const char* name) {
  report_missing(name);
  return ncclSystemError;
}

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

}  // namespace

#pragma GCC visibility push(default)

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  auto real = REAL_NCCL(ncclGetUniqueId);
  if (real == nullptr) return missing("ncclGetUniqueId");
  CallRecord rec("ncclGetUniqueId");
  if (!rec.active()) return real(uniqueId);
  rec.entered();
  ncclResult_t r = real(uniqueId);
  JsonLine& out = rec.result(r);
  if (r == ncclSuccess && uniqueId != nullptr) out.hex("uid", unique_id_hash(*uniqueId), 16);
  rec.returned();
  return r;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  auto real = REAL_NCCL(ncclCommInitRank);
  if (real == nullptr) return missing("ncclCommInitRank");
  CallRecord rec("ncclCommInitRank");
  if (!rec.active()) return real(comm, nranks, commId, rank);
  rec.args().hex("uid", unique_id_hash(commId), 16).i64("rank", rank).i64("nranks", nranks).i64("blocking", -1);
  rec.entered();
  ncclResult_t r = real(comm, nranks, commId, rank);
  rec.result(r).ptr("comm", comm != nullptr ? *comm : nullptr);
  rec.returned();
  return r;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank, ncclConfig_t* config) {
  auto real = REAL_NCCL(ncclCommInitRankConfig);
  if (real == nullptr) return missing("ncclCommInitRankConfig");
  CallRecord rec("ncclCommInitRankConfig");
  if (!rec.active()) return real(comm, nranks, commId, rank, config);
  rec.args()
      .hex("uid", unique_id_hash(commId), 16)
      .i64("rank", rank)
      .i64("nranks", nranks)
      .i64("blocking", blocking_of(config));
  rec.entered();
  ncclResult_t r = real(comm, nranks, commId, rank, config);
  rec.result(r).ptr("comm", comm != nullptr ? *comm : nullptr);
  rec.returned();
  return r;
}

ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId, ncclUniqueId* commIds,
                                      ncclConfig_t* config) {
  auto real = REAL_NCCL(ncclCommInitRankScalable);
  if (real == nullptr) return missing("ncclCommInitRankScalable");
  CallRecord rec("ncclCommInitRankScalable");
  if (!rec.active()) return real(newcomm, nranks, myrank, nId, commIds, config);
  // Every rank passes the same ids; the first one names the communicator.
  rec.args()
      .hex("uid", (commIds != nullptr && nId > 0) ? unique_id_hash(commIds[0]) : 0, 16)
      .i64("rank", myrank)
      .i64("nranks", nranks)
      .i64("blocking", blocking_of(config))
      .i64("n_ids", nId);
  rec.entered();
  ncclResult_t r = real(newcomm, nranks, myrank, nId, commIds, config);
  rec.result(r).ptr("comm", newcomm != nullptr ? *newcomm : nullptr);
  rec.returned();
  return r;
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  auto real = REAL_NCCL(ncclCommInitAll);
  if (real == nullptr) return missing("ncclCommInitAll");
  CallRecord rec("ncclCommInitAll");
  if (!rec.active()) return real(comm, ndev, devlist);
  rec.args().i64("ndev", ndev);
  rec.entered();
  ncclResult_t r = real(comm, ndev, devlist);
  rec.result(r).ptr("comm", (comm != nullptr && ndev > 0) ? comm[0] : nullptr);
  rec.returned();
  return r;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm, ncclConfig_t* config) {
  auto real = REAL_NCCL(ncclCommSplit);
  if (real == nullptr) return missing("ncclCommSplit");
  CallRecord rec("ncclCommSplit");
  if (!rec.active()) return real(comm, color, key, newcomm, config);
  rec.args().ptr("comm", comm).i64("color", color).i64("key", key).i64("blocking", blocking_of(config));
  rec.entered();
  ncclResult_t r = real(comm, color, key, newcomm, config);
  ncclComm_t child = newcomm != nullptr ? *newcomm : nullptr;
  JsonLine& out = rec.result(r).ptr("newcomm", child);
  add_rank_and_size(out, child, r);
  rec.returned();
  return r;
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount, ncclComm_t* newcomm,
                            ncclConfig_t* config, int shrinkFlags) {
  auto real = REAL_NCCL(ncclCommShrink);
  if (real == nullptr) return missing("ncclCommShrink");
  CallRecord rec("ncclCommShrink");
  if (!rec.active()) return real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  rec.args().ptr("comm", comm).i64("exclude_count", excludeRanksCount).i64("flags", shrinkFlags);
  rec.entered();
  ncclResult_t r = real(comm, excludeRanksList, excludeRanksCount, newcomm, config, shrinkFlags);
  ncclComm_t child = newcomm != nullptr ? *newcomm : nullptr;
  JsonLine& out = rec.result(r).ptr("newcomm", child);
  add_rank_and_size(out, child, r);
  rec.returned();
  return r;
}

// finalize, destroy, abort: the communicator is the only argument.
#define COMM_ONLY_HOOK(fn)                    \
  ncclResult_t fn(ncclComm_t comm) {          \
    auto real = REAL_NCCL(fn);                \
    if (real == nullptr) return missing(#fn); \
    CallRecord rec(#fn);                      \
    if (!rec.active()) return real(comm);     \
    rec.args().ptr("comm", comm);             \
    rec.entered();                            \
    ncclResult_t r = real(comm);              \
    rec.result(r);                            \
    rec.returned();                           \
    return r;                                 \
  }
COMM_ONLY_HOOK(ncclCommFinalize)
COMM_ONLY_HOOK(ncclCommDestroy)
COMM_ONLY_HOOK(ncclCommAbort)
#undef COMM_ONLY_HOOK

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win, int winFlags) {
  auto real = REAL_NCCL(ncclCommWindowRegister);
  if (real == nullptr) return missing("ncclCommWindowRegister");
  CallRecord rec("ncclCommWindowRegister");
  if (!rec.active()) return real(comm, buff, size, win, winFlags);
  rec.args().ptr("comm", comm).ptr("buff", buff).u64("size", size).i64("flags", winFlags);
  rec.entered();
  ncclResult_t r = real(comm, buff, size, win, winFlags);
  rec.result(r).ptr("win", win != nullptr ? *win : nullptr);
  rec.returned();
  return r;
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  auto real = REAL_NCCL(ncclCommWindowDeregister);
  if (real == nullptr) return missing("ncclCommWindowDeregister");
  CallRecord rec("ncclCommWindowDeregister");
  if (!rec.active()) return real(comm, win);
  rec.args().ptr("comm", comm).ptr("win", win);
  rec.entered();
  ncclResult_t r = real(comm, win);
  rec.result(r);
  rec.returned();
  return r;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  auto real = REAL_NCCL(ncclCommRegister);
  if (real == nullptr) return missing("ncclCommRegister");
  CallRecord rec("ncclCommRegister");
  if (!rec.active()) return real(comm, buff, size, handle);
  rec.args().ptr("comm", comm).ptr("buff", buff).u64("size", size);
  rec.entered();
  ncclResult_t r = real(comm, buff, size, handle);
  rec.result(r).ptr("handle", handle != nullptr ? *handle : nullptr);
  rec.returned();
  return r;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  auto real = REAL_NCCL(ncclCommDeregister);
  if (real == nullptr) return missing("ncclCommDeregister");
  CallRecord rec("ncclCommDeregister");
  if (!rec.active()) return real(comm, handle);
  rec.args().ptr("comm", comm).ptr("handle", handle);
  rec.entered();
  ncclResult_t r = real(comm, handle);
  rec.result(r);
  rec.returned();
  return r;
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  auto real = REAL_NCCL(ncclMemAlloc);
  if (real == nullptr) return missing("ncclMemAlloc");
  CallRecord rec("ncclMemAlloc");
  if (!rec.active()) return real(ptr, size);
  rec.args().u64("size", size);
  rec.entered();
  ncclResult_t r = real(ptr, size);
  rec.result(r).ptr("ptr", ptr != nullptr ? *ptr : nullptr);
  rec.returned();
  return r;
}

ncclResult_t ncclMemFree(void* ptr) {
  auto real = REAL_NCCL(ncclMemFree);
  if (real == nullptr) return missing("ncclMemFree");
  CallRecord rec("ncclMemFree");
  if (!rec.active()) return real(ptr);
  rec.args().ptr("ptr", ptr);
  rec.entered();
  ncclResult_t r = real(ptr);
  rec.result(r);
  rec.returned();
  return r;
}

// Collectives and point-to-point: the entry line carries everything, the return line the result.
#define RECORD_STREAM_OP(fn, call_args, ...) \
  auto real = REAL_NCCL(fn);                 \
  if (real == nullptr) return missing(#fn);  \
  CallRecord rec(#fn);                       \
  if (!rec.active()) return real call_args;  \
  rec.args() __VA_ARGS__;                    \
  rec.entered();                             \
  ncclResult_t r = real call_args;           \
  rec.result(r);                             \
  rec.returned();                            \
  return r;

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                           ncclComm_t comm, cudaStream_t stream){
    RECORD_STREAM_OP(ncclAllReduce, (sendbuff, recvbuff, count, datatype, op, comm, stream),
                     .ptr("comm", comm)
                         .ptr("sendbuff", sendbuff)
                         .ptr("recvbuff", recvbuff)
                         .u64("count", count)
                         .str("dtype", dtype_name(datatype))
                         .str("op", op_name(op))
                         .ptr("stream", stream))}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op,
                        int root, ncclComm_t comm, cudaStream_t stream){
    RECORD_STREAM_OP(ncclReduce, (sendbuff, recvbuff, count, datatype, op, root, comm, stream),
                     .ptr("comm", comm)
                         .ptr("sendbuff", sendbuff)
                         .ptr("recvbuff", recvbuff)
                         .u64("count", count)
                         .str("dtype", dtype_name(datatype))
                         .str("op", op_name(op))
                         .i64("root", root)
                         .ptr("stream", stream))}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream){RECORD_STREAM_OP(ncclBcast, (buff, count, datatype, root, comm, stream),
                                                             .ptr("comm", comm)
                                                                 .ptr("sendbuff", buff)
                                                                 .ptr("recvbuff", buff)
                                                                 .u64("count", count)
                                                                 .str("dtype", dtype_name(datatype))
                                                                 .i64("root", root)
                                                                 .ptr("stream", stream))}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                           ncclComm_t comm, cudaStream_t stream){
    RECORD_STREAM_OP(ncclBroadcast, (sendbuff, recvbuff, count, datatype, root, comm, stream),
                     .ptr("comm", comm)
                         .ptr("sendbuff", sendbuff)
                         .ptr("recvbuff", recvbuff)
                         .u64("count", count)
                         .str("dtype", dtype_name(datatype))
                         .i64("root", root)
                         .ptr("stream", stream))}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount, ncclDataType_t datatype,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream){
    RECORD_STREAM_OP(ncclReduceScatter, (sendbuff, recvbuff, recvcount, datatype, op, comm, stream),
                     .ptr("comm", comm)
                         .ptr("sendbuff", sendbuff)
                         .ptr("recvbuff", recvbuff)
                         .u64("count", recvcount)
                         .str("dtype", dtype_name(datatype))
                         .str("op", op_name(op))
                         .ptr("stream", stream))}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                           ncclComm_t comm, cudaStream_t stream){
    RECORD_STREAM_OP(ncclAllGather, (sendbuff, recvbuff, sendcount, datatype, comm, stream),
                     .ptr("comm", comm)
                         .ptr("sendbuff", sendbuff)
                         .ptr("recvbuff", recvbuff)
                         .u64("count", sendcount)
                         .str("dtype", dtype_name(datatype))
                         .ptr("stream", stream))}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm,
                          cudaStream_t stream){RECORD_STREAM_OP(ncclAlltoAll,
                                                                (sendbuff, recvbuff, count, datatype, comm, stream),
                                                                .ptr("comm", comm)
                                                                    .ptr("sendbuff", sendbuff)
                                                                    .ptr("recvbuff", recvbuff)
                                                                    .u64("count", count)
                                                                    .str("dtype", dtype_name(datatype))
                                                                    .ptr("stream", stream))}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                        ncclComm_t comm, cudaStream_t stream){
    RECORD_STREAM_OP(ncclGather, (sendbuff, recvbuff, count, datatype, root, comm, stream),
                     .ptr("comm", comm)
                         .ptr("sendbuff", sendbuff)
                         .ptr("recvbuff", recvbuff)
                         .u64("count", count)
                         .str("dtype", dtype_name(datatype))
                         .i64("root", root)
                         .ptr("stream", stream))}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                         ncclComm_t comm, cudaStream_t stream){
    RECORD_STREAM_OP(ncclScatter, (sendbuff, recvbuff, count, datatype, root, comm, stream),
                     .ptr("comm", comm)
                         .ptr("sendbuff", sendbuff)
                         .ptr("recvbuff", recvbuff)
                         .u64("count", count)
                         .str("dtype", dtype_name(datatype))
                         .i64("root", root)
                         .ptr("stream", stream))}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream){RECORD_STREAM_OP(ncclSend, (sendbuff, count, datatype, peer, comm, stream),
                                                            .ptr("comm", comm)
                                                                .ptr("sendbuff", sendbuff)
                                                                .u64("count", count)
                                                                .str("dtype", dtype_name(datatype))
                                                                .i64("peer", peer)
                                                                .ptr("stream", stream))}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                      cudaStream_t stream){RECORD_STREAM_OP(ncclRecv, (recvbuff, count, datatype, peer, comm, stream),
                                                            .ptr("comm", comm)
                                                                .ptr("recvbuff", recvbuff)
                                                                .u64("count", count)
                                                                .str("dtype", dtype_name(datatype))
                                                                .i64("peer", peer)
                                                                .ptr("stream", stream))}

ncclResult_t ncclGroupStart(){RECORD_STREAM_OP(ncclGroupStart, (), )} ncclResult_t ncclGroupEnd() {
  RECORD_STREAM_OP(ncclGroupEnd, (), )
}

#undef RECORD_STREAM_OP

#pragma GCC visibility pop
