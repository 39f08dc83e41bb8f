// build.html: the page a person reads after `data build`: the settings, the pass rates after
// each round, what was kept and dropped, and one row per task with every sample's attempts.
// Made from build.json's content alone (build_run.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace cuset::databuild {

std::string build_html(const nlohmann::ordered_json& build);

}  // namespace cuset::databuild
