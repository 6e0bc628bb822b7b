#include "runtime/cluster_view.h"

#include <algorithm>

namespace cohort::runtime {

double median_rtt_us(const std::vector<LinkView>& links) {
  std::vector<double> rtts;
  for (const LinkView& l : links)
    if (l.rtt_us > 0) rtts.push_back(l.rtt_us);
  if (rtts.empty()) return 0;
  std::nth_element(rtts.begin(), rtts.begin() + rtts.size() / 2, rtts.end());
  return rtts[rtts.size() / 2];
}

bool is_slow_link(const LinkView& link, double median) {
  constexpr double kFactor = 4.0;
  constexpr double kMinRttUs = 1000.0;  // below 1 ms no link is worth a warning
  return link.rtt_us > kMinRttUs && median > 0 && link.rtt_us > kFactor * median;
}

}  // namespace cohort::runtime
