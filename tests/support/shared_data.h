// Where the real test data lives (../shared/data beside the checkout) and the helpers
// every test that reads it uses: a one-line skip when it is absent, and whole-file reads.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace cohort::testing {

inline const std::string kSharedData = COHORT_SHARED_DATA;
// The tiny trained model most tests run.
inline const std::string kStoriesGguf = kSharedData + "/models/stories260K.gguf";
// The `cohort` binary of this build, which the integration tests start.
inline const std::string kCohortBinary = COHORT_BINARY;

inline bool have_shared_data() { return std::filesystem::is_directory(kSharedData); }

inline std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

}  // namespace cohort::testing

// Skips the current test, with the reason, when the shared data folder is absent.
#define COHORT_SKIP_WITHOUT_SHARED_DATA()                                     \
  do {                                                                        \
    if (!::cohort::testing::have_shared_data())                               \
      GTEST_SKIP() << "no shared data at " << ::cohort::testing::kSharedData; \
  } while (0)
