#include "text/pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <initializer_list>

#include "core/log.h"

namespace cohort::text {
namespace {

// Patterns as the models' tokenizer.json files (or llama.cpp's step lists) give them.
constexpr std::string_view kGpt2 =
    R"re('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kLlama3 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kQwen2 =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kSeedCoder =
    R"re((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1}| ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kBailingMoe =
    R"re('(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+)re";
constexpr std::string_view kTekken =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kGpt4o =
    R"re([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";
constexpr std::string_view kPoro =
    R"re( ?[^(\s|.,!?\x{2026}\x{3002}\x{FF0C}\x{3001}\x{0964}\x{06D4}\x{060C})]+)re";
// DeepSeek's CJK runs (the range 0800-4E00 is as the original tokenizer.json has it).
constexpr std::string_view kDeepseekCjk =
    R"re([\x{4E00}-\x{9FA5}\x{0800}-\x{4E00}\x{AC00}-\x{D7FF}]+)re";
// DeepSeek LLM's cased letters (Unicode's L& list, written out in its tokenizer.json).
constexpr std::string_view kDeepseekLetters =
    R"re(\s?[\x{41}-\x{5A}\x{61}-\x{7A}\x{B5}\x{C0}-\x{D6}\x{D8}-\x{F6}\x{F8}-\x{1BA}\x{1BC}-\x{1BF}\x{1C4}-\x{293}\x{295}-\x{2AF}\x{370}-\x{373}\x{376}\x{377}\x{37B}-\x{37D}\x{37F}\x{386}\x{388}-\x{38A}\x{38C}\x{38E}-\x{3A1}\x{3A3}-\x{3F5}\x{3F7}-\x{481}\x{48A}-\x{52F}\x{531}-\x{556}\x{10A0}-\x{10C5}\x{13A0}-\x{13F5}\x{13F8}-\x{13FD}\x{1C90}-\x{1CBA}\x{1CBD}-\x{1CBF}\x{1D00}-\x{1D2B}\x{1D6B}-\x{1D77}\x{1D79}-\x{1D9A}\x{1E00}-\x{1F15}\x{1F18}-\x{1F1D}\x{1F20}-\x{1F45}\x{1F48}-\x{1F4D}\x{1F50}-\x{1F57}\x{1F59}\x{1F5B}\x{1F5D}\x{1F5F}-\x{1F7D}\x{1F80}-\x{1FB4}\x{1FB6}-\x{1FBC}\x{1FBE}\x{1FC2}-\x{1FC4}\x{1FC6}-\x{1FCC}\x{1FD0}-\x{1FD3}\x{1FD6}-\x{1FDB}\x{1FE0}-\x{1FEC}\x{1FF2}-\x{1FF4}\x{1FF6}-\x{1FFC}\x{2102}\x{2107}\x{210A}-\x{2113}\x{2115}\x{2119}-\x{211D}\x{2124}\x{2126}\x{2128}\x{212A}-\x{212D}\x{212F}-\x{2134}\x{2139}\x{213C}-\x{213F}\x{2145}-\x{2149}\x{214E}\x{2183}\x{2184}\x{2C00}-\x{2C7B}\x{2C7E}-\x{2CE4}\x{2CEB}-\x{2CEE}\x{2CF2}\x{2CF3}\x{A640}-\x{A66D}\x{A680}-\x{A69B}\x{A722}-\x{A76F}\x{A771}-\x{A787}\x{A78B}-\x{A78E}\x{AB70}-\x{ABBF}\x{FB00}-\x{FB06}\x{FB13}-\x{FB17}\x{FF21}-\x{FF3A}\x{FF41}-\x{FF5A}\x{10400}-\x{1044F}\x{104B0}-\x{104D3}\x{104D8}-\x{104FB}\x{10C80}-\x{10CB2}\x{10CC0}-\x{10CF2}\x{118A0}-\x{118DF}\x{1E900}-\x{1E943}]+)re";
constexpr std::string_view kDeepseekPunct =
    R"re(\s?[!-/:-~\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF5E}\x{2018}-\x{201F}\x{3000}-\x{3002}]+)re";
constexpr std::string_view kDeepseekV3Main =
    R"re([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)re";

struct FamilyEntry {
  PreTokenizerFamily family;
  std::vector<std::string_view> names;  // tokenizer.ggml.pre values that select it
};

// llama.cpp's table of tokenizer.ggml.pre names (src/llama-vocab.cpp) and its flags.
const std::vector<FamilyEntry>& family_table() {
  static const std::vector<FamilyEntry> table = {
      {{"default", {R"re([\p{P}\$\+<=>\^~\|]+)re", kGpt2, R"re(\p{N}+)re", "[0-9][0-9][0-9]"}},
       {"", "default"}},
      {{"llama3", {kLlama3}, true, true},
       {"llama3", "llama-v3", "llama-bpe", "falcon3", "falcon-h1", "pixtral", "midm-2.0", "lfm2"}},
      {{"dbrx", {kLlama3}}, {"dbrx", "smaug-bpe", "chatglm-bpe", "glm4"}},
      {{"deepseek-llm",
        {"[\\r\\n]", kDeepseekLetters, kDeepseekPunct, R"re(\s+$)re", kDeepseekCjk,
         R"re(\p{N}+)re"}},
       {"deepseek-llm"}},
      {{"deepseek-coder",
        {"[\\r\\n]", R"re(\s?\p{L}+)re", R"re(\s?\p{P}+)re", kDeepseekCjk, R"re(\p{N})re"}},
       {"deepseek-coder"}},
      {{"deepseek-v3",
        {R"re(\p{N}{1,3})re", R"re([\x{4E00}-\x{9FA5}\x{3040}-\x{309F}\x{30A0}-\x{30FF}]+)re",
         kDeepseekV3Main}},
       {"deepseek-v3", "hunyuan-dense"}},
      {{"falcon", {R"re([\p{P}\$\+<=>\^~\|`]+)re", kGpt2, "[0-9][0-9][0-9]"}}, {"falcon"}},
      {{"gpt2", {kGpt2}},
       {"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v2-es", "jina-v2-de",
        "jina-v1-en", "jina-v2-code", "roberta-bpe", "mpt", "olmo", "jais", "trillion", "a.x-4.0",
        "mellum"}},
      {{"starcoder", {R"re(\p{N})re", kGpt2}},
       {"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"}},
      {{"qwen2", {kQwen2}}, {"qwen2", "deepseek-r1-qwen", "stablelm2", "hunyuan", "megrez"}},
      {{"poro", {kPoro}}, {"poro-chat", "bloom", "gpt3-finnish"}},
      {{"viking", {kPoro, R"re(\p{N})re"}}, {"viking"}},
      {{"tekken", {kTekken}, true, true}, {"tekken"}},
      {{"gpt-4o", {kGpt4o}}, {"gpt-4o", "llama4", "minimax-m2"}},
      {{"seed-coder", {kSeedCoder}}, {"seed-coder"}},
      {{"bailingmoe", {kBailingMoe}}, {"bailingmoe", "llada-moe"}},
  };
  return table;
}

// \s -> [\s\x{85}] (inside a class: \s\x{85}) and \S -> [^\s\x{85}]: PCRE2's \s leaves out
// U+0085, which llama.cpp and the Rust/Python engines the patterns come from count as space.
std::string with_next_line_as_space(std::string_view p) {
  std::string out;
  out.reserve(p.size() + 16);
  bool in_class = false;
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char e = p[++i];
      if (e == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (e == 'S' && !in_class) {
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += e;
      }
      continue;
    }
    out += c;
    if (!in_class && c == '[') {
      in_class = true;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      if (i + 1 < p.size() && p[i + 1] == ']') out += p[++i];  // a leading ']' is literal
    } else if (in_class && c == ']') {
      in_class = false;
    }
  }
  return out;
}

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buf{};
  if (pcre2_get_error_message(code, buf.data(), buf.size()) < 0) {
    return "PCRE2 error " + std::to_string(code);
  }
  return std::string(reinterpret_cast<const char*>(buf.data()));
}

struct Span {
  size_t off;
  size_t len;
  bool opaque;  // an invalid byte: no pattern sees it
};

}  // namespace

namespace utf8 {

size_t valid_sequence_length(std::string_view s) {
  const auto b0 = static_cast<uint8_t>(s[0]);
  if (b0 < 0x80) return 1;
  size_t n;
  uint8_t lo = 0x80;  // allowed range of the second byte (excludes overlongs, surrogates)
  uint8_t hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (s.size() < n) return 0;
  const auto b1 = static_cast<uint8_t>(s[1]);
  if (b1 < lo || b1 > hi) return 0;
  for (size_t k = 2; k < n; ++k) {
    if ((static_cast<uint8_t>(s[k]) & 0xC0) != 0x80) return 0;
  }
  return n;
}

}  // namespace utf8

struct PreTokenizer::Regex {
  pcre2_code* code = nullptr;
  ~Regex() { pcre2_code_free(code); }
};

PreTokenizer::PreTokenizer() = default;
PreTokenizer::~PreTokenizer() = default;

const PreTokenizerFamily* find_pre_tokenizer_family(std::string_view pre) {
  for (const FamilyEntry& e : family_table()) {
    for (std::string_view n : e.names) {
      if (n == pre) return &e.family;
    }
  }
  return nullptr;
}

Result<std::unique_ptr<PreTokenizer>> PreTokenizer::for_name(std::string_view pre,
                                                             std::string_view context) {
  const PreTokenizerFamily* f = find_pre_tokenizer_family(pre);
  if (f == nullptr) {
    COHORT_LOG_WARN(
        "tokenizer: %.*s: unknown pre-tokenizer '%.*s' (tokenizer.ggml.pre); using the default "
        "split, so tokens may differ from the model's own tokenizer",
        static_cast<int>(context.size()), context.data(), static_cast<int>(pre.size()), pre.data());
    f = find_pre_tokenizer_family("default");
  } else if (pre.empty()) {
    COHORT_LOG_WARN("tokenizer: %.*s: no tokenizer.ggml.pre key; using the default split",
                    static_cast<int>(context.size()), context.data());
  }
  COHORT_ASSIGN_OR_RETURN(std::unique_ptr<PreTokenizer> p,
                          from_patterns(std::string(f->name), f->patterns));
  p->ignore_merges_ = f->ignore_merges;
  p->add_bos_ = f->add_bos;
  return p;
}

Result<std::unique_ptr<PreTokenizer>> PreTokenizer::from_patterns(
    std::string name, const std::vector<std::string_view>& patterns) {
  std::unique_ptr<PreTokenizer> p(new PreTokenizer());
  p->name_ = std::move(name);
  for (std::string_view raw : patterns) {
    const std::string pattern = with_next_line_as_space(raw);
    int err = 0;
    PCRE2_SIZE err_off = 0;
    auto r = std::make_unique<Regex>();
    r->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                            PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &err, &err_off, nullptr);
    if (r->code == nullptr) {
      return Status::invalid_argument("tokenizer: pre-tokenizer '" + p->name_ + "': pattern '" +
                                      std::string(raw) + "' does not compile at offset " +
                                      std::to_string(err_off) + ": " + pcre2_message(err));
    }
    // JIT is an optimisation only: without it (no JIT support, W^X memory) matching
    // still works through the interpreter.
    (void)pcre2_jit_compile(r->code, PCRE2_JIT_COMPLETE);
    p->regexes_.push_back(std::move(r));
  }
  return p;
}

std::vector<std::string_view> PreTokenizer::split(std::string_view text) const {
  std::vector<Span> spans;
  // Valid UTF-8 runs and single invalid bytes.
  for (size_t i = 0; i < text.size();) {
    const size_t start = i;
    while (i < text.size()) {
      const size_t n = utf8::valid_sequence_length(text.substr(i));
      if (n == 0) break;
      i += n;
    }
    if (i > start) spans.push_back({start, i - start, false});
    if (i < text.size()) spans.push_back({i++, 1, true});
  }

  std::vector<Span> next;
  for (const std::unique_ptr<Regex>& re : regexes_) {
    pcre2_match_data* md = pcre2_match_data_create_from_pattern(re->code, nullptr);
    if (md == nullptr) break;  // out of memory: keep the pieces split so far
    next.clear();
    for (const Span& s : spans) {
      if (s.opaque) {
        next.push_back(s);
        continue;
      }
      const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data() + s.off);
      size_t pos = 0;
      size_t done = 0;  // end of the last match: [done, match start) is a gap
      while (pos < s.len) {
        int rc = pcre2_match(re->code, subject, s.len, pos, PCRE2_NO_UTF_CHECK, md, nullptr);
        if (rc < 0 && rc != PCRE2_ERROR_NOMATCH) {
          // JIT stack or match limit: retry with the interpreter, else leave the rest whole.
          rc = pcre2_match(re->code, subject, s.len, pos, PCRE2_NO_UTF_CHECK | PCRE2_NO_JIT, md,
                           nullptr);
        }
        if (rc < 0) break;
        const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
        const size_t m0 = ov[0];
        const size_t m1 = ov[1];
        if (m0 < pos || m1 < m0 || m1 > s.len) break;  // cannot happen; never loop on it
        if (m1 == m0) {  // empty match: step over one character, which stays in the gap
          if (m0 >= s.len) break;
          pos = m0 +
                std::max<size_t>(1, utf8::valid_sequence_length(std::string_view(
                                        reinterpret_cast<const char*>(subject) + m0, s.len - m0)));
          continue;
        }
        if (m0 > done) next.push_back({s.off + done, m0 - done, false});
        next.push_back({s.off + m0, m1 - m0, false});
        done = pos = m1;
      }
      if (done < s.len) next.push_back({s.off + done, s.len - done, false});
    }
    pcre2_match_data_free(md);
    spans.swap(next);
  }

  std::vector<std::string_view> out;
  out.reserve(spans.size());
  for (const Span& s : spans) out.push_back(text.substr(s.off, s.len));
  return out;
}

}  // namespace cohort::text
