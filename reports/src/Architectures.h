#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace conform {

// The architecture view of an `hf` run, from the coverage model's cases: per architecture its
// checks by dtype, time, peak device memory, fallback and failing ops and a repro command; the
// headline "N of M architectures pass forward, generate and backward natively", for all and
// for `most_used`; and the op-impact ranking: for every aten op that fell back or failed, the
// architectures it blocks, sorted by how many would pass if it alone were fixed.
nlohmann::json architecture_view(const nlohmann::json& cases,
                                 const std::vector<std::string>& most_used);

}  // namespace conform
