#include "common/edit_distance.h"

#include <algorithm>
#include <vector>

namespace gantry {

std::size_t EditDistance(std::string_view a, std::string_view b,
                         std::size_t limit) {
  const std::size_t gap =
      a.size() > b.size() ? a.size() - b.size() : b.size() - a.size();
  if (gap > limit) return limit + 1;
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    std::size_t row_min = row[0];
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
      row_min = std::min(row_min, row[j]);
    }
    if (row_min > limit) return limit + 1;
  }
  return row[b.size()];
}

}  // namespace gantry
