// A message's type and count as the language writes them, from the MPI recorder's type fields (issue 32):
// the MPI reader's (mpi_recorder_reader.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "collmc/traces/recorder_reader.h"

namespace collmc::traces {

// MPI's predefined datatypes that the language names; any other predefined type is `mpi_<name>` (compared by
// name only), MPI_PACKED and what cannot be said `any` (never compared: MPI 4.1 sec. 3.3.1, 5.2.2).
std::string language_dtype(const std::string& mpi);

// What a message of `count` elements of a type is, as the language writes it (issue 32): MPI compares type
// signatures, the sequences of basic types with the displacements dropped (MPI 4.1 sec. 3.3.1, 5.1.11), so a
// derived type is flattened (the recorder writes its runs "MPI_INT*3,MPI_DOUBLE*1") and the message written
// as its shortest repeating unit: `dtype=int32 count=12` for 4 of a contiguous(3, MPI_INT), `dtype=mpi_sig_X
// count=K` for K repetitions of a mixed unit. Two messages with one signature get one form.
struct MessageForm {
  std::string dtype = "any";      // "any": not known, never compared
  std::optional<uint64_t> count;  // elements of dtype; nullopt: not known
  std::string signature;          // a mixed unit's runs, for the comment
};

MessageForm message_form(const std::string& name, const std::string& sig, int64_t count);

// The message a recorded call's count and type make: the fields `<prefix>dtype`, `<prefix>dtype_sig` and
// `count_key` of its enter line (`prefix` "" or "recv_").
MessageForm recorded_message(const RecorderLine* l, const std::string& prefix, const char* count_key);

// A v-collective's message (the recorder writes count -1 and each side MPI reads, `v_send_*` and `v_recv_*`:
// the type and the least and greatest count). MPI matches the type signature of each pair of ranks, sender's
// against receiver's, never one count across the ranks (MPI 4.1 sec. 6.5-6.8): the counts differ legally.
// When a rank's every count is above zero, it exchanges data with every rank it pairs with (all of them,
// itself included; a rooted call's other ranks with the root), and a signature that is a power of a type's
// shortest unit is a power of no other unit: each such pair then needs the two ranks' units equal, so that
// unit is written as the dtype, with no count, and the checker compares it across the ranks (`dtype A and
// B`). A rank whose two sides' units differ breaks its pair with itself; its send side is written. A zero
// count exchanges nothing and leaves that rank's types unmatched (a rank may send floats to the others and
// receive ints from them): `any` then, as in older traces without sides.
MessageForm recorded_v_message(const RecorderLine* l);

}  // namespace collmc::traces
