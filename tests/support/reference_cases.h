// Parser for ../shared/data/reference/stories260K-greedy.txt: the greedy outputs of the
// llama2.c reference program, used by the model and integration tests.
#pragma once

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace cohort::testing {

struct ReferenceCase {
  std::string name;
  std::string prompt;
  int64_t steps = 0;                // positions in all, BOS and prompt included
  std::vector<int32_t> prompt_ids;  // BOS + prompt
  std::vector<int32_t> seq_ids;     // BOS + prompt + generated
  std::string output;               // exact text printed: prompt + generated + "\n"
};

inline std::vector<int32_t> parse_ids(const std::string& s) {
  std::vector<int32_t> ids;
  std::istringstream in(s);
  int32_t v;
  while (in >> v) ids.push_back(v);
  return ids;
}

// Returns the cases, or an empty vector when the file cannot be read.
inline std::vector<ReferenceCase> load_reference_cases(const std::string& path) {
  std::ifstream in(path);
  std::vector<ReferenceCase> cases;
  std::string line;
  bool in_output = false;
  while (std::getline(in, line)) {
    if (in_output) {
      if (line == "----- END OUTPUT -----") {
        in_output = false;
      } else {
        cases.back().output += line + "\n";
      }
      continue;
    }
    auto value = [&](const char* key) { return line.substr(std::string(key).size()); };
    if (line.rfind("=== CASE", 0) == 0) {
      cases.emplace_back();
      cases.back().name = line.substr(line.find(':') + 2);
    } else if (cases.empty()) {
      continue;
    } else if (line.rfind("PROMPT: ", 0) == 0) {
      std::string p = value("PROMPT: ");
      cases.back().prompt = p.substr(1, p.size() - 2);  // strip the quotes
    } else if (line.rfind("STEPS: ", 0) == 0) {
      cases.back().steps = std::stoll(value("STEPS: "));
    } else if (line.rfind("PROMPT_IDS: ", 0) == 0) {
      cases.back().prompt_ids = parse_ids(value("PROMPT_IDS: "));
    } else if (line.rfind("SEQ_IDS: ", 0) == 0) {
      cases.back().seq_ids = parse_ids(value("SEQ_IDS: "));
    } else if (line == "----- BEGIN OUTPUT -----") {
      in_output = true;
    }
  }
  return cases;
}

}  // namespace cohort::testing
