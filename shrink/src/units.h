// What the statement pass removes: a call together with its partners. The k-th `register A` of every
// member of A is one unit, a send with the recv it pairs with is one, a local call (alloc, sync...) is
// a unit of its own. Removing the partners together keeps the programs consistent, so a shrink cannot
// reach a "violation" that is only a call deleted on one side.
#pragma once

#include <vector>

#include "collmc/model/world.h"

namespace collmc::shrink {

// Units as lists of call ids, in the order of their first call.
std::vector<std::vector<int>> statement_units(const model::World& world);

}  // namespace collmc::shrink
