#include "text/special_split.h"

namespace cohort::text {
namespace {

bool is_c_space(char c) {  // C-locale isspace, without the locale lookup
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

}  // namespace

std::vector<TextFragment> split_special_tokens(std::string_view text, bool parse_special,
                                               const std::vector<int32_t>& special_ids,
                                               const std::vector<std::string>& pieces,
                                               const std::vector<TokenType>& types,
                                               const std::vector<uint8_t>* rstrip) {
  std::vector<TextFragment> frags{{-1, 0, text.size()}};
  std::vector<TextFragment> next;
  for (const int32_t sid : special_ids) {
    const TokenType type = types[sid];
    if (!parse_special && (type == TokenType::kControl || type == TokenType::kUnknown)) continue;
    const std::string_view sp = pieces[sid];
    next.clear();
    for (const TextFragment& f : frags) {
      if (f.id >= 0) {
        next.push_back(f);
        continue;
      }
      size_t off = f.off;
      size_t len = f.len;
      while (len > 0) {
        const size_t pos = text.substr(off, len).find(sp);
        if (pos == std::string_view::npos) {
          next.push_back({-1, off, len});
          break;
        }
        if (pos > 0) next.push_back({-1, off, pos});
        next.push_back({sid, 0, 0});
        off += pos + sp.size();
        len -= pos + sp.size();
        if (rstrip && (*rstrip)[sid]) {
          while (len > 0 && is_c_space(text[off])) {
            ++off;
            --len;
          }
        }
      }
    }
    frags.swap(next);
  }
  return frags;
}

}  // namespace cohort::text
