// Writing a resolved World back as scenario text (LANGUAGE.md): one flat file that parses and resolves
// to the same programs. Communicators keep their declared names (a family stays a family, holding the
// instances the World has); every rank gets a body of its own; `repeat`, `when` and `maybe` are already
// unrolled or decided, so they never appear.
#pragma once

#include <string>

#include "collmc/model/world.h"

namespace collmc::model {

// `header` is written first, each of its lines as a `#` comment.
std::string print_world(const World& world, const std::string& header = "");

// One call as a statement ("register A pool", "send p2p 1 buf count=8 on side").
std::string print_call(const World& world, const Call& call);

}  // namespace collmc::model
