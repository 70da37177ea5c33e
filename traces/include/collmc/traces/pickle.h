// A pickle reader that decodes data and nothing else. A trace file must never run code: the decoder
// knows dicts, lists, tuples, sets, str, bytes, ints, floats, booleans, None, the memo and frames, and
// rejects every opcode that imports or calls (GLOBAL, STACK_GLOBAL, REDUCE, BUILD, INST, OBJ, NEWOBJ,
// PERSID, EXT...) with an error naming the opcode and its byte offset. The one exception is the
// identity wrappers torch's C++ pickler may put around containers (torch.jit._pickle.restore_type_tag,
// build_intlist, build_doublelist, build_boollist): they are recognised by name and replaced by their
// argument; nothing is imported or called.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace collmc::traces {

struct PickleLimits {
  int max_depth = 200;               // nesting of containers in the result
  uint64_t max_nodes = 1ull << 21;   // values in the result, counting each memo reuse again
  uint64_t max_string = 1ull << 28;  // bytes in one string
};

// Decodes one pickle (protocols 2 to 5; also the binary opcodes of 0 and 1) into JSON: dicts become
// objects (int, float, bool and None keys are written as text), lists, tuples and sets become arrays,
// bytes become a string of the same code points (latin-1). Throws TraceInputError (file `name`, byte
// offset) for anything else, for truncated input, for malformed strings and for limits exceeded.
nlohmann::json decode_pickle(const std::string& name, std::string_view bytes, const PickleLimits& limits = {});

// Strict UTF-8 (no overlong forms, no surrogates), as nlohmann::json expects of its strings: the decoder's
// test of a str, shared with the Flight Recorder reader's own pass over torch's pickles.
bool valid_utf8(std::string_view s);

}  // namespace collmc::traces
