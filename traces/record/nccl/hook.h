// One interposed call, for every hook alike: find the real function, write the entry line with the
// arguments, call it, write the return line with the result and the outputs. The hooks differ only in
// what they write, given as two functions of the line; the recorded names come from
// model/operations.def (the same names the recorder reader maps back to operations).
#pragma once

#include <atomic>
#include <string_view>

#include "call_record.h"
#include "collmc/model/operations.h"
#include "real_symbols.h"

namespace collmc::recorder {

// The real function behind the interposer `Self` (the recorder's own function of that name); one cache
// per interposer.
template <auto Self>
struct RealOf {
  static inline std::atomic<void*> cache{nullptr};
};

// Writes nothing: a call without arguments or without outputs worth recording.
inline void no_fields(JsonLine&) {}

// `name` must be a string literal or a table entry (it is kept, not copied). `on_missing` is returned when
// no real function exists in this process.
template <auto Self, class Result, class WriteArgs, class WriteOutputs, class... Args>
Result record_call(const char* name, Library library, Result on_missing, WriteArgs&& write_args,
                   WriteOutputs&& write_outputs, Args... args) {
  auto real = real_function<decltype(Self)>(RealOf<Self>::cache, name, library);
  if (real == nullptr) {
    report_missing(name);
    return on_missing;
  }
  CallRecord rec(name);
  if (!rec.active()) return real(args...);
  write_args(rec.args());
  rec.entered();
  Result r = real(args...);
  JsonLine& out = rec.result(static_cast<int64_t>(r));
  write_outputs(out, r);
  rec.returned();
  return r;
}

// The recorded name of a scenario operation: its NCCL or CUDA runtime function in operations.def.
constexpr const char* recorded_name(model::OpKind op) { return model::op_info(op).nccl_name.data(); }

}  // namespace collmc::recorder
