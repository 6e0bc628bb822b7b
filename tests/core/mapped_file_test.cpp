// MappedFile: a mapped file and a copy in huge-page memory hold the same bytes; the copy is
// read-only like the map; errors are reported, not thrown.
#include "core/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace cohort {
namespace {

std::string temp_file_with(const std::vector<uint8_t>& bytes) {
  const std::string path =
      testing::TempDir() + "mapped_file_test_" + std::to_string(::getpid()) + ".bin";
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()),
             static_cast<std::streamsize>(bytes.size()));
  return path;
}

TEST(MappedFile, HugePageCopyHoldsTheFileBytes) {
  // Not a multiple of the page or huge-page size, larger than one huge page.
  std::vector<uint8_t> bytes((size_t{5} << 20) + 12345);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 2654435761u >> 13);
  const std::string path = temp_file_with(bytes);
  for (bool huge : {false, true}) {
    Result<MappedFile> f = MappedFile::open(path, huge);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    EXPECT_EQ(f->copied(), huge);
    ASSERT_EQ(f->size(), bytes.size());
    EXPECT_EQ(std::memcmp(f->data(), bytes.data(), bytes.size()), 0) << "huge " << huge;
    // Moving keeps the bytes and leaves the source empty.
    MappedFile moved = std::move(f).value();
    EXPECT_EQ(moved.data()[bytes.size() - 1], bytes.back());
  }
  std::remove(path.c_str());
}

// The permissions of the mapping that holds addr, from /proc/self/maps ("r--p", ...).
std::string permissions_at(const void* addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  const auto a = reinterpret_cast<uintptr_t>(addr);
  while (std::getline(maps, line)) {
    unsigned long lo = 0, hi = 0;
    char perms[8] = {};
    if (std::sscanf(line.c_str(), "%lx-%lx %7s", &lo, &hi, perms) == 3 && lo <= a && a < hi) {
      return perms;
    }
  }
  return "";
}

TEST(MappedFile, HugePageCopyIsReadOnly) {
  const std::string path = temp_file_with(std::vector<uint8_t>(4096 * 3, 7));
  Result<MappedFile> f = MappedFile::open(path, true);
  ASSERT_TRUE(f.is_ok()) << f.status().to_string();
  EXPECT_EQ(f->data()[4096 * 3 - 1], 7);
  EXPECT_EQ(permissions_at(f->data()).substr(0, 3), "r--");
  std::remove(path.c_str());
}

TEST(MappedFile, MissingFileIsAnError) {
  for (bool huge : {false, true}) {
    Result<MappedFile> f = MappedFile::open("/nonexistent/cohort/model.gguf", huge);
    ASSERT_FALSE(f.is_ok());
    EXPECT_NE(f.status().message().find("cannot open"), std::string::npos);
  }
}

TEST(MappedFile, EmptyFileHasNoData) {
  const std::string path = temp_file_with({});
  for (bool huge : {false, true}) {
    Result<MappedFile> f = MappedFile::open(path, huge);
    ASSERT_TRUE(f.is_ok());
    EXPECT_EQ(f->size(), 0u);
    EXPECT_EQ(f->data(), nullptr);
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace cohort
