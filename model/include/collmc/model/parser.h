// Parsing a `.cmc` scenario (LANGUAGE.md). Every error is an InputError with file:line:col.
#pragma once

#include <memory>
#include <string>

#include "collmc/model/ast.h"

namespace collmc::model {

Scenario parse_scenario(const std::shared_ptr<const SourceFile>& file);
Scenario parse_file(const std::string& path);
Scenario parse_string(const std::string& text, const std::string& file_name = "<string>");

}  // namespace collmc::model
