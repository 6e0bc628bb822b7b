#include "text/tokenizer.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>

#include "text/bpe_tokenizer.h"
#include "text/spm_tokenizer.h"
#include "text/utf8.h"

namespace cohort::text {
namespace {

constexpr std::string_view kTokensKey = "tokenizer.ggml.tokens";
constexpr std::string_view kScoresKey = "tokenizer.ggml.scores";
constexpr std::string_view kTypesKey = "tokenizer.ggml.token_type";
constexpr std::string_view kMergesKey = "tokenizer.ggml.merges";

// An optional token id key. Absent keeps *id; -1 / 0xFFFFFFFF mean "none" (converters write
// them for unset ids); any other value outside [0, n_vocab) is an error.
Status read_token_id(const format::GgufFile& file, std::string_view key, int64_t n_vocab,
                     int32_t* id) {
  const format::GgufValue* v = file.find(key);
  if (v == nullptr) return Status::ok();
  const std::optional<int64_t> x = v->as_int();
  if (!x) {
    return Status::corrupt("tokenizer: " + file.name() + ": " + std::string(key) +
                           " is not an integer");
  }
  if (*x == -1 || *x == 0xFFFFFFFFll) {
    *id = -1;
    return Status::ok();
  }
  if (*x < 0 || *x >= n_vocab) {
    return Status::corrupt("tokenizer: " + file.name() + ": " + std::string(key) + " = " +
                           std::to_string(*x) + " is out of range for " + std::to_string(n_vocab) +
                           " tokens");
  }
  *id = static_cast<int32_t>(*x);
  return Status::ok();
}

Status read_flag(const format::GgufFile& file, std::string_view key, bool* flag) {
  const format::GgufValue* v = file.find(key);
  if (v == nullptr) return Status::ok();
  const std::optional<bool> b = v->as_bool();
  if (!b) {
    return Status::corrupt("tokenizer: " + file.name() + ": " + std::string(key) +
                           " is not a bool");
  }
  *flag = *b;
  return Status::ok();
}

// tokenizer.ggml.tokens: a non-empty array of strings that int32 ids can index.
Status read_tokens(const format::GgufFile& file, std::vector<std::string>* pieces) {
  const std::string where = "tokenizer: " + file.name() + ": ";
  const format::GgufValue* tokens_v = file.find(kTokensKey);
  if (tokens_v == nullptr) return Status::not_found(where + "no " + std::string(kTokensKey));
  const format::GgufArray* tokens = tokens_v->as_array();
  if (tokens == nullptr || tokens->elem_type != format::GgufType::kString ||
      tokens->strings.size() != tokens->count) {
    return Status::corrupt(where + std::string(kTokensKey) + " is not an array of strings");
  }
  const uint64_t n = tokens->count;
  if (n == 0) return Status::corrupt(where + std::string(kTokensKey) + " is empty");
  if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
    return Status::corrupt(where + "too many tokens (" + std::to_string(n) + ")");
  }
  pieces->reserve(n);
  for (std::string_view s : tokens->strings) pieces->emplace_back(s);
  return Status::ok();
}

// tokenizer.ggml.token_type (optional): one type (0..6) per token.
Status read_types(const format::GgufFile& file, uint64_t n, std::vector<TokenType>* types) {
  const format::GgufValue* tv = file.find(kTypesKey);
  if (tv == nullptr) return Status::ok();
  const std::string where = "tokenizer: " + file.name() + ": ";
  const format::GgufArray* a = tv->as_array();
  if (a == nullptr) return Status::corrupt(where + std::string(kTypesKey) + " is not an array");
  if (a->count != n) {
    return Status::corrupt(where + std::string(kTypesKey) + " has " + std::to_string(a->count) +
                           " entries for " + std::to_string(n) + " tokens");
  }
  types->resize(n);
  for (uint64_t i = 0; i < n; ++i) {
    const std::optional<int64_t> t = a->int_at(i);
    if (!t || *t < 0 || *t > static_cast<int64_t>(TokenType::kByte)) {
      return Status::corrupt(where + std::string(kTypesKey) + "[" + std::to_string(i) +
                             "] is not a token type (0..6)");
    }
    (*types)[i] = static_cast<TokenType>(*t);
  }
  return Status::ok();
}

Result<std::unique_ptr<Tokenizer>> spm_from_gguf(const format::GgufFile& file) {
  const std::string where = "tokenizer: " + file.name() + ": ";
  SpmVocab v;
  v.name = file.name();
  COHORT_RETURN_IF_ERROR(read_tokens(file, &v.pieces));
  const uint64_t n = v.pieces.size();

  if (const format::GgufValue* sv = file.find(kScoresKey); sv != nullptr) {
    const format::GgufArray* a = sv->as_array();
    if (a == nullptr) return Status::corrupt(where + std::string(kScoresKey) + " is not an array");
    if (a->count != n) {
      return Status::corrupt(where + std::string(kScoresKey) + " has " + std::to_string(a->count) +
                             " entries for " + std::to_string(n) + " tokens");
    }
    v.scores.resize(n);
    for (uint64_t i = 0; i < n; ++i) {
      const std::optional<double> f = a->float_at(i);
      if (!f) {
        return Status::corrupt(where + std::string(kScoresKey) + " is not an array of numbers");
      }
      v.scores[i] = static_cast<float>(*f);
    }
  }
  COHORT_RETURN_IF_ERROR(read_types(file, n, &v.types));

  // llama.cpp's defaults for SentencePiece vocabularies: <unk>=0, <s>=1, </s>=2.
  const auto nv = static_cast<int64_t>(n);
  v.unk_id = nv > 0 ? 0 : -1;
  v.bos_id = nv > 1 ? 1 : -1;
  v.eos_id = nv > 2 ? 2 : -1;
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.bos_token_id", nv, &v.bos_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.eos_token_id", nv, &v.eos_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.unknown_token_id", nv, &v.unk_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.eot_token_id", nv, &v.eot_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.eom_token_id", nv, &v.eom_id));
  COHORT_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_bos_token", &v.add_bos));
  COHORT_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_space_prefix", &v.add_space_prefix));

  if (const std::optional<std::string_view> name = file.get_string("general.name")) {
    std::string lower(*name);
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    v.rstrip_after_special =
        lower.find("phi-3") != std::string::npos || lower.find("phi3") != std::string::npos;
  }

  COHORT_ASSIGN_OR_RETURN(std::unique_ptr<SpmTokenizer> tok, SpmTokenizer::create(std::move(v)));
  return std::unique_ptr<Tokenizer>(std::move(tok));
}

// Byte-level BPE ("gpt2"): tokens, types, merges, tokenizer.ggml.pre and the special ids.
// Unlike SentencePiece vocabularies there are no default ids: absent means none.
Result<std::unique_ptr<Tokenizer>> bpe_from_gguf(const format::GgufFile& file) {
  const std::string where = "tokenizer: " + file.name() + ": ";
  BpeVocab v;
  v.name = file.name();
  COHORT_RETURN_IF_ERROR(read_tokens(file, &v.pieces));
  const auto nv = static_cast<int64_t>(v.pieces.size());
  COHORT_RETURN_IF_ERROR(read_types(file, v.pieces.size(), &v.types));

  const format::GgufValue* mv = file.find(kMergesKey);
  if (mv == nullptr) return Status::not_found(where + "no " + std::string(kMergesKey));
  const format::GgufArray* merges = mv->as_array();
  if (merges == nullptr || merges->elem_type != format::GgufType::kString ||
      merges->strings.size() != merges->count) {
    return Status::corrupt(where + std::string(kMergesKey) + " is not an array of strings");
  }
  v.merges.reserve(merges->strings.size());
  for (std::string_view s : merges->strings) v.merges.emplace_back(s);

  if (const format::GgufValue* pv = file.find("tokenizer.ggml.pre"); pv != nullptr) {
    const std::optional<std::string_view> pre = pv->as_string();
    if (!pre) return Status::corrupt(where + "tokenizer.ggml.pre is not a string");
    v.pre = std::string(*pre);
  }
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.bos_token_id", nv, &v.bos_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.eos_token_id", nv, &v.eos_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.unknown_token_id", nv, &v.unk_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.eot_token_id", nv, &v.eot_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.eom_token_id", nv, &v.eom_id));
  COHORT_RETURN_IF_ERROR(read_token_id(file, "tokenizer.ggml.padding_token_id", nv, &v.pad_id));
  if (file.find("tokenizer.ggml.add_bos_token") != nullptr) {
    bool add_bos = false;
    COHORT_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_bos_token", &add_bos));
    v.add_bos = add_bos ? 1 : 0;
  }
  COHORT_RETURN_IF_ERROR(read_flag(file, "tokenizer.ggml.add_eos_token", &v.add_eos));

  COHORT_ASSIGN_OR_RETURN(std::unique_ptr<BpeTokenizer> tok, BpeTokenizer::create(std::move(v)));
  return std::unique_ptr<Tokenizer>(std::move(tok));
}
}  // namespace

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const format::GgufFile& file) {
  const format::GgufValue* mv = file.find("tokenizer.ggml.model");
  if (mv == nullptr) {
    return Status::not_found("tokenizer: " + file.name() + ": no tokenizer.ggml.model key");
  }
  const std::optional<std::string_view> model = mv->as_string();
  if (!model) {
    return Status::corrupt("tokenizer: " + file.name() + ": tokenizer.ggml.model is not a string");
  }
  if (*model == "llama") return spm_from_gguf(file);
  if (*model == "gpt2") return bpe_from_gguf(file);
  return Status::unsupported("tokenizer: " + file.name() + ": tokenizer model '" +
                             std::string(*model) + "' is not supported");
}

bool Tokenizer::is_eog(int32_t id) const {
  return id >= 0 && std::find(eog_ids_.begin(), eog_ids_.end(), id) != eog_ids_.end();
}

std::string Detokenizer::push(int32_t id) {
  pending_ += tok_.token_to_piece(id);
  const size_t n = utf8::complete_prefix(pending_);
  std::string out = pending_.substr(0, n);
  pending_.erase(0, n);
  return out;
}

std::string Detokenizer::flush() {
  std::string out;
  out.swap(pending_);
  return out;
}

}  // namespace cohort::text
