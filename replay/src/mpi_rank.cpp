// Each scenario call as MPI does it: declared communicators by MPI_Comm_split of MPI_COMM_WORLD,
// `split` as MPI_Comm_split, `init` as MPI_Comm_create_group (collective over the comm's members
// only), `register`/`deregister` as MPI_Win_create/MPI_Win_free, the blocking collectives,
// `send`/`recv` as MPI_Ssend/MPI_Recv, buffers in host memory. A `group` starts its collectives and
// sends/receives as nonblocking MPI calls and waits for them together; `sync`, `finalize`,
// `register_local` and `deregister_local` have no MPI counterpart (LOCAL in the mpi profile).
#include "mpi_rank.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace collmc::replay {

namespace {

using model::Call;
using model::OpKind;

class MpiCalls : public RankCalls {
 public:
  MpiCalls(const ReplayPlan& plan, int rank) : w_(*plan.world), rank_(rank) {}

  ~MpiCalls() override {
    for (void* p : buffers_) std::free(p);
  }

  void setup() override {
    buffers_.assign(w_.buffers.size(), nullptr);
    sizes_.assign(w_.buffers.size(), model::kDefaultBufferSize);
    for (auto& b : buffers_) b = std::calloc(model::kDefaultBufferSize, 1);
    comms_.assign(w_.comms.size(), MPI_COMM_NULL);
    const bool one_sided = std::any_of(w_.calls.begin(), w_.calls.end(), [](const Call& c) {
      return model::op_form(c.kind) == model::OpForm::WindowTarget ||
             model::op_form(c.kind) == model::OpForm::WindowSync;
    });
    if (one_sided) mpi(MPI_Comm_dup(MPI_COMM_WORLD, &progress_comm_), "MPI_Comm_dup (progress while waiting)");
    // Every rank takes part in every split of MPI_COMM_WORLD, in declaration order: no hang here.
    for (const auto& c : w_.comms) {
      if (c.uninit) continue;
      MPI_Comm comm = MPI_COMM_NULL;
      mpi(MPI_Comm_split(MPI_COMM_WORLD, c.has_member(rank_) ? 0 : MPI_UNDEFINED, rank_, &comm),
          "MPI_Comm_split of MPI_COMM_WORLD");
      set_comm(c.id, comm);
    }
  }

  // Open MPI completes a passive-target call (MPI_Win_lock, MPI_Accumulate, MPI_Win_flush, ...) only once its
  // target enters MPI (no asynchronous progress; measured: a lock_all, accumulate and flush to rank 1 hung while
  // the replay held rank 1 out of MPI until its turn, and completed as a plain program). A rank held back by
  // the replay's order would in the program be on its way to its next call, where MPI moves: so it lets MPI
  // move while it waits (MPI_Iprobe on a communicator of its own), where the scenario has one-sided calls.
  void waiting() override {
    if (progress_comm_ == MPI_COMM_NULL) return;
    int flag = 0;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, progress_comm_, &flag, MPI_STATUS_IGNORE);
  }

  void step(const PlanStep& step) override {
    if (!step.group) {
      execute(w_.calls[static_cast<size_t>(step.calls.front())], nullptr);
      return;
    }
    std::vector<MPI_Request> requests;
    for (int c : step.calls) execute(w_.calls[static_cast<size_t>(c)], &requests);
    mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall (group)");
  }

  // A split that paired the wrong calls builds communicators of the wrong size.
  std::string finish() override {
    std::string note;
    for (const auto& c : w_.comms) {
      MPI_Comm comm = comm_of(c.id);
      if (comm == MPI_COMM_NULL || !c.uninit) continue;
      int size = 0;
      if (MPI_Comm_size(comm, &size) != MPI_SUCCESS) continue;
      if (size != static_cast<int>(c.members.size()))
        note +=
            c.name + " has " + std::to_string(size) + " rank(s), expected " + std::to_string(c.members.size()) + "; ";
    }
    return note;
  }

 private:
  static void mpi(int code, const std::string& what) {
    if (code == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    throw RankFailure(what + ": " + std::string(text, static_cast<size_t>(len)));
  }

  MPI_Comm comm_of(int comm) {
    std::lock_guard<std::mutex> lock(mutex_);
    return comms_[static_cast<size_t>(comm)];
  }
  void set_comm(int comm, MPI_Comm handle) {
    if (handle != MPI_COMM_NULL) MPI_Comm_set_errhandler(handle, MPI_ERRORS_RETURN);
    std::lock_guard<std::mutex> lock(mutex_);
    comms_[static_cast<size_t>(comm)] = handle;
  }
  MPI_Comm member_comm(const Call& c) {
    MPI_Comm comm = comm_of(c.comm);
    if (comm == MPI_COMM_NULL)
      throw RankFailure("`" + c.text + "`: rank " + std::to_string(rank_) + " has no communicator " +
                        w_.comm_name(c.comm));
    return comm;
  }

  int comm_rank(const Call& c, int world_rank) const {
    const int r = w_.comms[static_cast<size_t>(c.comm)].member_index(world_rank);
    if (r < 0)
      throw RankFailure("`" + c.text + "`: rank " + std::to_string(world_rank) + " is not in the communicator");
    return r;
  }
  int root_of(const Call& c) const { return c.root >= 0 ? comm_rank(c, c.root) : 0; }
  // A receive's or probe's source and a message's tag as MPI takes them (`recv COMM any`, `tag=any`).
  // The window `register COMM BUF` made last (a second register of one buffer is another window).
  MPI_Win window(const Call& c) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = windows_.find({c.comm, c.buffer});
    if (it == windows_.end() || it->second.empty()) throw RankFailure("`" + c.text + "`: no window on the buffer");
    return it->second.back();
  }
  int source_of(const Call& c) const { return c.any_source ? MPI_ANY_SOURCE : comm_rank(c, c.peer); }
  static int tag_of(const Call& c) { return c.tag == model::kAnyTag ? MPI_ANY_TAG : static_cast<int>(c.tag); }
  int members(const Call& c) const { return static_cast<int>(w_.comms[static_cast<size_t>(c.comm)].members.size()); }

  void attach_send_buffer() {
    if (!bsend_buffer_.empty()) return;
    bsend_buffer_.resize(size_t{64} << 20);
    mpi(MPI_Buffer_attach(bsend_buffer_.data(), static_cast<int>(bsend_buffer_.size())), "MPI_Buffer_attach");
  }
  MPI_Datatype dtype(int d) const {
    static const std::map<std::string, MPI_Datatype> types = {
        {"float32", MPI_FLOAT}, {"float64", MPI_DOUBLE}, {"float16", MPI_UINT16_T}, {"bfloat16", MPI_UINT16_T},
        {"int8", MPI_INT8_T},   {"uint8", MPI_UINT8_T},  {"int32", MPI_INT32_T},    {"uint32", MPI_UINT32_T},
        {"int64", MPI_INT64_T}, {"uint64", MPI_UINT64_T}};
    auto it = types.find(w_.dtypes[static_cast<size_t>(d)]);
    if (it == types.end()) throw RankFailure("dtype " + w_.dtypes[static_cast<size_t>(d)] + " is not supported");
    return it->second;  // half floats travel as 16-bit integers: the replay moves bytes, values do not matter
  }
  MPI_Op redop(int r) const {
    const std::string& n = w_.redops[static_cast<size_t>(r)];
    if (n == "prod") return MPI_PROD;
    if (n == "max") return MPI_MAX;
    if (n == "min") return MPI_MIN;
    return MPI_SUM;  // sum, avg
  }

  // The call's element count (all of the buffer when no count is given), checked against the buffer.
  int count_of(const Call& c) const {
    if (!buffers_[static_cast<size_t>(c.buffer)]) throw RankFailure("`" + c.text + "`: the buffer was freed");
    const size_t elem = w_.dtype_size(c.dtype);
    const size_t have = sizes_[static_cast<size_t>(c.buffer)];
    const size_t n = c.count >= 0 ? static_cast<size_t>(c.count) : have / elem;
    if (n * elem > have) throw RankFailure("`" + c.text + "`: the count exceeds the buffer's size");
    if (n > static_cast<size_t>(INT_MAX)) throw RankFailure("`" + c.text + "`: the count exceeds MPI's int");
    return static_cast<int>(n);
  }
  void* ptr(int b) const { return buffers_[static_cast<size_t>(b)]; }

  // Runs the call; in a group (`requests` given) collectives and sends/receives start nonblocking.
  void execute(const Call& c, std::vector<MPI_Request>* requests) {
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_Request* rq = requests ? &req : nullptr;
    const std::string what = "`" + c.text + "`";
    switch (c.kind) {
      case OpKind::Alloc:
      case OpKind::CudaMalloc:
        buffers_[static_cast<size_t>(c.buffer)] = std::calloc(c.size > 0 ? c.size : 1, 1);
        sizes_[static_cast<size_t>(c.buffer)] = c.size;
        return;
      case OpKind::Free:
      case OpKind::CudaFree:
        std::free(buffers_[static_cast<size_t>(c.buffer)]);
        buffers_[static_cast<size_t>(c.buffer)] = nullptr;
        return;
      case OpKind::Register: {
        MPI_Win win = MPI_WIN_NULL;
        mpi(MPI_Win_create(ptr(c.buffer), static_cast<MPI_Aint>(sizes_[static_cast<size_t>(c.buffer)]), 1,
                           MPI_INFO_NULL, member_comm(c), &win),
            what + " MPI_Win_create");
        std::lock_guard<std::mutex> lock(mutex_);
        windows_[{c.comm, c.buffer}].push_back(win);
        return;
      }
      case OpKind::Deregister: {
        MPI_Win win = MPI_WIN_NULL;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          auto& v = windows_[{c.comm, c.buffer}];
          if (v.empty()) throw RankFailure(what + ": no window to free");
          win = v.back();
          v.pop_back();
        }
        mpi(MPI_Win_free(&win), what + " MPI_Win_free");
        return;
      }
      case OpKind::RegisterLocal:
      case OpKind::DeregisterLocal:
      case OpKind::Finalize:
      case OpKind::SyncStream:
      case OpKind::SyncDevice:
        return;
      case OpKind::Init: {
        MPI_Group world_group = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
        const auto& m = w_.comms[static_cast<size_t>(c.comm)].members;
        MPI_Comm_group(MPI_COMM_WORLD, &world_group);
        MPI_Group_incl(world_group, static_cast<int>(m.size()), m.data(), &group);
        MPI_Comm comm = MPI_COMM_NULL;
        const int code = MPI_Comm_create_group(MPI_COMM_WORLD, group, c.comm, &comm);
        MPI_Group_free(&group);
        MPI_Group_free(&world_group);
        mpi(code, what + " MPI_Comm_create_group");
        set_comm(c.comm, comm);
        return;
      }
      case OpKind::Split: {
        MPI_Comm child = MPI_COMM_NULL;
        mpi(MPI_Comm_split(member_comm(c), c.child >= 0 ? c.child : MPI_UNDEFINED, rank_, &child),
            what + " MPI_Comm_split");
        if (c.child >= 0) set_comm(c.child, child);
        return;
      }
      case OpKind::Destroy: {
        MPI_Comm comm = member_comm(c);
        set_comm(c.comm, MPI_COMM_NULL);
        mpi(MPI_Comm_free(&comm), what + " MPI_Comm_free");
        return;
      }
      case OpKind::Abort:  // no MPI call aborts one communicator: the handle is dropped
        set_comm(c.comm, MPI_COMM_NULL);
        return;
      case OpKind::Shrink:
      case OpKind::Grow:
      case OpKind::GrowId:
      case OpKind::Revoke:  // NCCL-only: the scenario is refused on an mpi comm (resolve.cpp)
        throw std::runtime_error(what + " has no MPI call");
      case OpKind::AllReduce: {
        const int n = count_of(c);
        void* out = c.buffer2 >= 0 ? ptr(c.buffer2) : ptr(c.buffer);
        const void* in = c.buffer2 >= 0 ? ptr(c.buffer) : MPI_IN_PLACE;
        mpi(rq ? MPI_Iallreduce(in, out, n, dtype(c.dtype), redop(c.redop), member_comm(c), rq)
               : MPI_Allreduce(in, out, n, dtype(c.dtype), redop(c.redop), member_comm(c)),
            what + " MPI_Allreduce");
        break;
      }
      case OpKind::AllGather: {
        const int n = count_of(c) / members(c);
        void* out = c.buffer2 >= 0 ? ptr(c.buffer2) : ptr(c.buffer);
        const void* in = c.buffer2 >= 0 ? ptr(c.buffer) : MPI_IN_PLACE;
        const MPI_Datatype t = c.buffer2 >= 0 ? dtype(c.dtype) : MPI_DATATYPE_NULL;
        const int sn = c.buffer2 >= 0 ? n : 0;
        mpi(rq ? MPI_Iallgather(in, sn, t, out, n, dtype(c.dtype), member_comm(c), rq)
               : MPI_Allgather(in, sn, t, out, n, dtype(c.dtype), member_comm(c)),
            what + " MPI_Allgather");
        break;
      }
      case OpKind::ReduceScatter: {
        const int n = count_of(c) / members(c);
        void* out = c.buffer2 >= 0 ? ptr(c.buffer2) : ptr(c.buffer);
        const void* in = c.buffer2 >= 0 ? ptr(c.buffer) : MPI_IN_PLACE;
        mpi(rq ? MPI_Ireduce_scatter_block(in, out, n, dtype(c.dtype), redop(c.redop), member_comm(c), rq)
               : MPI_Reduce_scatter_block(in, out, n, dtype(c.dtype), redop(c.redop), member_comm(c)),
            what + " MPI_Reduce_scatter_block");
        break;
      }
      case OpKind::Broadcast: {
        const int n = count_of(c);
        mpi(rq ? MPI_Ibcast(ptr(c.buffer), n, dtype(c.dtype), root_of(c), member_comm(c), rq)
               : MPI_Bcast(ptr(c.buffer), n, dtype(c.dtype), root_of(c), member_comm(c)),
            what + " MPI_Bcast");
        break;
      }
      case OpKind::Reduce: {
        const int n = count_of(c);
        const bool root = root_of(c) == comm_rank(c, rank_);
        void* out = c.buffer2 >= 0 ? ptr(c.buffer2) : ptr(c.buffer);
        const void* in = c.buffer2 >= 0 || !root ? ptr(c.buffer) : MPI_IN_PLACE;
        mpi(rq ? MPI_Ireduce(in, out, n, dtype(c.dtype), redop(c.redop), root_of(c), member_comm(c), rq)
               : MPI_Reduce(in, out, n, dtype(c.dtype), redop(c.redop), root_of(c), member_comm(c)),
            what + " MPI_Reduce");
        break;
      }
      case OpKind::AllToAll: {
        const int n = count_of(c) / members(c);
        void* out = c.buffer2 >= 0 ? ptr(c.buffer2) : ptr(c.buffer);
        const void* in = c.buffer2 >= 0 ? ptr(c.buffer) : MPI_IN_PLACE;
        const MPI_Datatype t = c.buffer2 >= 0 ? dtype(c.dtype) : MPI_DATATYPE_NULL;
        const int sn = c.buffer2 >= 0 ? n : 0;
        mpi(rq ? MPI_Ialltoall(in, sn, t, out, n, dtype(c.dtype), member_comm(c), rq)
               : MPI_Alltoall(in, sn, t, out, n, dtype(c.dtype), member_comm(c)),
            what + " MPI_Alltoall");
        break;
      }
      case OpKind::Send: {
        const int n = count_of(c);
        if (c.buffered) {  // `mode=buffered`: MPI_Bsend from a buffer attached once (MPI 4.1 sec. 3.6)
          attach_send_buffer();
          mpi(rq ? MPI_Ibsend(ptr(c.buffer), n, dtype(c.dtype), comm_rank(c, c.peer), tag_of(c), member_comm(c), rq)
                 : MPI_Bsend(ptr(c.buffer), n, dtype(c.dtype), comm_rank(c, c.peer), tag_of(c), member_comm(c)),
              what + " MPI_Bsend");
          break;
        }
        mpi(rq ? MPI_Issend(ptr(c.buffer), n, dtype(c.dtype), comm_rank(c, c.peer), tag_of(c), member_comm(c), rq)
               : MPI_Ssend(ptr(c.buffer), n, dtype(c.dtype), comm_rank(c, c.peer), tag_of(c), member_comm(c)),
            what + " MPI_Ssend");
        break;
      }
      case OpKind::Recv: {
        const int n = count_of(c);
        mpi(rq ? MPI_Irecv(ptr(c.buffer), n, dtype(c.dtype), source_of(c), tag_of(c), member_comm(c), rq)
               : MPI_Recv(ptr(c.buffer), n, dtype(c.dtype), source_of(c), tag_of(c), member_comm(c), MPI_STATUS_IGNORE),
            what + " MPI_Recv");
        break;
      }
      case OpKind::Probe:
        mpi(MPI_Probe(source_of(c), tag_of(c), member_comm(c), MPI_STATUS_IGNORE), what + " MPI_Probe");
        break;
      case OpKind::Barrier:
        mpi(rq ? MPI_Ibarrier(member_comm(c), rq) : MPI_Barrier(member_comm(c)), what + " MPI_Barrier");
        break;
      case OpKind::StoreSet:
      case OpKind::StoreWait:
      case OpKind::HostBarrier:
        break;  // the host store: the rank runner does it (rank_runner.cpp)
      case OpKind::PutSignal:
      case OpKind::Signal:
      case OpKind::WaitSignal:
        throw RankFailure(what + ": an NCCL one-sided call has no MPI form");
      case OpKind::MpiError:
        throw RankFailure(what + ": the scenario records an erroneous MPI call (usage_error); nothing to replay");
      // One-sided calls on the window `register` made (MPI_Win_create, disp_unit 1): one element at
      // displacement 0, MPI_INT for an accumulate (MPI_SUM needs a predefined numeric type).
      case OpKind::RmaPut:
        mpi(MPI_Put(ptr(c.buffer), 1, MPI_BYTE, comm_rank(c, c.peer), 0, 1, MPI_BYTE, window(c)), what + " MPI_Put");
        break;
      case OpKind::RmaGet:
        mpi(MPI_Get(ptr(c.buffer), 1, MPI_BYTE, comm_rank(c, c.peer), 0, 1, MPI_BYTE, window(c)), what + " MPI_Get");
        break;
      case OpKind::RmaAccumulate:
        mpi(MPI_Accumulate(ptr(c.buffer), 1, MPI_INT, comm_rank(c, c.peer), 0, 1, MPI_INT, MPI_SUM, window(c)),
            what + " MPI_Accumulate");
        break;
      case OpKind::WinLock:
        mpi(MPI_Win_lock(c.win_mode == model::WinMode::Shared ? MPI_LOCK_SHARED : MPI_LOCK_EXCLUSIVE,
                         comm_rank(c, c.peer), 0, window(c)),
            what + " MPI_Win_lock");
        break;
      case OpKind::WinUnlock:
        mpi(MPI_Win_unlock(comm_rank(c, c.peer), window(c)), what + " MPI_Win_unlock");
        break;
      case OpKind::WinFlush:
        mpi(c.win_mode == model::WinMode::Local ? MPI_Win_flush_local(comm_rank(c, c.peer), window(c))
                                                : MPI_Win_flush(comm_rank(c, c.peer), window(c)),
            what + " MPI_Win_flush");
        break;
      case OpKind::WinLockAll:
        mpi(MPI_Win_lock_all(0, window(c)), what + " MPI_Win_lock_all");
        break;
      case OpKind::WinUnlockAll:
        mpi(MPI_Win_unlock_all(window(c)), what + " MPI_Win_unlock_all");
        break;
      case OpKind::WinFlushAll:
        mpi(c.win_mode == model::WinMode::Local ? MPI_Win_flush_local_all(window(c)) : MPI_Win_flush_all(window(c)),
            what + " MPI_Win_flush_all");
        break;
      case OpKind::WinFence:
        mpi(MPI_Win_fence(c.win_mode == model::WinMode::NoSucceed ? MPI_MODE_NOSUCCEED : 0, window(c)),
            what + " MPI_Win_fence");
        break;
      case OpKind::WinStart:
      case OpKind::WinComplete:
      case OpKind::WinPost:
      case OpKind::WinWait:
        throw RankFailure(what + ": the scenario does not name the groups of MPI_Win_start and MPI_Win_post");
      case OpKind::MpiFinalize:
        break;  // the rank runner calls MPI_Finalize once every rank's calls ran
    }
    if (requests && req != MPI_REQUEST_NULL) requests->push_back(req);
  }

  const model::World& w_;
  int rank_;
  std::vector<void*> buffers_;
  std::vector<size_t> sizes_;
  std::mutex mutex_;
  std::vector<MPI_Comm> comms_;
  std::map<std::pair<int, int>, std::vector<MPI_Win>> windows_;
  std::vector<char> bsend_buffer_;          // attached for `mode=buffered` sends, on the first
  MPI_Comm progress_comm_ = MPI_COMM_NULL;  // probed while waiting for a turn (one-sided scenarios only)
};

}  // namespace

std::unique_ptr<RankCalls> make_mpi_calls(const ReplayPlan& plan, int rank) {
  return std::make_unique<MpiCalls>(plan, rank);
}

}  // namespace collmc::replay
