#include "runtime/step_model.h"

#include <cmath>
#include <set>

namespace cohort::runtime {

double StepModel::predict_s(const StepSample& x) const {
  auto it = transport_latency_us.find(x.transport);
  const double transport_us = it == transport_latency_us.end() ? 0 : it->second;
  return compute_s * x.compute_share + fixed_s +
         x.syncs * (latency_factor * x.link_latency_us + transport_us) * 1e-6 +
         x.bytes * s_per_byte;
}

Result<std::vector<double>> least_squares(const std::vector<std::vector<double>>& a,
                                          const std::vector<double>& y,
                                          const std::vector<bool>& fixed_zero) {
  if (a.empty() || a.size() != y.size()) {
    return Status::invalid_argument("least squares: " + std::to_string(a.size()) + " rows for " +
                                    std::to_string(y.size()) + " values");
  }
  const size_t n = a[0].size();
  for (const auto& row : a) {
    if (row.size() != n) return Status::invalid_argument("least squares: ragged rows");
  }
  // The free columns, each scaled to unit norm so that coefficients of very different size
  // (seconds, seconds per byte) do not swamp the pivots. An all-zero column says nothing
  // about its coefficient, which stays 0.
  std::vector<size_t> cols;
  std::vector<double> scale;
  for (size_t c = 0; c < n; ++c) {
    if (c < fixed_zero.size() && fixed_zero[c]) continue;
    double norm2 = 0;
    for (const auto& row : a) norm2 += row[c] * row[c];
    if (norm2 == 0) continue;
    cols.push_back(c);
    scale.push_back(1 / std::sqrt(norm2));
  }
  const size_t m = cols.size();
  std::vector<std::vector<double>> ata(m, std::vector<double>(m + 1, 0));
  for (size_t r = 0; r < a.size(); ++r) {
    for (size_t i = 0; i < m; ++i) {
      const double ai = a[r][cols[i]] * scale[i];
      for (size_t j = 0; j < m; ++j) ata[i][j] += ai * a[r][cols[j]] * scale[j];
      ata[i][m] += ai * y[r];
    }
  }
  // Gaussian elimination with partial pivoting.
  for (size_t k = 0; k < m; ++k) {
    size_t p = k;
    for (size_t i = k + 1; i < m; ++i) {
      if (std::fabs(ata[i][k]) > std::fabs(ata[p][k])) p = i;
    }
    if (std::fabs(ata[p][k]) < 1e-10) {
      // Column cols[k] is a combination of the ones before it: hold it at 0 and solve again.
      std::vector<bool> fixed = fixed_zero;
      fixed.resize(n, false);
      fixed[cols[k]] = true;
      return least_squares(a, y, fixed);
    }
    std::swap(ata[k], ata[p]);
    for (size_t i = k + 1; i < m; ++i) {
      const double f = ata[i][k] / ata[k][k];
      for (size_t j = k; j <= m; ++j) ata[i][j] -= f * ata[k][j];
    }
  }
  std::vector<double> z(m, 0);
  for (size_t k = m; k-- > 0;) {
    double s = ata[k][m];
    for (size_t j = k + 1; j < m; ++j) s -= ata[k][j] * z[j];
    z[k] = s / ata[k][k];
  }
  std::vector<double> x(n, 0);
  for (size_t i = 0; i < m; ++i) x[cols[i]] = z[i] * scale[i];
  return x;
}

Result<StepModel> fit_step_model(std::span<const StepSample> samples) {
  std::set<std::string> transport_set;
  for (const StepSample& s : samples) {
    if (!(s.token_s > 0)) return Status::invalid_argument("step model: a sample without a time");
    transport_set.insert(s.transport);
  }
  const std::vector<std::string> transports(transport_set.begin(), transport_set.end());
  const size_t n_coef = 4 + transports.size();  // compute, fixed, latency, bytes, transports
  if (samples.size() < n_coef + 1) {
    return Status::invalid_argument("step model: " + std::to_string(samples.size()) +
                                    " samples for " + std::to_string(n_coef) + " coefficients");
  }
  std::vector<std::vector<double>> a;
  std::vector<double> y;
  for (const StepSample& s : samples) {
    std::vector<double> row = {s.compute_share, 1.0, s.syncs * s.link_latency_us * 1e-6, s.bytes};
    for (const std::string& t : transports) row.push_back(t == s.transport ? s.syncs * 1e-6 : 0);
    // Each row divided by its time: the fit minimises relative error, so that fast points
    // (a few ms per token) count as much as slow ones (a second per token).
    for (double& v : row) v /= s.token_s;
    a.push_back(std::move(row));
    y.push_back(1.0);
  }
  // Coefficients the data drive below zero are held at zero, one at a time (the most
  // negative first), until every coefficient is >= 0.
  std::vector<bool> fixed(n_coef, false);
  std::vector<double> x;
  for (;;) {
    COHORT_ASSIGN_OR_RETURN(x, least_squares(a, y, fixed));
    size_t worst = n_coef;
    for (size_t c = 0; c < n_coef; ++c) {
      if (x[c] < 0 && (worst == n_coef || x[c] < x[worst])) worst = c;
    }
    if (worst == n_coef) break;
    fixed[worst] = true;
  }
  StepModel m;
  m.compute_s = x[0];
  m.fixed_s = x[1];
  m.latency_factor = x[2];
  m.s_per_byte = x[3];
  for (size_t t = 0; t < transports.size(); ++t) m.transport_latency_us[transports[t]] = x[4 + t];
  return m;
}

}  // namespace cohort::runtime
