// A candidate as an edit of a World: which ranks, comms and calls stay, and the program trees (where
// choices may have been resolved). project() turns it into a World of its own: ranks renumbered from 0,
// communicators restricted to the ranks kept, calls that lost their comm or peer dropped, empty blocks
// pruned.
#pragma once

#include <vector>

#include "collmc/model/world.h"

namespace collmc::shrink {

struct Edit {
  std::vector<char> keep_rank;               // by rank
  std::vector<char> keep_comm;               // by comm id
  std::vector<char> keep_call;               // by call id
  std::vector<model::RankProgram> programs;  // by rank

  static Edit identity(const model::World& world);
};

// Restriction rules: a comm keeps its kept members; one that had two or more members and keeps fewer
// than two is dropped (nothing can wait on it), with its calls. A call is dropped with its rank, its
// comm or its peer; a split whose child was dropped joins `none`; a root that was dropped is replaced
// by the lowest kept member of the comm (the same on every member, so the calls still agree).
model::World project(const model::World& world, const Edit& edit);

}  // namespace collmc::shrink
