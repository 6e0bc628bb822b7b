// How the dialects reach a model through the registry (runtime/model_registry.h): look the
// requested name up (loading the model when needed) and keep the model loaded for as long
// as a response that streams from it is still producing.
#pragma once

#include "api/http_message.h"
#include "runtime/model_registry.h"

namespace cohort::api {

// A producer that holds `lease` until it has run (and until it is destroyed unrun).
StreamProducer holding_lease(runtime::ModelLease lease, StreamProducer producer);

}  // namespace cohort::api
