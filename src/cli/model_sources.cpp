#include "cli/model_sources.h"

#include <algorithm>
#include <filesystem>
#include <set>
#include <system_error>

namespace cohort::cli {
namespace {

namespace fs = std::filesystem;

runtime::ModelSource source_of(const fs::path& path) {
  runtime::ModelSource s;
  s.name = path.filename().string();
  s.path = path.string();
  std::error_code ec;
  const uintmax_t bytes = fs::file_size(path, ec);
  s.file_bytes = ec ? 0 : static_cast<uint64_t>(bytes);
  return s;
}

}  // namespace

Result<std::vector<runtime::ModelSource>> find_model_sources(
    const std::string& models_dir, const std::vector<std::string>& files) {
  std::vector<runtime::ModelSource> out;
  if (!models_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(models_dir, ec)) {
      return Status::not_found("serve: --models-dir " + models_dir + " is not a directory");
    }
    for (fs::directory_iterator it(models_dir, ec); !ec && it != fs::directory_iterator();
         it.increment(ec)) {
      std::error_code kind_ec;  // a dangling link: skipped
      const fs::path& p = it->path();
      if (p.extension() == ".gguf" && fs::is_regular_file(p, kind_ec)) out.push_back(source_of(p));
    }
    if (ec) return Status::io_error("serve: cannot read " + models_dir + ": " + ec.message());
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  }
  for (const std::string& f : files) {
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) return Status::not_found("serve: no model file at " + f);
    out.push_back(source_of(f));
  }
  if (out.empty()) {
    return Status::not_found("serve: no models: " + models_dir + " holds no .gguf file");
  }
  std::set<std::string> names;
  for (const runtime::ModelSource& s : out) {
    if (!names.insert(s.name).second) {
      return Status::invalid_argument("serve: two models are named " + s.name);
    }
  }
  return out;
}

}  // namespace cohort::cli
