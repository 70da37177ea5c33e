// A message's type and count as the language writes them, from the MPI recorder's type fields (issue 32):
// the MPI reader's (mpi_recorder_reader.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

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

}  // namespace collmc::traces
