// The MPI recorder's call names as enums (mpi_calls.def): the reader and the usage rules switch on these.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "collmc/traces/trace.h"

namespace collmc::traces {

// What a call is to the reader.
enum class MpiFamily : uint8_t {
  Init,
  Finalize,
  Abort,
  Collective,
  Send,
  Recv,
  Sendrecv,
  Probe,
  Iprobe,
  Mprobe,
  Mrecv,
  Local,
  Start,
  Wait,
  WaitAll,
  WaitSome,
  RequestFree,
  Cancel,
  Grequest,
  CommCreate,
  CommCreateGroup,
  CommFree,
  CartQuery,
  TypeCreate,
  TypeCommit,
  TypeFree,
  WinCreate,
  WinFree,
  WinFence,
  WinLock,
  WinUnlock,
  WinFlush,
  WinStart,
  WinComplete,
  WinPost,
  WinWait,
  Rma,
};

// MpiCallInfo::flags.
inline constexpr uint32_t kNonblocking = 1u << 0;
inline constexpr uint32_t kReduces = 1u << 1;
inline constexpr uint32_t kRooted = 1u << 2;
inline constexpr uint32_t kPersistent = 1u << 3;
inline constexpr uint32_t kBuffered = 1u << 4;  // MPI_Bsend: completes locally (MPI 4.1 sec. 3.4)
inline constexpr uint32_t kReady = 1u << 5;
inline constexpr uint32_t kSynchronous = 1u << 6;
inline constexpr uint32_t kAll = 1u << 7;        // ..._all: every target, every request of a list
inline constexpr uint32_t kLocalOnly = 1u << 8;  // flush_local
inline constexpr uint32_t kRequest = 1u << 9;    // MPI_Rput, MPI_Rget: completed by a request
inline constexpr uint32_t kAtomic = 1u << 10;    // accumulate-like: such accesses do not race with each other
inline constexpr uint32_t kGet = 1u << 11;       // reads the target (writes the origin)

enum class MpiCall : uint16_t {
#define MPI_CALL(id, family, kind, flags) id,
#include "mpi_calls.def"
#undef MPI_CALL
};

struct MpiCallInfo {
  MpiCall call;
  std::string_view name;  // "MPI_Allreduce"
  MpiFamily family;
  CallKind kind;  // the operation it becomes (operations.def), or CallKind::Other
  uint32_t flags;
  bool has(uint32_t f) const { return (flags & f) != 0; }
};

// The row of a recorded call name; nullopt for a name the table does not hold.
std::optional<MpiCallInfo> mpi_call_of(std::string_view name);
const MpiCallInfo& mpi_call_info(MpiCall call);
// Every row, in the table's order.
std::span<const MpiCallInfo> mpi_calls();

}  // namespace collmc::traces
