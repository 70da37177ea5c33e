// Scenario-language names (LANGUAGE.md) for NCCL data types and reduction ops, and the unique-id hash.
#pragma once

#include <nccl.h>

#include <cstdint>

namespace collmc::recorder {

inline const char* dtype_name(ncclDataType_t t) {
  switch (static_cast<int>(t)) {
    case ncclInt8:
      return "int8";
    case ncclUint8:
      return "uint8";
    case ncclInt32:
      return "int32";
    case ncclUint32:
      return "uint32";
    case ncclInt64:
      return "int64";
    case ncclUint64:
      return "uint64";
    case ncclFloat16:
      return "float16";
    case ncclFloat32:
      return "float32";
    case ncclFloat64:
      return "float64";
    case ncclBfloat16:
      return "bfloat16";
    case ncclFloat8e4m3:
      return "float8e4m3";
    case ncclFloat8e5m2:
      return "float8e5m2";
    default:
      return "unknown";
  }
}

// Ops made by ncclRedOpCreatePreMulSum have values from ncclNumOps on: "premulsum".
inline const char* op_name(ncclRedOp_t op) {
  switch (static_cast<int>(op)) {
    case ncclSum:
      return "sum";
    case ncclProd:
      return "prod";
    case ncclMax:
      return "max";
    case ncclMin:
      return "min";
    case ncclAvg:
      return "avg";
    default:
      return "premulsum";
  }
}

// FNV-1a, 64 bits, over all NCCL_UNIQUE_ID_BYTES bytes: every rank that joins a communicator received
// the same bytes, so every rank computes the same hash; the bytes themselves (an address and a random
// magic) are not written.
inline uint64_t unique_id_hash(const ncclUniqueId& id) {
  uint64_t h = 1469598103934665603ull;
  for (char c : id.internal) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace collmc::recorder
