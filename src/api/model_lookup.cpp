#include "api/model_lookup.h"

#include <utility>

namespace cohort::api {

StreamProducer holding_lease(runtime::ModelLease lease, StreamProducer producer) {
  return
      [lease = std::move(lease), producer = std::move(producer)](StreamWriter& w) { producer(w); };
}

}  // namespace cohort::api
