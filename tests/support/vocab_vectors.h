// llama.cpp's tokenizer test vectors (../shared/data/vocab, SOURCES.md describes them):
// `<vocab>.gguf.inp` holds the texts, each followed by "\n__ggml_vocab_test__\n" (split the
// whole file on it, as llama.cpp's test-tokenizer-0 does; texts may be empty or hold
// newlines), and `<vocab>.gguf.out` one line of expected ids per text. The ids were made
// with add_special=false and parse_special=false.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "support/shared_data.h"

namespace cohort::testing {

struct VocabVectors {
  std::vector<std::string> texts;
  std::vector<std::vector<int32_t>> ids;  // ids[i] is what texts[i] tokenizes to
};

inline std::vector<int32_t> parse_id_line(const std::string& line) {
  std::vector<int32_t> ids;
  std::istringstream in(line);
  int64_t x;
  while (in >> x) ids.push_back(static_cast<int32_t>(x));
  return ids;
}

// Reads base + ".inp" and base + ".out" (base: the .gguf path). On a read or format
// problem returns false with *error set.
inline bool load_vocab_vectors(const std::string& base, VocabVectors* v, std::string* error) {
  const std::vector<uint8_t> inp_bytes = read_file_bytes(base + ".inp");
  const std::vector<uint8_t> out_bytes = read_file_bytes(base + ".out");
  if (inp_bytes.empty() || out_bytes.empty()) {
    *error = "cannot read " + base + ".inp/.out";
    return false;
  }
  const std::string inp(inp_bytes.begin(), inp_bytes.end());
  const std::string sep = "\n__ggml_vocab_test__\n";
  v->texts.clear();
  v->ids.clear();
  for (size_t pos = 0;;) {
    const size_t at = inp.find(sep, pos);
    if (at == std::string::npos) break;
    v->texts.push_back(inp.substr(pos, at - pos));
    pos = at + sep.size();
  }
  std::istringstream out(std::string(out_bytes.begin(), out_bytes.end()));
  for (std::string line; std::getline(out, line);) v->ids.push_back(parse_id_line(line));
  if (v->texts.empty() || v->texts.size() != v->ids.size()) {
    *error = base + ": " + std::to_string(v->texts.size()) + " texts but " +
             std::to_string(v->ids.size()) + " id lines";
    return false;
  }
  return true;
}

}  // namespace cohort::testing
