// The NCCL backend of a rank process: what each call does, as real CUDA and NCCL calls on its GPU
// (the turns, progress and threads are the shared rank runner's).
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "nccl_library.h"
#include "rank_body.h"

namespace collmc::replay {

namespace {

using model::Call;
using model::OpKind;

using Failure = RankFailure;

class NcclCalls : public RankCalls {
 public:
  NcclCalls(const ReplayPlan& plan, int rank, int gpu, SharedBlock* shared)
      : w_(*plan.world), rank_(rank), gpu_(gpu), shared_(shared) {}

  void setup() override {
    if (!lib_.error.empty()) throw Failure(lib_.error);
    cuda(cudaSetDevice(gpu_), "cudaSetDevice");
    streams_.resize(w_.streams.size());
    for (auto& s : streams_) cuda(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate");
    buffers_.assign(w_.buffers.size(), nullptr);
    sizes_.assign(w_.buffers.size(), model::kDefaultBufferSize);
    for (size_t b = 0; b < w_.buffers.size(); ++b)
      cuda(cudaMalloc(&buffers_[b], model::kDefaultBufferSize), "cudaMalloc of a plain buffer");
    cuda(cudaMalloc(&scratch_, 4096), "cudaMalloc");
    cuda(cudaMalloc(&warm_scratch_, 4096), "cudaMalloc");
    comms_.assign(w_.comms.size(), nullptr);
    // A grown comm's id is the one ncclCommGetUniqueId hands out during the run (grow_id).
    for (const auto& c : w_.comms)
      if (c.members.front() == rank_ && c.grown_from < 0) {
        ncclUniqueId id;
        nccl(lib_.ncclGetUniqueId(&id), "ncclGetUniqueId");
        std::memcpy(shared_->ids[c.id], &id, sizeof id);
        shared_->id_ready[c.id].store(1);
      }
    for (const auto& c : w_.comms)
      if (c.has_member(rank_) && c.grown_from < 0)
        while (!shared_->id_ready[c.id].load()) std::this_thread::sleep_for(std::chrono::microseconds(200));
    for (const auto& c : w_.comms)
      if (!c.uninit && c.has_member(rank_)) init_comm(c.id);
  }

  void step(const PlanStep& step) override {
    if (step.group) {
      for (int c : step.calls) before_call(w_.calls[static_cast<size_t>(c)]);
      nccl(lib_.ncclGroupStart(), "ncclGroupStart");
      for (int c : step.calls) execute(w_.calls[static_cast<size_t>(c)]);
      nccl(lib_.ncclGroupEnd(), "ncclGroupEnd");
    } else {
      const Call& c = w_.calls[static_cast<size_t>(step.calls.front())];
      before_call(c);
      execute(c);
    }
  }

  std::string finish() override {
    cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize at the end of the program");
    return split_sizes();
  }

  bool can_abort() const override { return true; }

  // The watchdog's word: abort every communicator (the runner then exits the process).
  void abort() override {
    std::vector<ncclComm_t> all;
    {
      std::lock_guard<std::mutex> lock(comm_mutex_);
      all = comms_;
    }
    for (ncclComm_t c : all)
      if (c) lib_.ncclCommAbort(c);
  }

 private:
  // ---- errors
  // The launcher refuses a scenario whose calls the loaded library lacks (missing_function_refusal):
  // reaching a null function here is a bug, reported as the rank's error rather than a crash.
  template <class Fn>
  void require(Fn fn, const char* name) {
    if (!fn) throw Failure(std::string(name) + ": not in the loaded NCCL (" + lib_.path + ")");
  }
  void cuda(cudaError_t e, const char* what) {
    if (e != cudaSuccess) throw Failure(std::string(what) + ": " + cudaGetErrorString(e));
  }
  void nccl(ncclResult_t r, const char* what, ncclComm_t comm = nullptr) {
    if (r == ncclSuccess || r == ncclInProgress) return;
    // After the watchdog's ncclCommAbort the comm is freed: no more questions to it.
    if (shared_->abort.load()) throw Failure(std::string(what) + ": aborted");
    std::string msg = std::string(what) + ": " + lib_.ncclGetErrorString(r);
    const char* last = lib_.ncclGetLastError(comm);
    if (last && *last) msg += " (" + std::string(last) + ")";
    throw Failure(msg);
  }

  ncclConfig_t config(int comm) {
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = w_.comms[static_cast<size_t>(comm)].mode == model::CommMode::Nonblocking ? 0 : 1;
    return cfg;
  }

  void init_comm(int comm) {
    const auto& c = w_.comms[static_cast<size_t>(comm)];
    ncclUniqueId id;
    std::memcpy(&id, shared_->ids[comm], sizeof id);
    ncclConfig_t cfg = config(comm);
    ncclComm_t handle = nullptr;
    nccl(lib_.ncclCommInitRankConfig(&handle, static_cast<int>(c.members.size()), id, c.member_index(rank_), &cfg),
         "ncclCommInitRankConfig");
    set_comm(comm, handle);
    wait_idle(comm);
    warm_up(comm);
  }

  // `history C connected` (LANGUAGE.md): the scenario starts C warm, as after the collectives an import left
  // out; the real comm is made so with one all-reduce right after its creation (every member creates it
  // in one collective call, so every member's warm-up is its device slot 0), then drained.
  void warm_up(int comm) {
    if (!w_.comms[static_cast<size_t>(comm)].start_connected) return;
    ncclComm_t handle = comm_of(comm);
    if (!handle) return;
    wait_idle(comm);
    // On a stream of its own: the scenario's streams may hold work that must not be waited for here.
    if (!warm_stream_) cuda(cudaStreamCreateWithFlags(&warm_stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    nccl(lib_.ncclAllReduce(warm_scratch_, warm_scratch_, 1, ncclFloat32, ncclSum, handle, warm_stream_),
         "ncclAllReduce (the warm-up of a connected history)", handle);
    wait_idle(comm);
    cuda(cudaStreamSynchronize(warm_stream_), "cudaStreamSynchronize after the warm-up");
  }

  ncclComm_t comm_of(int comm) {
    std::lock_guard<std::mutex> lock(comm_mutex_);
    return comms_[static_cast<size_t>(comm)];
  }
  void set_comm(int comm, ncclComm_t handle) {
    std::lock_guard<std::mutex> lock(comm_mutex_);
    comms_[static_cast<size_t>(comm)] = handle;
  }

  // The poll NCCL requires on a nonblocking comm before its next call.
  void wait_idle(int comm) {
    if (w_.comms[static_cast<size_t>(comm)].mode != model::CommMode::Nonblocking) return;
    ncclComm_t handle = comm_of(comm);
    if (!handle) return;
    while (true) {
      ncclResult_t state = ncclSuccess;
      nccl(lib_.ncclCommGetAsyncError(handle, &state), "ncclCommGetAsyncError", handle);
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) nccl(state, "asynchronous error", handle);
      if (shared_->abort.load()) throw Failure("aborted");
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }

  void before_call(const Call& c) {
    if (c.comm >= 0 && c.kind != OpKind::Abort && c.kind != OpKind::Init) wait_idle(c.comm);
  }

  size_t elem(int dtype) const { return w_.dtype_size(dtype); }
  size_t count_of(const Call& c) const {
    if (c.count >= 0) return static_cast<size_t>(c.count);
    if (c.buffer < 0) return 1;
    return sizes_[static_cast<size_t>(c.buffer)] / elem(c.dtype);
  }
  ncclDataType_t dtype(int d) const {
    static const std::map<std::string, ncclDataType_t> types = {
        {"float32", ncclFloat32}, {"float16", ncclFloat16}, {"bfloat16", ncclBfloat16}, {"float64", ncclFloat64},
        {"int8", ncclInt8},       {"uint8", ncclUint8},     {"int32", ncclInt32},       {"uint32", ncclUint32},
        {"int64", ncclInt64},     {"uint64", ncclUint64}};
    auto it = types.find(w_.dtypes[static_cast<size_t>(d)]);
    if (it == types.end())
      throw Failure("dtype " + w_.dtypes[static_cast<size_t>(d)] + " is not supported by the replay");
    return it->second;
  }
  ncclRedOp_t redop(int r) const {
    const std::string& n = w_.redops[static_cast<size_t>(r)];
    if (n == "prod") return ncclProd;
    if (n == "max") return ncclMax;
    if (n == "min") return ncclMin;
    if (n == "avg") return ncclAvg;
    return ncclSum;
  }
  int comm_rank(int comm, int world_rank) const { return w_.comms[static_cast<size_t>(comm)].member_index(world_rank); }
  int root_of(const Call& c) const { return c.root >= 0 ? comm_rank(c.comm, c.root) : 0; }
  char* ptr(int b) const { return static_cast<char*>(buffers_[static_cast<size_t>(b)]); }

  void execute(const Call& c) {
    ncclComm_t comm = c.comm >= 0 ? comm_of(c.comm) : nullptr;
    cudaStream_t stream = streams_[static_cast<size_t>(c.stream)];
    switch (c.kind) {
      case OpKind::Alloc: {
        void* p = nullptr;
        if (c.size > 0) nccl(lib_.ncclMemAlloc(&p, c.size), "ncclMemAlloc");
        buffers_[static_cast<size_t>(c.buffer)] = p;
        sizes_[static_cast<size_t>(c.buffer)] = c.size;
        return;
      }
      case OpKind::CudaMalloc: {
        void* p = nullptr;
        cuda(cudaMalloc(&p, c.size), "cudaMalloc");
        buffers_[static_cast<size_t>(c.buffer)] = p;
        sizes_[static_cast<size_t>(c.buffer)] = c.size;
        return;
      }
      case OpKind::Free:
        nccl(lib_.ncclMemFree(buffers_[static_cast<size_t>(c.buffer)]), "ncclMemFree");
        return;
      case OpKind::CudaFree:
        cuda(cudaFree(buffers_[static_cast<size_t>(c.buffer)]), "cudaFree");
        return;
      case OpKind::Register: {
        ncclWindow_t win = nullptr;
        nccl(lib_.ncclCommWindowRegister(
                 comm, buffers_[static_cast<size_t>(c.buffer)], sizes_[static_cast<size_t>(c.buffer)], &win,
                 c.flag == model::RegFlag::Symmetric ? NCCL_WIN_COLL_SYMMETRIC : NCCL_WIN_DEFAULT),
             "ncclCommWindowRegister", comm);
        windows_[{c.comm, c.buffer}].push_back(win);
        return;
      }
      case OpKind::Deregister: {
        auto& v = windows_[{c.comm, c.buffer}];
        if (v.empty()) throw Failure("deregister without a window");
        ncclWindow_t win = v.back();
        v.pop_back();
        nccl(lib_.ncclCommWindowDeregister(comm, win), "ncclCommWindowDeregister", comm);
        return;
      }
      case OpKind::RegisterLocal: {
        void* handle = nullptr;
        nccl(lib_.ncclCommRegister(comm, buffers_[static_cast<size_t>(c.buffer)], sizes_[static_cast<size_t>(c.buffer)],
                                   &handle),
             "ncclCommRegister", comm);
        local_[{c.comm, c.buffer}].push_back(handle);
        return;
      }
      case OpKind::DeregisterLocal: {
        auto& v = local_[{c.comm, c.buffer}];
        if (v.empty()) throw Failure("deregister_local without a registration");
        void* handle = v.back();
        v.pop_back();
        nccl(lib_.ncclCommDeregister(comm, handle), "ncclCommDeregister", comm);
        return;
      }
      case OpKind::Init:
        init_comm(c.comm);
        return;
      case OpKind::Split: {
        ncclConfig_t cfg = config(c.child >= 0 ? c.child : c.comm);
        ncclComm_t child = nullptr;
        nccl(lib_.ncclCommSplit(comm, c.child >= 0 ? c.child : NCCL_SPLIT_NOCOLOR, rank_, &child, &cfg),
             "ncclCommSplit", comm);
        if (c.child >= 0) {
          set_comm(c.child, child);
          warm_up(c.child);
        }
        return;
      }
      case OpKind::Finalize:
        nccl(lib_.ncclCommFinalize(comm), "ncclCommFinalize", comm);
        wait_idle(c.comm);
        return;
      case OpKind::Destroy:
        nccl(lib_.ncclCommDestroy(comm), "ncclCommDestroy");
        set_comm(c.comm, nullptr);
        return;
      case OpKind::Abort:
        nccl(lib_.ncclCommAbort(comm), "ncclCommAbort");
        set_comm(c.comm, nullptr);
        return;
      case OpKind::Shrink: {
        // The ranks of the parent that the child leaves out, as the parent numbers them.
        const auto& parent = w_.comms[static_cast<size_t>(c.comm)];
        const auto& child = w_.comms[static_cast<size_t>(c.child)];
        std::vector<int> excluded;
        for (int member : parent.members)
          if (!child.has_member(member)) excluded.push_back(parent.member_index(member));
        ncclConfig_t cfg = config(c.child);
        ncclComm_t handle = nullptr;
        require(lib_.ncclCommShrink, "ncclCommShrink");
        nccl(lib_.ncclCommShrink(comm, excluded.data(), static_cast<int>(excluded.size()), &handle, &cfg,
                                 NCCL_SHRINK_DEFAULT),
             "ncclCommShrink", comm);
        set_comm(c.child, handle);
        warm_up(c.child);
        return;
      }
      case OpKind::Revoke:
        require(lib_.ncclCommRevoke, "ncclCommRevoke");
        nccl(lib_.ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT), "ncclCommRevoke", comm);
        return;
      case OpKind::GrowId: {
        // ncclCommGetUniqueId also sends the id to the parent's first and last rank (NCCL's own
        // hand-off); the new ranks get it from the block, as a program passes it out of band.
        require(lib_.ncclCommGetUniqueId, "ncclCommGetUniqueId");
        ncclUniqueId id;
        nccl(lib_.ncclCommGetUniqueId(comm, &id), "ncclCommGetUniqueId", comm);
        const int k = shared_->grow_ids_handed[c.comm].fetch_add(1);
        for (const auto& child : w_.comms)
          if (child.grown_from == c.comm && child.grow_index == k) {
            std::memcpy(shared_->ids[child.id], &id, sizeof id);
            shared_->id_ready[child.id].store(1);
          }
        return;
      }
      case OpKind::Grow: {
        require(lib_.ncclCommGrow, "ncclCommGrow");
        const auto& child = w_.comms[static_cast<size_t>(c.child)];
        ncclConfig_t cfg = config(c.child);
        ncclComm_t handle = nullptr;
        if (c.comm >= 0) {
          // A member of the parent keeps its rank (rank -1); the first and last get the id from
          // ncclCommGetUniqueId's sender inside NCCL.
          nccl(lib_.ncclCommGrow(comm, static_cast<int>(child.members.size()), nullptr, -1, &handle, &cfg),
               "ncclCommGrow", comm);
        } else {
          // A new rank passes the id it was handed: it waits here, in its grow, until grow_id made it.
          while (!shared_->id_ready[c.child].load()) {
            if (shared_->abort.load()) throw Failure("ncclCommGrow: aborted while waiting for the grow id");
            std::this_thread::sleep_for(std::chrono::microseconds(200));
          }
          ncclUniqueId id;
          std::memcpy(&id, shared_->ids[c.child], sizeof id);
          nccl(lib_.ncclCommGrow(nullptr, static_cast<int>(child.members.size()), &id, child.member_index(rank_),
                                 &handle, &cfg),
               "ncclCommGrow");
        }
        set_comm(c.child, handle);
        wait_idle(c.child);
        warm_up(c.child);
        return;
      }
      case OpKind::AllReduce: {
        char* in = ptr(c.buffer);
        char* out = c.buffer2 >= 0 ? ptr(c.buffer2) : in;
        if (!c.coll_config.empty()) {
          // config=maxctasN (nccl_support.h: the one form the replay runs): ncclCollConfig_t's maxCTAs.
          require(lib_.ncclAllReduceConfig, "ncclAllReduceConfig");
          NcclCollConfig config{sizeof(NcclCollConfig),
                                kNcclApiMagic,
                                static_cast<unsigned int>(lib_.version),
                                nullptr,
                                INT_MIN,
                                config_max_ctas(c.coll_config),
                                INT_MIN,
                                INT_MIN};
          nccl(lib_.ncclAllReduceConfig(in, out, count_of(c), dtype(c.dtype), redop(c.redop), comm, stream, &config),
               "ncclAllReduceConfig", comm);
          return;
        }
        nccl(lib_.ncclAllReduce(in, out, count_of(c), dtype(c.dtype), redop(c.redop), comm, stream), "ncclAllReduce",
             comm);
        return;
      }
      case OpKind::AllGather: {
        size_t n = w_.comms[static_cast<size_t>(c.comm)].members.size();
        size_t send = count_of(c) / n;
        char* out = c.buffer2 >= 0 ? ptr(c.buffer2) : ptr(c.buffer);
        char* in =
            c.buffer2 >= 0 ? ptr(c.buffer) : out + static_cast<size_t>(comm_rank(c.comm, rank_)) * send * elem(c.dtype);
        nccl(lib_.ncclAllGather(in, out, send, dtype(c.dtype), comm, stream), "ncclAllGather", comm);
        return;
      }
      case OpKind::ReduceScatter: {
        size_t n = w_.comms[static_cast<size_t>(c.comm)].members.size();
        size_t recv = count_of(c) / n;
        char* in = ptr(c.buffer);
        char* out =
            c.buffer2 >= 0 ? ptr(c.buffer2) : in + static_cast<size_t>(comm_rank(c.comm, rank_)) * recv * elem(c.dtype);
        nccl(lib_.ncclReduceScatter(in, out, recv, dtype(c.dtype), redop(c.redop), comm, stream), "ncclReduceScatter",
             comm);
        return;
      }
      case OpKind::Broadcast: {
        char* in = ptr(c.buffer);
        char* out = c.buffer2 >= 0 ? ptr(c.buffer2) : in;
        nccl(lib_.ncclBroadcast(in, out, count_of(c), dtype(c.dtype), root_of(c), comm, stream), "ncclBroadcast", comm);
        return;
      }
      case OpKind::Reduce: {
        char* in = ptr(c.buffer);
        char* out = c.buffer2 >= 0 ? ptr(c.buffer2) : in;
        nccl(lib_.ncclReduce(in, out, count_of(c), dtype(c.dtype), redop(c.redop), root_of(c), comm, stream),
             "ncclReduce", comm);
        return;
      }
      case OpKind::AllToAll: {
        const auto& members = w_.comms[static_cast<size_t>(c.comm)].members;
        size_t chunk = count_of(c) / members.size() * elem(c.dtype);
        char* in = ptr(c.buffer);
        char* out = c.buffer2 >= 0 ? ptr(c.buffer2) : in;
        nccl(lib_.ncclGroupStart(), "ncclGroupStart");
        for (size_t p = 0; p < members.size(); ++p) {
          nccl(lib_.ncclSend(in + p * chunk, chunk / elem(c.dtype), dtype(c.dtype), static_cast<int>(p), comm, stream),
               "ncclSend", comm);
          nccl(lib_.ncclRecv(out + p * chunk, chunk / elem(c.dtype), dtype(c.dtype), static_cast<int>(p), comm, stream),
               "ncclRecv", comm);
        }
        nccl(lib_.ncclGroupEnd(), "ncclGroupEnd");
        return;
      }
      case OpKind::Send:
        nccl(lib_.ncclSend(ptr(c.buffer), count_of(c), dtype(c.dtype), comm_rank(c.comm, c.peer), comm, stream),
             "ncclSend", comm);
        return;
      case OpKind::Recv:
        nccl(lib_.ncclRecv(ptr(c.buffer), count_of(c), dtype(c.dtype), comm_rank(c.comm, c.peer), comm, stream),
             "ncclRecv", comm);
        return;
      case OpKind::Barrier:
        nccl(lib_.ncclAllReduce(scratch_, scratch_, 1, ncclFloat32, ncclSum, comm, stream), "ncclAllReduce (barrier)",
             comm);
        cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (barrier)");
        return;
      case OpKind::SyncStream:
        cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
        return;
      case OpKind::SyncDevice:
        cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        return;
      case OpKind::PutSignal: {
        require(lib_.ncclPutSignal, "ncclPutSignal");
        auto& v = windows_[{c.comm, c.buffer2}];
        if (v.empty()) throw Failure("put_signal to a window this rank never registered");
        nccl(lib_.ncclPutSignal(ptr(c.buffer), count_of(c), dtype(c.dtype), comm_rank(c.comm, c.peer), v.back(), 0, 0,
                                0, 0, comm, stream),
             "ncclPutSignal", comm);
        return;
      }
      case OpKind::Signal:
        require(lib_.ncclSignal, "ncclSignal");
        nccl(lib_.ncclSignal(comm_rank(c.comm, c.peer), 0, 0, 0, comm, stream), "ncclSignal", comm);
        return;
      case OpKind::WaitSignal: {
        require(lib_.ncclWaitSignal, "ncclWaitSignal");
        NcclWaitSignalDesc desc{c.count > 0 ? static_cast<int>(c.count) : 1, comm_rank(c.comm, c.peer), 0, 0};
        nccl(lib_.ncclWaitSignal(1, &desc, comm, stream), "ncclWaitSignal", comm);
        return;
      }
      case OpKind::StoreSet:
      case OpKind::StoreWait:
      case OpKind::HostBarrier:
        return;  // the host store: the rank runner does it (rank_runner.cpp)
      case OpKind::MpiError:
        throw Failure("the scenario records an erroneous MPI call (usage_error); nothing to replay");
      case OpKind::Probe:
        throw Failure("MPI_Probe has no NCCL form (the model refuses it on an nccl communicator)");
      case OpKind::RmaPut:
      case OpKind::RmaGet:
      case OpKind::RmaAccumulate:
      case OpKind::WinLock:
      case OpKind::WinUnlock:
      case OpKind::WinFlush:
      case OpKind::WinLockAll:
      case OpKind::WinUnlockAll:
      case OpKind::WinFlushAll:
      case OpKind::WinStart:
      case OpKind::WinComplete:
      case OpKind::WinPost:
      case OpKind::WinWait:
      case OpKind::WinFence:
      case OpKind::MpiFinalize:
        throw Failure("an MPI one-sided call has no NCCL form (the model refuses it on an nccl communicator)");
    }
  }

  // A split that paired the wrong calls builds communicators of the wrong size (observed).
  std::string split_sizes() {
    std::string note;
    for (const auto& c : w_.comms) {
      ncclComm_t handle = comm_of(c.id);
      if (!handle || !c.uninit) continue;
      int count = 0;
      if (lib_.ncclCommCount(handle, &count) != ncclSuccess) continue;
      if (count != static_cast<int>(c.members.size()))
        note +=
            c.name + " has " + std::to_string(count) + " rank(s), expected " + std::to_string(c.members.size()) + "; ";
    }
    return note;
  }

  const NcclLibrary& lib_ = nccl_library();
  const model::World& w_;
  int rank_;
  int gpu_;
  SharedBlock* shared_;
  std::vector<cudaStream_t> streams_;
  std::vector<void*> buffers_;
  std::vector<size_t> sizes_;
  void* scratch_ = nullptr;
  void* warm_scratch_ = nullptr;  // the warm-ups' buffer (`history ... connected`)
  cudaStream_t warm_stream_ = nullptr;
  std::mutex comm_mutex_;
  std::vector<ncclComm_t> comms_;
  std::map<std::pair<int, int>, std::vector<ncclWindow_t>> windows_;
  std::map<std::pair<int, int>, std::vector<void*>> local_;
};

}  // namespace

int run_nccl_rank(const ReplayPlan& plan, int rank, int gpu, SharedBlock* shared, bool free_running) {
  NcclCalls calls(plan, rank, gpu, shared);
  return run_rank(plan, rank, shared, free_running, calls);
}

// Why there is no GPU, in words a user acts on: with no NVIDIA driver at all CUDA answers
// "CUDA driver version is insufficient", which reads as "upgrade the driver".
static std::string no_gpu_reason(cudaError_t e) {
  const std::string name = cudaGetErrorName(e);
  if (e == cudaErrorInsufficientDriver && access("/proc/driver/nvidia/version", F_OK) != 0)
    return "no NVIDIA driver or GPU found (" + name + ")";
  if (e == cudaErrorNoDevice) return "no NVIDIA GPU found (" + name + ")";
  return std::string("no usable GPU (") + cudaGetErrorString(e) + ", " + name + ")";
}

int gpu_for_local_rank(int local_rank, std::string& why) {
  int gpus = 0;
  if (cudaError_t e = cudaGetDeviceCount(&gpus); e != cudaSuccess) {
    why = no_gpu_reason(e);
    return -1;
  }
  if (gpus == 1) return 0;  // the launcher gave this rank its own GPU (CUDA_VISIBLE_DEVICES), or all share it
  if (local_rank < gpus) return local_rank;
  // NCCL 2.30+ with NCCL_MULTI_RANK_GPU_ENABLE=1: ranks of one node share its GPUs round robin.
  if (const char* shared = std::getenv("NCCL_MULTI_RANK_GPU_ENABLE"); shared && std::string(shared) == "1")
    return local_rank % gpus;
  why = "local rank " + std::to_string(local_rank) + " of its node, which has " + std::to_string(gpus) +
        " GPU(s): start at most one rank per GPU on each node";
  return -1;
}

}  // namespace collmc::replay
