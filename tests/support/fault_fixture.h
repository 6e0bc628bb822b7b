// What the fault tests (a worker killed, a link cut, SIGTERM) each set up first: a fresh
// cluster key and a synthetic model slow enough per token that a long request is still
// running seconds later (f32, dim 512, 8 layers).
#pragma once

#include <string>

#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort::testing {

struct FaultFiles {
  std::string key;    // the key file
  std::string model;  // the synthetic GGUF
  std::string error;  // "" when both were written
};

inline FaultFiles make_key_and_slow_model(const std::string& bin, const TempDir& dir) {
  FaultFiles f{dir.file("k"), dir.file("m.gguf"), {}};
  if (run_command(bin + " key new > " + f.key).exit_code != 0) {
    f.error = "`cohort key new` failed";
  } else if (run_command(bin + " synth --dim 512 --layers 8 --heads 8 --kv-heads 8 --ffn 1536 " +
                         "--vocab 1024 --type f32 -o " + f.model + " 2>/dev/null")
                 .exit_code != 0) {
    f.error = "`cohort synth` failed";
  }
  return f;
}

}  // namespace cohort::testing
