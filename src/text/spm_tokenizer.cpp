#include "text/spm_tokenizer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>

#include "text/end_token_texts.h"
#include "text/special_split.h"
#include "text/utf8.h"

namespace cohort::text {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// "<0xXX>" -> XX, else -1.
int parse_byte_piece(std::string_view p) {
  if (p.size() != 6 || p.substr(0, 3) != "<0x" || p[5] != '>') return -1;
  const int hi = hex_digit(p[3]);
  const int lo = hex_digit(p[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

std::string byte_piece(uint8_t b) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  return std::string{'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
}

struct SpmSymbol {
  int32_t prev;
  int32_t next;
  uint32_t start;  // byte offset into the escaped fragment
  uint32_t n;      // bytes; 0 once merged into its left neighbour
};

struct SpmBigram {
  float score;
  int32_t left;
  int32_t right;
  uint32_t bytes;
};

// Max-heap order: higher score first, then the leftmost pair.
struct BigramLess {
  bool operator()(const SpmBigram& a, const SpmBigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

Result<std::unique_ptr<SpmTokenizer>> SpmTokenizer::create(SpmVocab vocab) {
  std::unique_ptr<SpmTokenizer> tok(new SpmTokenizer());
  COHORT_RETURN_IF_ERROR(tok->init(std::move(vocab)));
  return tok;
}

Status SpmTokenizer::init(SpmVocab v) {
  name_ = v.name;
  kind_ = "llama";
  const std::string where = "tokenizer: " + v.name + ": ";
  const size_t n = v.pieces.size();
  if (n == 0) return Status::corrupt(where + "the vocabulary has no tokens");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::corrupt(where + "too many tokens (" + std::to_string(n) + ")");
  }
  if (!v.scores.empty() && v.scores.size() != n) {
    return Status::corrupt(where + std::to_string(v.scores.size()) + " scores for " +
                           std::to_string(n) + " tokens");
  }
  if (!v.types.empty() && v.types.size() != n) {
    return Status::corrupt(where + std::to_string(v.types.size()) + " token types for " +
                           std::to_string(n) + " tokens");
  }
  for (size_t i = 0; i < v.scores.size(); ++i) {
    if (std::isnan(v.scores[i])) {
      return Status::corrupt(where + "token " + std::to_string(i) + " has a NaN score");
    }
  }
  for (size_t i = 0; i < v.types.size(); ++i) {
    const auto t = static_cast<int32_t>(v.types[i]);
    if (t < 0 || t > static_cast<int32_t>(TokenType::kByte)) {
      return Status::corrupt(where + "token " + std::to_string(i) + " has unknown type " +
                             std::to_string(t));
    }
  }
  const auto n32 = static_cast<int32_t>(n);
  const std::pair<const char*, int32_t> ids[] = {{"bos", v.bos_id},
                                                 {"eos", v.eos_id},
                                                 {"unknown", v.unk_id},
                                                 {"eot", v.eot_id},
                                                 {"eom", v.eom_id}};
  for (const auto& [what, id] : ids) {
    if (id < -1 || id >= n32) {
      return Status::corrupt(where + what + " token id " + std::to_string(id) +
                             " is out of range for " + std::to_string(n) + " tokens");
    }
  }

  pieces_ = std::move(v.pieces);
  scores_ = v.scores.empty() ? std::vector<float>(n, 0.0f) : std::move(v.scores);
  types_ = v.types.empty() ? std::vector<TokenType>(n, TokenType::kNormal) : std::move(v.types);
  bos_id_ = v.bos_id;
  eos_id_ = v.eos_id;
  unk_id_ = v.unk_id;
  add_bos_ = v.add_bos;
  add_space_prefix_ = v.add_space_prefix;

  // Empty texts can never match (llama.cpp renames them "[EMPTY_<id>]"); a repeated text
  // maps to its last id, as llama.cpp's token_to_id does.
  piece_to_id_.reserve(n);
  for (int32_t i = 0; i < n32; ++i) {
    const std::string& p = pieces_[i];
    if (p.empty()) continue;
    piece_to_id_[std::string_view(p)] = i;
    max_piece_bytes_ = std::max(max_piece_bytes_, p.size());
  }

  byte_value_.assign(n, -1);
  for (int32_t i = 0; i < n32; ++i) {
    if (types_[i] != TokenType::kByte) continue;
    const int b = parse_byte_piece(pieces_[i]);
    if (b < 0) {
      return Status::corrupt(where + "byte token " + std::to_string(i) + " has text '" +
                             pieces_[i] + "', expected <0xXX>");
    }
    byte_value_[i] = static_cast<int16_t>(b);
  }
  for (int b = 0; b < 256; ++b) {
    int32_t id = find_piece(byte_piece(static_cast<uint8_t>(b)));
    if (id < 0) id = find_piece(std::string(1, static_cast<char>(b)));
    byte_to_id_[b] = id >= 0 ? id : unk_id_;
  }

  // End of generation, as llama.cpp decides it: explicit ids plus well-known texts.
  int32_t eot = v.eot_id;
  if (eot < 0) {
    for (std::string_view t : kEotTexts) {
      if (const int32_t id = find_piece(t); id >= 0) {
        eot = id;
        types_[id] = TokenType::kControl;
        break;
      }
    }
  }
  auto add_eog = [this](int32_t id) {
    if (id >= 0 && std::find(eog_ids_.begin(), eog_ids_.end(), id) == eog_ids_.end()) {
      eog_ids_.push_back(id);
    }
  };
  for (std::string_view t : kEogTexts) {
    if (const int32_t id = find_piece(t); id >= 0) {
      types_[id] = TokenType::kControl;
      add_eog(id);
    }
  }
  add_eog(eos_id_);
  add_eog(eot);
  add_eog(v.eom_id);

  for (int32_t i = 0; i < n32; ++i) {
    const TokenType t = types_[i];
    if ((t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown) &&
        !pieces_[i].empty()) {
      special_ids_.push_back(i);
    }
  }
  std::stable_sort(special_ids_.begin(), special_ids_.end(),
                   [this](int32_t a, int32_t b) { return pieces_[a].size() > pieces_[b].size(); });

  rstrip_.assign(n, 0);
  if (v.rstrip_after_special) {
    for (int32_t id : special_ids_) rstrip_[id] = 1;
    if (const int32_t id = find_piece("</s>"); id >= 0) rstrip_[id] = 1;
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) {
      if (const int32_t id = find_piece(t); id >= 0) rstrip_[id] = 0;
    }
  }
  return Status::ok();
}

int32_t SpmTokenizer::find_piece(std::string_view piece) const {
  const auto it = piece_to_id_.find(piece);
  return it == piece_to_id_.end() ? -1 : it->second;
}

std::vector<int32_t> SpmTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos && bos_id_ >= 0) out.push_back(bos_id_);
  if (text.empty()) return out;

  const std::vector<TextFragment> frags =
      split_special_tokens(text, parse_special, special_ids_, pieces_, types_, &rstrip_);

  bool prev_special = true;  // the text start counts as "after a special token"
  for (const TextFragment& f : frags) {
    if (f.id >= 0) {
      out.push_back(f.id);
      prev_special = true;
    } else {
      encode_fragment(text.substr(f.off, f.len), add_space_prefix_ && prev_special, out);
      prev_special = false;
    }
  }
  return out;
}

void SpmTokenizer::encode_fragment(std::string_view fragment, bool space_prefix,
                                   std::vector<int32_t>& out) const {
  std::string s;
  s.reserve(fragment.size() + 8);
  if (space_prefix) s += kSpace;
  for (const char c : fragment) {
    if (c == ' ') {
      s += kSpace;
    } else {
      s += c;
    }
  }
  if (s.empty()) return;

  std::vector<SpmSymbol> syms;
  syms.reserve(s.size());
  for (size_t off = 0; off < s.size();) {
    const size_t len =
        std::min(utf8::sequence_length(static_cast<uint8_t>(s[off])), s.size() - off);
    const auto idx = static_cast<int32_t>(syms.size());
    syms.push_back({idx - 1, off + len == s.size() ? -1 : idx + 1, static_cast<uint32_t>(off),
                    static_cast<uint32_t>(len)});
    off += len;
  }

  std::priority_queue<SpmBigram, std::vector<SpmBigram>, BigramLess> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t bytes = syms[left].n + syms[right].n;
    if (bytes > max_piece_bytes_) return;
    const int32_t id = find_piece(std::string_view(s).substr(syms[left].start, bytes));
    if (id < 0) return;
    queue.push({scores_[id], left, right, bytes});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(syms.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const SpmBigram b = queue.top();
    queue.pop();
    SpmSymbol& left = syms[b.left];
    SpmSymbol& right = syms[b.right];
    // Stale entry: one side has merged since this pair was queued.
    if (left.n == 0 || right.n == 0 || left.n + right.n != b.bytes) continue;
    left.n += right.n;
    right.n = 0;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = syms[i].next) {
    const std::string_view text = std::string_view(s).substr(syms[i].start, syms[i].n);
    const int32_t id = find_piece(text);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (const char c : text) {
      const int32_t bid = byte_to_id_[static_cast<uint8_t>(c)];
      if (bid >= 0) out.push_back(bid);  // no byte piece and no unknown token: dropped
    }
  }
}

std::string SpmTokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (id < 0 || id >= n_vocab()) return {};
  const std::string& p = pieces_[id];
  switch (types_[id]) {
    case TokenType::kControl:
    case TokenType::kUnknown:
      return render_special ? p : std::string();
    case TokenType::kUserDefined:
      return p;
    case TokenType::kNormal: {
      std::string r;
      r.reserve(p.size());
      for (size_t i = 0; i < p.size();) {
        if (p.compare(i, kSpace.size(), kSpace) == 0) {
          r += ' ';
          i += kSpace.size();
        } else {
          r += p[i++];
        }
      }
      return r;
    }
    case TokenType::kByte:
      return std::string(1, static_cast<char>(byte_value_[id]));
    case TokenType::kUndefined:
    case TokenType::kUnused:
      break;
  }
  return {};  // as llama.cpp: unused/undefined tokens render as nothing
}

}  // namespace cohort::text
