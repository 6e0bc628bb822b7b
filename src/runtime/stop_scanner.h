// Stop strings over streamed text: takes generated text piece by piece and says what may be
// shown so far. Text that could still grow into a stop string is held back; once a stop
// string appears, the text is cut before it and nothing after it is ever released.
//
// Not thread-safe; one per generation.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cohort::runtime {

class StopScanner {
 public:
  // Empty strings in `stops` are ignored.
  explicit StopScanner(std::vector<std::string> stops);

  // Appends `piece` (whole UTF-8 characters) and returns the newly releasable text; after a
  // match, the text up to the stop string that was not yet released.
  std::string push(std::string_view piece);
  // Releases whatever is held back (generation ended without a match).
  std::string flush();

  bool matched() const { return !matched_stop_.empty(); }
  const std::string& matched_stop() const { return matched_stop_; }
  // Everything released or releasable: the final text once generation is over.
  const std::string& text() const { return text_; }

 private:
  std::vector<std::string> stops_;
  size_t max_stop_bytes_ = 0;
  std::string text_;     // all text so far (cut at the stop string after a match)
  size_t released_ = 0;  // bytes of text_ already returned
  std::string matched_stop_;
};

}  // namespace cohort::runtime
