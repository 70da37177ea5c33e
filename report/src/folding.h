// Folding by shape, as every report at job scale does it (text, HTML, graph): one place for what a
// report shows first, which ranks stand in the same role, and which schedule steps matter.
#pragma once

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "collmc/checker/check.h"

namespace collmc::report {

// A rank set as ranges and strides (model::rank_ranges_text), cut at a piece boundary past `max_chars`
// with the count of the ranks left out: "0..7,256..263, ... (24 more)". 0: never cut.
std::string ranks_text(std::vector<int> ranks, const std::string& separator, size_t max_chars = 0);

// "1 step", "2 steps".
std::string count_of(size_t n, const char* one, const char* many);

// Where a wait-for node stands in the folded report: on shape `shape`'s cycles at hop `hop`; `lead`
// when it is on the representative (drawn and listed one by one), else it is folded into it.
struct Role {
  int shape = -1;
  int hop = -1;
  bool lead = false;
};

// (rank, thread, stream) of every node on a cycle -> its role; a thread is keyed with stream -1, a
// stream with thread -1 (as BlockedCall names them).
std::map<std::tuple<int, int, int>, Role> cycle_roles(const checker::WaitForGraph& g);

// The ranks a report follows first: the first shape's representative cycle, or the first cause's two
// ranks; empty without either.
std::vector<int> focus_ranks(const checker::WaitForGraph& g);

// The schedule steps that matter for `ranks`: what each of them did (its host steps) and the
// completions it took part in, in order; the last `max_steps` of them when there are more (0: all).
std::vector<size_t> steps_that_matter(const checker::CheckResult& r, const std::vector<int>& ranks, size_t max_steps);

// What a blocked rank is in (thread or stream, and the call), with the call's comm and stream written
// as marks: ranks in the same role on different comms (an import's 128 tensor-parallel groups, each a
// comm of its own) share a line of "where each rank stands". A key for folding, not for showing.
std::string role_key(const model::World& w, const checker::BlockedCall& b);
// The comm of the call a blocked rank is in, or -1.
int role_comm(const model::World& w, const checker::BlockedCall& b);

// "and 31 like it, with rank 0's place taken by ranks 1..7,256..263": the line that folds a shape.
std::string like_it_text(const checker::Shape& shape, size_t max_chars);

}  // namespace collmc::report
