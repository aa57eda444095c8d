// How far apart two words are, for "did you mean" suggestions. Pure.
#pragma once

#include <cstddef>
#include <string_view>

namespace gantry {

// Levenshtein distance, giving up (returning limit + 1) as soon as it must
// exceed `limit`, so a long garbage word costs little.
std::size_t EditDistance(std::string_view a, std::string_view b,
                         std::size_t limit);

}  // namespace gantry
