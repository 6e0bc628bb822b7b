#include "kernels/terms_key.h"

namespace cohort::kernels {

TermsKey::TermsKey() : version_(0), a_(nullptr), a_stride_(0), n_(0), t0_(0), t1_(0) {}

bool TermsKey::fresh(const GemmArgs& g, int64_t t0, int64_t t1) {
  if (g.a_version != 0 && g.a_version == version_ && g.a == a_ && g.a_stride == a_stride_ &&
      g.n == n_ && t0 == t0_ && t1 == t1_) {
    return false;
  }
  version_ = g.a_version;
  a_ = g.a;
  a_stride_ = g.a_stride;
  n_ = g.n;
  t0_ = t0;
  t1_ = t1;
  return true;
}

}  // namespace cohort::kernels
