// Small summaries of measured samples, shared by the benches.
#pragma once

#include <algorithm>
#include <vector>

namespace cohort {

// The median of v (the mean of the middle two for an even count); 0 for no samples.
inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

}  // namespace cohort
