// The models `cohort serve --models-dir DIR -m FILE...` offers: every *.gguf file in DIR
// (symlinks followed; not its subdirectories), sorted by name, then each FILE. Each is named
// by its file name, which must be a plain name (runtime/model_name.h).
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "runtime/model_registry.h"

namespace cohort::cli {

// kNotFound for a directory or file that is not there or no model at all; kInvalidArgument
// for two models with the same file name.
Result<std::vector<runtime::ModelSource>> find_model_sources(const std::string& models_dir,
                                                             const std::vector<std::string>& files);

}  // namespace cohort::cli
