// llama2.c checkpoint + tokenizer -> in-memory llama GGUF (all tensors F32, no Q/K
// permutation: llama2.c rotates adjacent pairs, as GGUF llama does).
#include "format/llama2c.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "core/mapped_file.h"
#include "format/byte_reader.h"
#include "format/gguf_writer.h"

namespace cohort::format {
namespace {

constexpr uint64_t kHeaderBytes = 7 * 4;

struct Config {
  int64_t dim = 0;
  int64_t hidden_dim = 0;
  int64_t n_layers = 0;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t vocab_size = 0;
  int64_t seq_len = 0;
  bool shared_classifier = true;
  int64_t kv_dim() const { return dim * n_kv_heads / n_heads; }
  int64_t head_size() const { return dim / n_heads; }
};

Status bad(const std::string& path, const std::string& what) {
  return Status::corrupt("llama2c: " + path + ": " + what);
}

Result<Config> parse_header(const std::string& path, const uint8_t* data, uint64_t size) {
  if (size < kHeaderBytes) {
    return bad(path, "file is " + std::to_string(size) + " bytes, smaller than the " +
                         std::to_string(kHeaderBytes) + "-byte header");
  }
  int32_t f[7];
  for (int k = 0; k < 7; ++k) f[k] = static_cast<int32_t>(load_u32le(data + 4 * k));
  Config c;
  c.dim = f[0];
  c.hidden_dim = f[1];
  c.n_layers = f[2];
  c.n_heads = f[3];
  c.n_kv_heads = f[4];
  c.vocab_size = f[5];
  c.seq_len = f[6];
  // A negative vocab_size means the classifier weights follow the other tensors.
  c.shared_classifier = c.vocab_size > 0;
  if (c.vocab_size < 0) c.vocab_size = -c.vocab_size;

  struct Field {
    const char* name;
    int64_t value;
    int64_t max;
  };
  const Field fields[] = {
      {"dim", c.dim, 1 << 16},
      {"hidden_dim", c.hidden_dim, 1 << 18},
      {"n_layers", c.n_layers, 1024},
      {"n_heads", c.n_heads, 1024},
      {"n_kv_heads", c.n_kv_heads, 1024},
      {"vocab_size", c.vocab_size, 1 << 22},
      {"seq_len", c.seq_len, 1 << 22},
  };
  for (const Field& fl : fields) {
    if (fl.value <= 0 || fl.value > fl.max) {
      return bad(path, std::string("header ") + fl.name + " is " + std::to_string(fl.value) +
                           " (must be 1.." + std::to_string(fl.max) +
                           "; not a llama2.c checkpoint?)");
    }
  }
  if (c.dim % c.n_heads != 0) {
    return bad(path, "dim " + std::to_string(c.dim) + " is not a multiple of n_heads " +
                         std::to_string(c.n_heads));
  }
  if (c.n_heads % c.n_kv_heads != 0) {
    return bad(path, "n_heads " + std::to_string(c.n_heads) + " is not a multiple of n_kv_heads " +
                         std::to_string(c.n_kv_heads));
  }
  if (c.head_size() % 2 != 0) {
    return bad(path, "head size " + std::to_string(c.head_size()) + " is odd");
  }
  return c;
}

// Floats in the checkpoint after the header (the caps above keep this far from overflow).
uint64_t weight_floats(const Config& c) {
  uint64_t dim = c.dim, hidden = c.hidden_dim, kv = c.kv_dim(), layers = c.n_layers;
  uint64_t per_layer = dim + dim * dim + 2 * kv * dim + dim * dim + dim + 3 * hidden * dim;
  uint64_t n = c.vocab_size * dim + layers * per_layer + dim;
  n += static_cast<uint64_t>(c.seq_len) * static_cast<uint64_t>(c.head_size());  // freq_cis
  if (!c.shared_classifier) n += c.vocab_size * dim;
  return n;
}

struct Vocab {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
};

bool is_byte_token(std::string_view s) {
  auto hex = [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'A' && ch <= 'F') || (ch >= 'a' && ch <= 'f');
  };
  return s.size() == 6 && s.substr(0, 3) == "<0x" && hex(s[3]) && hex(s[4]) && s[5] == '>';
}

Result<Vocab> read_tokenizer(const std::string& path, const std::string& checkpoint_path,
                             int64_t vocab_size) {
  Result<MappedFile> map = MappedFile::open(path);
  if (!map.is_ok()) {
    return Status(map.status().code(), "llama2c: " + path + ": " + map.status().message());
  }
  ByteReader r(map->data(), map->size());
  int32_t max_token_length = 0;
  if (!r.i32(&max_token_length) || max_token_length < 0) {
    return bad(path, "not a llama2.c tokenizer (no valid max_token_length)");
  }
  Vocab v;
  v.tokens.reserve(static_cast<size_t>(vocab_size));
  v.scores.reserve(static_cast<size_t>(vocab_size));
  int64_t count = 0;
  while (r.remaining() > 0) {
    float score = 0;
    int32_t len = 0;
    const uint8_t* p = nullptr;
    if (!r.f32(&score) || !r.i32(&len)) {
      return bad(path, "token " + std::to_string(count) + " record is truncated at offset " +
                           std::to_string(r.pos()));
    }
    if (len < 0 || !r.bytes(static_cast<uint64_t>(len), &p)) {
      return bad(path, "token " + std::to_string(count) + " length " + std::to_string(len) +
                           " runs past end of file (" + std::to_string(r.remaining()) +
                           " bytes left)");
    }
    if (count < vocab_size) {
      v.tokens.emplace_back(reinterpret_cast<const char*>(p), static_cast<size_t>(len));
      v.scores.push_back(score);
    }
    ++count;
  }
  if (count != vocab_size) {
    return Status::invalid_argument("llama2c: " + path + ": tokenizer holds " +
                                    std::to_string(count) + " tokens but checkpoint " +
                                    checkpoint_path + " has vocab_size " +
                                    std::to_string(vocab_size));
  }
  for (size_t id = 0; id < v.tokens.size(); ++id) {
    std::string& t = v.tokens[id];
    if (t == "\n<s>\n" || t == "\n</s>\n") t = t.substr(1, t.size() - 2);
    std::string out;
    out.reserve(t.size());
    for (char ch : t) out += ch == ' ' ? std::string("\xe2\x96\x81") : std::string(1, ch);
    t = std::move(out);
    int32_t type = 1;  // normal
    if (id == 0) {
      type = 2;  // unknown
    } else if (id == 1 || id == 2) {
      type = 3;  // control
    } else if (is_byte_token(t)) {
      type = 6;  // byte
    }
    v.types.push_back(type);
  }
  return v;
}

}  // namespace

Result<GgufFile> load_llama2c(const std::string& checkpoint_path,
                              const std::string& tokenizer_path) {
  Result<MappedFile> map = MappedFile::open(checkpoint_path);
  if (!map.is_ok()) {
    return Status(map.status().code(),
                  "llama2c: " + checkpoint_path + ": " + map.status().message());
  }
  COHORT_ASSIGN_OR_RETURN(Config c, parse_header(checkpoint_path, map->data(), map->size()));
  uint64_t needed = kHeaderBytes + 4 * weight_floats(c);
  if (map->size() < needed) {
    return bad(
        checkpoint_path,
        "file is " + std::to_string(map->size()) + " bytes but its header (dim=" +
            std::to_string(c.dim) + " hidden_dim=" + std::to_string(c.hidden_dim) +
            " n_layers=" + std::to_string(c.n_layers) + " n_heads=" + std::to_string(c.n_heads) +
            " n_kv_heads=" + std::to_string(c.n_kv_heads) +
            " vocab_size=" + std::to_string(c.vocab_size) +
            " seq_len=" + std::to_string(c.seq_len) + (c.shared_classifier ? "" : " +classifier") +
            ") needs " + std::to_string(needed) + " bytes: truncated");
  }
  COHORT_ASSIGN_OR_RETURN(Vocab vocab,
                          read_tokenizer(tokenizer_path, checkpoint_path, c.vocab_size));

  GgufWriter w;
  const std::string stem = std::filesystem::path(checkpoint_path).stem().string();
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", "llama2.c " + stem);
  w.set_u32("llama.context_length", static_cast<uint32_t>(c.seq_len));
  w.set_u32("llama.embedding_length", static_cast<uint32_t>(c.dim));
  w.set_u32("llama.block_count", static_cast<uint32_t>(c.n_layers));
  w.set_u32("llama.feed_forward_length", static_cast<uint32_t>(c.hidden_dim));
  w.set_u32("llama.attention.head_count", static_cast<uint32_t>(c.n_heads));
  w.set_u32("llama.attention.head_count_kv", static_cast<uint32_t>(c.n_kv_heads));
  w.set_u32("llama.rope.dimension_count", static_cast<uint32_t>(c.head_size()));
  w.set_f32("llama.attention.layer_norm_rms_epsilon", 1e-5f);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  w.set_u32("llama.vocab_size", static_cast<uint32_t>(c.vocab_size));
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_strings("tokenizer.ggml.tokens", std::move(vocab.tokens));
  w.set_f32s("tokenizer.ggml.scores", std::move(vocab.scores));
  w.set_i32s("tokenizer.ggml.token_type", std::move(vocab.types));
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  w.set_bool("tokenizer.ggml.add_space_prefix", true);

  // Walk the checkpoint in file order; each tensor copies its slab when written.
  const uint8_t* cursor = map->data() + kHeaderBytes;
  auto take = [&cursor](int64_t floats) {
    const uint8_t* p = cursor;
    cursor += 4 * floats;
    return p;
  };
  auto add = [&w](std::string name, std::vector<int64_t> shape, const uint8_t* src) {
    w.add_tensor(std::move(name), DType::kF32, std::move(shape),
                 [src](uint8_t* dst, uint64_t n) { std::memcpy(dst, src, n); });
  };
  const int64_t dim = c.dim, hidden = c.hidden_dim, kv = c.kv_dim(), layers = c.n_layers;
  struct Kind {
    const char* suffix;
    std::vector<int64_t> shape;
    const uint8_t* first = nullptr;  // layer 0's slab; layer l follows at l * floats
    int64_t floats = 0;
  };
  std::vector<Kind> kinds = {
      {"attn_norm.weight", {dim}},        {"attn_q.weight", {dim, dim}},
      {"attn_k.weight", {dim, kv}},       {"attn_v.weight", {dim, kv}},
      {"attn_output.weight", {dim, dim}}, {"ffn_norm.weight", {dim}},
      {"ffn_gate.weight", {dim, hidden}}, {"ffn_down.weight", {hidden, dim}},
      {"ffn_up.weight", {dim, hidden}},
  };
  const uint8_t* token_embd = take(c.vocab_size * dim);
  for (Kind& k : kinds) {
    k.floats = 1;
    for (int64_t d : k.shape) k.floats *= d;
    k.first = take(k.floats * layers);
  }
  const uint8_t* output_norm = take(dim);
  take(c.seq_len * c.head_size());  // freq_cis_real + freq_cis_imag: rope is computed instead
  add("token_embd.weight", {dim, c.vocab_size}, token_embd);
  for (int64_t l = 0; l < layers; ++l) {
    for (const Kind& k : kinds) {
      add("blk." + std::to_string(l) + "." + k.suffix, k.shape, k.first + 4 * l * k.floats);
    }
  }
  add("output_norm.weight", {dim}, output_norm);
  if (!c.shared_classifier) add("output.weight", {dim, c.vocab_size}, take(c.vocab_size * dim));

  auto bytes = std::make_shared<const std::vector<uint8_t>>(w.write_memory());
  return GgufFile::from_bytes(checkpoint_path, std::move(bytes));
}

bool looks_like_llama2c(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec || size < kHeaderBytes) return false;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return false;
  char magic[4] = {};
  size_t got = std::fread(magic, 1, 4, f);
  std::fclose(f);
  return got == 4 && std::memcmp(magic, "GGUF", 4) != 0;
}

}  // namespace cohort::format
