#include "text/bpe_tokenizer.h"

#include <algorithm>
#include <limits>
#include <queue>

#include "text/end_token_texts.h"
#include "text/special_split.h"

namespace cohort::text {
namespace {

constexpr uint32_t kMaxMappedCodepoint = 256 + 68;  // exclusive bound of the table's values

struct ByteTables {
  std::array<uint16_t, 256> to_cp{};
  std::array<int16_t, kMaxMappedCodepoint> to_byte{};
};

constexpr ByteTables make_byte_tables() {
  ByteTables t;
  for (auto& b : t.to_byte) b = -1;
  uint16_t next = 256;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    t.to_cp[b] = printable ? static_cast<uint16_t>(b) : next++;
    t.to_byte[t.to_cp[b]] = static_cast<int16_t>(b);
  }
  return t;
}

constexpr ByteTables kByteTables = make_byte_tables();
static_assert(kByteTables.to_cp[' '] == 0x120, "space is U+0120 ('Ġ') in GPT-2's table");

void append_utf8_short(uint32_t cp, std::string& out) {  // cp < 0x800 here
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

struct BpeSymbol {
  int32_t prev;
  int32_t next;
  int32_t id;  // vocabulary id; -1: a byte with no token; kMerged: absorbed by its left
};
constexpr int32_t kMerged = -2;

struct BpeBigram {
  int32_t rank;
  int32_t left;
  int32_t right;
  int32_t left_id;
  int32_t right_id;
};

// Min-heap order: lowest rank first, then the leftmost pair.
struct BigramGreater {
  bool operator()(const BpeBigram& a, const BpeBigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

// FNV-1a: vocabulary texts are short, and this keeps the table's layout the same everywhere.
uint32_t hash_piece(std::string_view s) {
  uint32_t h = 2166136261u;
  for (const char c : s) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

uint64_t merge_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

uint64_t mix64(uint64_t k) {  // a 64-bit mix (splitmix64's finaliser)
  k ^= k >> 30;
  k *= 0xBF58476D1CE4E5B9ull;
  k ^= k >> 27;
  k *= 0x94D049BB133111EBull;
  return k ^ (k >> 31);
}

}  // namespace

uint32_t byte_to_codepoint(uint8_t b) { return kByteTables.to_cp[b]; }

int codepoint_to_byte(uint32_t cp) {
  return cp < kMaxMappedCodepoint ? kByteTables.to_byte[cp] : -1;
}

Result<std::unique_ptr<BpeTokenizer>> BpeTokenizer::create(BpeVocab vocab) {
  std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer());
  COHORT_RETURN_IF_ERROR(tok->init(std::move(vocab)));
  return tok;
}

Status BpeTokenizer::init(BpeVocab v) {
  name_ = v.name;
  kind_ = "gpt2";
  const std::string where = "tokenizer: " + v.name + ": ";
  const size_t n = v.pieces.size();
  if (n == 0) return Status::corrupt(where + "the vocabulary has no tokens");
  if (n > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::corrupt(where + "too many tokens (" + std::to_string(n) + ")");
  }
  if (!v.types.empty() && v.types.size() != n) {
    return Status::corrupt(where + std::to_string(v.types.size()) + " token types for " +
                           std::to_string(n) + " tokens");
  }
  for (size_t i = 0; i < v.types.size(); ++i) {
    const auto t = static_cast<int32_t>(v.types[i]);
    if (t < 0 || t > static_cast<int32_t>(TokenType::kByte)) {
      return Status::corrupt(where + "token " + std::to_string(i) + " has unknown type " +
                             std::to_string(t));
    }
  }
  const auto n32 = static_cast<int32_t>(n);
  const std::pair<const char*, int32_t> ids[] = {{"bos", v.bos_id},     {"eos", v.eos_id},
                                                 {"unknown", v.unk_id}, {"eot", v.eot_id},
                                                 {"eom", v.eom_id},     {"padding", v.pad_id}};
  for (const auto& [what, id] : ids) {
    if (id < -1 || id >= n32) {
      return Status::corrupt(where + what + " token id " + std::to_string(id) +
                             " is out of range for " + std::to_string(n) + " tokens");
    }
  }
  if (v.merges.size() > static_cast<size_t>(std::numeric_limits<int32_t>::max())) {
    return Status::corrupt(where + "too many merges (" + std::to_string(v.merges.size()) + ")");
  }

  pieces_ = std::move(v.pieces);
  scores_.assign(n, 0.0f);
  types_ = v.types.empty() ? std::vector<TokenType>(n, TokenType::kNormal) : std::move(v.types);
  bos_id_ = v.bos_id;
  eos_id_ = v.eos_id;
  unk_id_ = v.unk_id;
  add_eos_ = v.add_eos;
  add_space_prefix_ = false;

  COHORT_ASSIGN_OR_RETURN(pre_, PreTokenizer::for_name(v.pre, v.name));
  add_bos_ = v.add_bos >= 0 ? v.add_bos == 1 : pre_->add_bos_default();

  // Empty texts never match; a repeated text maps to its last id (llama.cpp's token_to_id).
  size_t n_slots = 16;
  while (n_slots < 2 * n) n_slots *= 2;
  slots_.assign(n_slots, Slot{0, -1});
  for (int32_t i = 0; i < n32; ++i) {
    const std::string& p = pieces_[i];
    if (p.empty()) continue;
    const uint32_t h = hash_piece(p);
    for (size_t s = h & (n_slots - 1);; s = (s + 1) & (n_slots - 1)) {
      Slot& slot = slots_[s];
      if (slot.id < 0 || (slot.hash == h && pieces_[slot.id] == p)) {
        slot = {h, i};
        break;
      }
    }
  }

  size_t n_merge_slots = 16;
  while (n_merge_slots < 2 * v.merges.size()) n_merge_slots *= 2;
  merges_.assign(n_merge_slots, Merge{0, -1, -1});
  std::string joined;
  for (size_t r = 0; r < v.merges.size(); ++r) {
    const std::string_view m = v.merges[r];
    auto bad = [&](const std::string& why) {
      return Status::corrupt(where + "merge " + std::to_string(r) + " '" +
                             std::string(m.substr(0, 64)) + (m.size() > 64 ? "...' " : "' ") + why);
    };
    // The separator is the first space after the first byte (a part may be a lone space
    // in vocabularies that are not byte-level).
    const size_t pos = m.size() < 2 ? std::string_view::npos : m.find(' ', 1);
    if (pos == std::string_view::npos || pos + 1 >= m.size()) {
      return bad("is not two tokens separated by a space");
    }
    const std::string_view left = m.substr(0, pos);
    const std::string_view right = m.substr(pos + 1);
    const int32_t lid = find_piece(left);
    if (lid < 0) return bad("has a first part that is not a token");
    const int32_t rid = find_piece(right);
    if (rid < 0) return bad("has a second part that is not a token");
    joined.assign(left);
    joined += right;
    const int32_t result = find_piece(joined);
    if (result < 0) return bad("makes a token that is not in the vocabulary");
    const uint64_t key = merge_key(lid, rid);
    for (size_t s = mix64(key) & (n_merge_slots - 1);; s = (s + 1) & (n_merge_slots - 1)) {
      if (merges_[s].rank < 0) {
        merges_[s] = {key, static_cast<int32_t>(r), result};
        break;
      }
      if (merges_[s].key == key) break;  // a repeated pair keeps its first (lowest) rank
    }
  }

  std::string one;
  for (int b = 0; b < 256; ++b) {
    one.clear();
    append_utf8_short(byte_to_codepoint(static_cast<uint8_t>(b)), one);
    byte_to_id_[b] = find_piece(one);  // -1: encoding gives the unknown token
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
  int32_t eom = v.eom_id;
  if (eom < 0) eom = find_piece("<|eom_id|>");
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
  add_eog(eom);

  for (int32_t i = 0; i < n32; ++i) {
    const TokenType t = types_[i];
    if ((t == TokenType::kControl || t == TokenType::kUserDefined || t == TokenType::kUnknown) &&
        !pieces_[i].empty()) {
      special_ids_.push_back(i);
    }
  }
  std::stable_sort(special_ids_.begin(), special_ids_.end(),
                   [this](int32_t a, int32_t b) { return pieces_[a].size() > pieces_[b].size(); });
  return Status::ok();
}

int32_t BpeTokenizer::find_piece(std::string_view piece) const {
  if (piece.empty() || slots_.empty()) return -1;
  const uint32_t h = hash_piece(piece);
  const size_t mask = slots_.size() - 1;
  for (size_t s = h & mask;; s = (s + 1) & mask) {
    const Slot& slot = slots_[s];
    if (slot.id < 0) return -1;
    if (slot.hash == h && pieces_[slot.id] == piece) return slot.id;
  }
}

const BpeTokenizer::Merge* BpeTokenizer::find_merge(int32_t left, int32_t right) const {
  if (left < 0 || right < 0 || merges_.empty()) return nullptr;
  const uint64_t key = merge_key(left, right);
  const size_t mask = merges_.size() - 1;
  for (size_t s = mix64(key) & mask;; s = (s + 1) & mask) {
    const Merge& m = merges_[s];
    if (m.rank < 0) return nullptr;
    if (m.key == key) return &m;
  }
}

std::vector<int32_t> BpeTokenizer::encode(std::string_view text, bool add_bos,
                                          bool parse_special) const {
  std::vector<int32_t> out;
  if (add_bos && bos_id_ >= 0) out.push_back(bos_id_);
  if (text.empty()) return out;

  const std::vector<TextFragment> frags =
      split_special_tokens(text, parse_special, special_ids_, pieces_, types_, nullptr);

  for (const TextFragment& f : frags) {
    if (f.id >= 0) {
      out.push_back(f.id);
      continue;
    }
    for (std::string_view word : pre_->split(text.substr(f.off, f.len))) encode_word(word, out);
  }
  return out;
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  if (word.empty()) return;
  auto emit = [&](int32_t id) {
    if (id >= 0) {
      out.push_back(id);
    } else if (unk_id_ >= 0) {
      out.push_back(unk_id_);
    }  // no token for the byte and no unknown token: dropped
  };
  if (word.size() == 1) {
    emit(byte_to_id_[static_cast<uint8_t>(word[0])]);
    return;
  }
  if (pre_->ignore_merges()) {
    std::string encoded;
    encoded.reserve(word.size() * 2);
    for (const char c : word)
      append_utf8_short(byte_to_codepoint(static_cast<uint8_t>(c)), encoded);
    if (const int32_t id = find_piece(encoded); id >= 0) {
      out.push_back(id);
      return;
    }
  }

  const auto n = static_cast<int32_t>(word.size());
  std::vector<BpeSymbol> syms(word.size());
  for (int32_t i = 0; i < n; ++i) {
    syms[i] = {i - 1, i + 1 < n ? i + 1 : -1, byte_to_id_[static_cast<uint8_t>(word[i])]};
  }
  std::priority_queue<BpeBigram, std::vector<BpeBigram>, BigramGreater> queue;
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const Merge* m = find_merge(syms[left].id, syms[right].id);
    if (m != nullptr) queue.push({m->rank, left, right, syms[left].id, syms[right].id});
  };
  for (int32_t i = 1; i < n; ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const BpeBigram b = queue.top();
    queue.pop();
    BpeSymbol& left = syms[b.left];
    BpeSymbol& right = syms[b.right];
    // Stale entry: one side has merged since this pair was queued.
    if (left.next != b.right || left.id != b.left_id || right.id != b.right_id) continue;
    left.id = find_merge(b.left_id, b.right_id)->result;
    right.id = kMerged;
    left.next = right.next;
    if (right.next >= 0) syms[right.next].prev = b.left;
    try_add(left.prev, b.left);
    try_add(b.left, left.next);
  }

  for (int32_t i = 0; i != -1; i = syms[i].next) emit(syms[i].id);
}

std::string BpeTokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (id < 0 || id >= n_vocab()) return {};
  const std::string& p = pieces_[id];
  switch (types_[id]) {
    case TokenType::kControl:
    case TokenType::kUnknown:
      return render_special ? p : std::string();
    case TokenType::kUserDefined:
      return p;
    case TokenType::kNormal:
    case TokenType::kByte: {
      // Each code point of GPT-2's table is one byte; anything else passes through as is.
      std::string r;
      r.reserve(p.size());
      const std::string_view s = p;
      for (size_t i = 0; i < s.size();) {
        const size_t len = utf8::valid_sequence_length(s.substr(i));
        if (len == 2) {
          const uint32_t cp = ((static_cast<uint8_t>(s[i]) & 0x1Fu) << 6) |
                              (static_cast<uint8_t>(s[i + 1]) & 0x3Fu);
          if (const int b = codepoint_to_byte(cp); b >= 0) {
            r += static_cast<char>(b);
            i += 2;
            continue;
          }
        } else if (len == 1) {
          if (const int b = codepoint_to_byte(static_cast<uint8_t>(s[i])); b >= 0) {
            r += static_cast<char>(b);
            ++i;
            continue;
          }
        }
        const size_t take = std::max<size_t>(len, 1);
        r.append(s.substr(i, take));
        i += take;
      }
      return r;
    }
    case TokenType::kUndefined:
    case TokenType::kUnused:
      break;
  }
  return {};  // as llama.cpp: unused/undefined tokens render as nothing
}

}  // namespace cohort::text
