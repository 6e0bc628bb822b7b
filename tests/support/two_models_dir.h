// A models directory for the several-models tests: stories260K.gguf (a symlink to the shared
// file, never a copy) and tiny.gguf (a small synthetic model `cohort synth` writes there).
#pragma once

#include <filesystem>
#include <string>

#include "support/shared_data.h"
#include "support/subprocess.h"

namespace cohort::testing {

// Makes `dir` holding the two models; false (with nothing to clean beyond `dir`) on failure.
inline bool make_two_models_dir(const std::string& cohort_bin, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  std::filesystem::create_symlink(kSharedData + "/models/stories260K.gguf",
                                  dir + "/stories260K.gguf", ec);
  if (ec) return false;
  return run_command(cohort_bin + " synth --dim 64 --layers 2 --heads 4 --kv-heads 2 " +
                     "--ffn 128 --vocab 300 --type f32 -o " + dir + "/tiny.gguf 2>/dev/null")
             .exit_code == 0;
}

}  // namespace cohort::testing
