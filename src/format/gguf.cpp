// GGUF reader. Every count read from the file is checked against the bytes that remain
// before anything is allocated for it, so a hostile header cannot make us allocate more than
// a small multiple of the file's own size.
#include "format/gguf.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <utility>

#include "format/byte_reader.h"

namespace cohort::format {
namespace {

constexpr uint64_t kDefaultAlignment = 32;
// Smallest possible encodings, used to bound counts before allocating.
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;                  // empty key, type, 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // empty name, 1 dim
constexpr uint64_t kMinStringBytes = 8;
constexpr uint64_t kMinArrayBytes = 4 + 8;
constexpr uint32_t kMaxDims = 4;

bool valid_type(uint32_t type) { return type <= static_cast<uint32_t>(GgufType::kF64); }

// Untrusted text made safe for a one-line message: escaped and cut short.
std::string printable(std::string_view s) {
  constexpr size_t kMax = 64;
  std::string out;
  for (size_t i = 0; i < s.size() && i < kMax; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c >= 0x7f || c == '\'' || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (s.size() > kMax) out += "...";
  return out;
}

class Parser {
 public:
  Parser(const std::string& name, const uint8_t* data, uint64_t size)
      : name_(name), r_(data, size) {}

  ByteReader& reader() { return r_; }

  Status fail(const std::string& what) const {
    return Status::corrupt("gguf: " + name_ + ": " + what);
  }
  Status truncated(const std::string& what, uint64_t need) const {
    return fail("truncated: " + what + " needs " + std::to_string(need) + " bytes at offset " +
                std::to_string(r_.pos()) + ", only " + std::to_string(r_.remaining()) + " remain");
  }

  Status u32(uint32_t* v, const std::string& what) {
    return r_.u32(v) ? Status::ok() : truncated(what, 4);
  }
  Status u64(uint64_t* v, const std::string& what) {
    return r_.u64(v) ? Status::ok() : truncated(what, 8);
  }

  // A string; index >= 0 names the array element it is, for messages only.
  Status string(std::string_view* out, const std::string& what, int64_t index = -1) {
    uint64_t len = 0;
    if (!r_.u64(&len)) return truncated(element(what, "string", index) + " length", 8);
    const uint8_t* p = nullptr;
    if (!r_.bytes(len, &p)) {
      return fail(element(what, "string", index) + " length " + std::to_string(len) +
                  " at offset " + std::to_string(r_.pos() - 8) + " exceeds the " +
                  std::to_string(r_.remaining()) + " bytes that remain");
    }
    *out = std::string_view(reinterpret_cast<const char*>(p), len);
    return Status::ok();
  }

  // A value of the given (already validated) type; depth counts enclosing arrays.
  Status value(uint32_t type, GgufValue* out, uint32_t depth, const std::string& what,
               int64_t index = -1) {
    out->type = static_cast<GgufType>(type);
    const uint8_t* p = nullptr;
    switch (out->type) {
      case GgufType::kString:
        return string(&out->str, what, index);
      case GgufType::kArray:
        return array(out, depth + 1, index < 0 ? what : element(what, "array", index));
      default:
        break;
    }
    uint64_t n = gguf_scalar_bytes(static_cast<GgufType>(type));
    if (!r_.bytes(n, &p)) return truncated(what, n);
    switch (out->type) {
      case GgufType::kU8:
        out->u = p[0];
        break;
      case GgufType::kBool:
        out->u = p[0] != 0;
        break;
      case GgufType::kI8:
        out->i = static_cast<int8_t>(p[0]);
        break;
      case GgufType::kU16:
        out->u = load_u16le(p);
        break;
      case GgufType::kI16:
        out->i = static_cast<int16_t>(load_u16le(p));
        break;
      case GgufType::kU32:
        out->u = load_u32le(p);
        break;
      case GgufType::kI32:
        out->i = static_cast<int32_t>(load_u32le(p));
        break;
      case GgufType::kF32:
        out->f = load_f32le(p);
        break;
      case GgufType::kU64:
        out->u = load_u64le(p);
        break;
      case GgufType::kI64:
        out->i = static_cast<int64_t>(load_u64le(p));
        break;
      case GgufType::kF64:
        out->f = load_f64le(p);
        break;
      default:
        break;
    }
    return Status::ok();
  }

 private:
  Status array(GgufValue* out, uint32_t depth, const std::string& what) {
    if (depth > kGgufMaxArrayDepth) {
      return fail(what + ": arrays nested more than " + std::to_string(kGgufMaxArrayDepth) +
                  " deep");
    }
    uint32_t elem = 0;
    uint64_t count = 0;
    COHORT_RETURN_IF_ERROR(u32(&elem, what + " array element type"));
    if (!valid_type(elem)) {
      return fail(what + ": unknown array element type " + std::to_string(elem));
    }
    COHORT_RETURN_IF_ERROR(u64(&count, what + " array count"));
    auto arr = std::make_shared<GgufArray>();
    arr->elem_type = static_cast<GgufType>(elem);
    arr->count = count;
    uint64_t min_bytes = gguf_scalar_bytes(static_cast<GgufType>(elem));
    if (elem == static_cast<uint32_t>(GgufType::kString)) min_bytes = kMinStringBytes;
    if (elem == static_cast<uint32_t>(GgufType::kArray)) min_bytes = kMinArrayBytes;
    if (count > r_.remaining() / min_bytes) {
      return fail(what + ": array of " + std::to_string(count) + " " +
                  gguf_type_name(arr->elem_type) + " needs at least " + std::to_string(min_bytes) +
                  " bytes each, only " + std::to_string(r_.remaining()) + " remain");
    }
    if (arr->elem_type == GgufType::kString) {
      arr->strings.resize(count);
      for (uint64_t k = 0; k < count; ++k) {
        COHORT_RETURN_IF_ERROR(string(&arr->strings[k], what, static_cast<int64_t>(k)));
      }
    } else if (arr->elem_type == GgufType::kArray) {
      arr->arrays.resize(count);
      for (uint64_t k = 0; k < count; ++k) {
        COHORT_RETURN_IF_ERROR(value(elem, &arr->arrays[k], depth, what, static_cast<int64_t>(k)));
      }
    } else {
      arr->raw = r_.cursor();
      COHORT_CHECK(r_.skip(count * min_bytes));
    }
    out->arr = std::move(arr);
    return Status::ok();
  }

  static std::string element(const std::string& what, const char* kind, int64_t index) {
    if (index < 0) return what;
    return what + " " + kind + " " + std::to_string(index);
  }

  const std::string& name_;
  ByteReader r_;
};

}  // namespace

Result<GgufFile> GgufFile::open(const std::string& path, bool huge_pages) {
  Result<MappedFile> map = MappedFile::open(path, huge_pages);
  if (!map.is_ok()) {
    return Status(map.status().code(), "gguf: " + path + ": " + map.status().message());
  }
  GgufFile f;
  f.name_ = path;
  f.map_ = std::move(map).value();
  f.data_ = f.map_.data();
  f.size_ = f.map_.size();
  COHORT_RETURN_IF_ERROR(f.parse());
  return f;
}

Result<GgufFile> GgufFile::from_bytes(std::string name,
                                      std::shared_ptr<const std::vector<uint8_t>> bytes) {
  if (!bytes) return Status::invalid_argument("gguf: " + name + ": no bytes given");
  GgufFile f;
  f.name_ = std::move(name);
  f.mem_ = std::move(bytes);
  f.data_ = f.mem_->data();
  f.size_ = f.mem_->size();
  COHORT_RETURN_IF_ERROR(f.parse());
  return f;
}

Status GgufFile::parse() {
  Parser p(name_, data_, size_);
  ByteReader& r = p.reader();

  const uint8_t* magic = nullptr;
  if (!r.bytes(4, &magic)) {
    return p.fail("file is " + std::to_string(size_) + " bytes, too small to be GGUF");
  }
  if (std::string_view(reinterpret_cast<const char*>(magic), 4) != "GGUF") {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "not a GGUF file (magic bytes %02x %02x %02x %02x)", magic[0],
                  magic[1], magic[2], magic[3]);
    return p.fail(buf);
  }
  COHORT_RETURN_IF_ERROR(p.u32(&version_, "version"));
  if (version_ != 2 && version_ != 3) {
    return Status::unsupported("gguf: " + name_ + ": GGUF version " + std::to_string(version_) +
                               " is not supported (only 2 and 3)");
  }
  uint64_t n_tensors = 0;
  uint64_t n_kv = 0;
  COHORT_RETURN_IF_ERROR(p.u64(&n_tensors, "tensor count"));
  COHORT_RETURN_IF_ERROR(p.u64(&n_kv, "metadata count"));
  if (n_kv > r.remaining() / kMinKvBytes) {
    return p.fail("metadata count " + std::to_string(n_kv) + " cannot fit in the " +
                  std::to_string(r.remaining()) + " bytes that remain");
  }
  if (n_tensors > (r.remaining() - n_kv * kMinKvBytes) / kMinTensorInfoBytes) {
    return p.fail("tensor count " + std::to_string(n_tensors) + " cannot fit in the " +
                  std::to_string(r.remaining()) + " bytes that remain");
  }

  kv_.resize(n_kv);
  kv_index_.reserve(n_kv);
  for (uint64_t k = 0; k < n_kv; ++k) {
    GgufKeyValue& kv = kv_[k];
    std::string what = "metadata key " + std::to_string(k);
    COHORT_RETURN_IF_ERROR(p.string(&kv.key, what));
    what += " '" + printable(kv.key) + "'";
    uint32_t type = 0;
    COHORT_RETURN_IF_ERROR(p.u32(&type, what + " type"));
    if (!valid_type(type)) return p.fail(what + ": unknown value type " + std::to_string(type));
    COHORT_RETURN_IF_ERROR(p.value(type, &kv.value, 0, what));
    if (!kv_index_.emplace(kv.key, k).second) return p.fail("duplicate " + what);
  }

  alignment_ = kDefaultAlignment;
  if (const GgufValue* a = find("general.alignment")) {
    if (a->type != GgufType::kU32) {
      return p.fail(std::string("general.alignment has type ") + gguf_type_name(a->type) +
                    ", expected u32");
    }
    if (a->u == 0 || (a->u & (a->u - 1)) != 0) {
      return p.fail("general.alignment " + std::to_string(a->u) + " is not a nonzero power of two");
    }
    alignment_ = a->u;
  }

  if (n_tensors > r.remaining() / kMinTensorInfoBytes) {
    return p.fail("tensor count " + std::to_string(n_tensors) + " cannot fit in the " +
                  std::to_string(r.remaining()) + " bytes that remain");
  }
  tensors_.resize(n_tensors);
  tensor_index_.reserve(n_tensors);
  for (uint64_t k = 0; k < n_tensors; ++k) {
    GgufTensorInfo& t = tensors_[k];
    std::string what = "tensor " + std::to_string(k);
    COHORT_RETURN_IF_ERROR(p.string(&t.name, what + " name"));
    what = "tensor '" + printable(t.name) + "'";
    uint32_t n_dims = 0;
    COHORT_RETURN_IF_ERROR(p.u32(&n_dims, what + " dimension count"));
    if (n_dims < 1 || n_dims > kMaxDims) {
      return p.fail(what + " has " + std::to_string(n_dims) + " dimensions (must be 1.." +
                    std::to_string(kMaxDims) + ")");
    }
    t.shape.resize(n_dims);
    int64_t n = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t dim = 0;
      COHORT_RETURN_IF_ERROR(p.u64(&dim, what + " dimension " + std::to_string(d)));
      if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return p.fail(what + " dimension " + std::to_string(d) + " is negative (" +
                      std::to_string(static_cast<int64_t>(dim)) + ")");
      }
      t.shape[d] = static_cast<int64_t>(dim);
      if (__builtin_mul_overflow(n, t.shape[d], &n)) {
        return p.fail(what + " element count overflows (dimension " + std::to_string(d) + " is " +
                      std::to_string(dim) + ")");
      }
    }
    uint32_t type_id = 0;
    COHORT_RETURN_IF_ERROR(p.u32(&type_id, what + " type"));
    std::optional<DTypeInfo> info = dtype_info(type_id);
    if (!info) return p.fail(what + " has unknown ggml type id " + std::to_string(type_id));
    t.type = static_cast<DType>(type_id);
    if (t.shape[0] % info->block_elems != 0) {
      return p.fail(what + " row length " + std::to_string(t.shape[0]) +
                    " is not a multiple of the " + std::string(info->name) + " block size " +
                    std::to_string(info->block_elems));
    }
    uint64_t blocks = static_cast<uint64_t>(n) / info->block_elems;
    if (__builtin_mul_overflow(blocks, uint64_t{info->block_bytes}, &t.bytes)) {
      return p.fail(what + " byte size overflows (" + std::to_string(n) + " elements)");
    }
    COHORT_RETURN_IF_ERROR(p.u64(&t.offset, what + " offset"));
    if (t.offset % alignment_ != 0) {
      return p.fail(what + " offset " + std::to_string(t.offset) + " is not a multiple of the " +
                    "alignment " + std::to_string(alignment_));
    }
    if (!tensor_index_.emplace(t.name, k).second) return p.fail("duplicate " + what);
  }

  // The data section starts at the next multiple of the alignment.
  uint64_t pos = r.pos();
  data_offset_ = pos + (alignment_ - pos % alignment_) % alignment_;
  uint64_t data_bytes = data_offset_ <= size_ ? size_ - data_offset_ : 0;
  for (const GgufTensorInfo& t : tensors_) {
    uint64_t end = 0;
    if (data_offset_ > size_ || __builtin_add_overflow(t.offset, t.bytes, &end) ||
        end > data_bytes) {
      return p.fail("tensor '" + printable(t.name) + "' data [" + std::to_string(t.offset) + ", +" +
                    std::to_string(t.bytes) + ") at file offset " + std::to_string(data_offset_) +
                    " runs past end of file (" + std::to_string(size_) + " bytes)");
    }
  }
  std::vector<const GgufTensorInfo*> by_offset;
  by_offset.reserve(tensors_.size());
  for (const GgufTensorInfo& t : tensors_) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const GgufTensorInfo* a, const GgufTensorInfo* b) { return a->offset < b->offset; });
  for (size_t k = 1; k < by_offset.size(); ++k) {
    const GgufTensorInfo& a = *by_offset[k - 1];
    const GgufTensorInfo& b = *by_offset[k];
    if (a.offset + a.bytes > b.offset) {
      return p.fail("tensor '" + printable(a.name) + "' data [" + std::to_string(a.offset) + ", " +
                    std::to_string(a.offset + a.bytes) + ") overlaps tensor '" + printable(b.name) +
                    "' at " + std::to_string(b.offset));
    }
  }
  return Status::ok();
}

const GgufValue* GgufFile::find(std::string_view key) const {
  auto it = kv_index_.find(key);
  return it == kv_index_.end() ? nullptr : &kv_[it->second].value;
}

std::optional<int64_t> GgufFile::get_int(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? v->as_int() : std::nullopt;
}

std::optional<double> GgufFile::get_float(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? v->as_float() : std::nullopt;
}

std::optional<bool> GgufFile::get_bool(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? v->as_bool() : std::nullopt;
}

std::optional<std::string_view> GgufFile::get_string(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? v->as_string() : std::nullopt;
}

const GgufArray* GgufFile::get_array(std::string_view key) const {
  const GgufValue* v = find(key);
  return v ? v->as_array() : nullptr;
}

const GgufTensorInfo* GgufFile::find_tensor(std::string_view name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

}  // namespace cohort::format
