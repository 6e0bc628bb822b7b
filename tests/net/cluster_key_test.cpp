#include "net/cluster_key.h"

#include <gtest/gtest.h>

#include <fstream>

#include "support/temp_dir.h"

namespace cohort::net {
namespace {

TEST(ClusterKey, HexRoundTrip) {
  const ClusterKey k = generate_cluster_key();
  const std::string hex = key_to_hex(k);
  EXPECT_EQ(hex.size(), 64u);
  auto back = key_from_hex(hex);
  ASSERT_TRUE(back.is_ok()) << back.status().message();
  EXPECT_EQ(back->bytes, k.bytes);
  std::string upper = hex;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  auto back2 = key_from_hex(upper);
  ASSERT_TRUE(back2.is_ok());
  EXPECT_EQ(back2->bytes, k.bytes);
  EXPECT_NE(generate_cluster_key().bytes, k.bytes);
}

TEST(ClusterKey, BadHexRejectedWithoutEchoingIt) {
  const std::string good = key_to_hex(generate_cluster_key());
  std::string bad_char = good;
  bad_char[10] = 'g';
  for (const std::string& s :
       {std::string(""), good.substr(0, 63), good + "0", bad_char, std::string(64, ' ')}) {
    auto r = key_from_hex(s);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("key: ", 0), 0u);
    if (s.size() > 8) {
      EXPECT_EQ(r.status().message().find(s.substr(0, 8)), std::string::npos);
    }
  }
}

TEST(ClusterKey, KeyFileWithTrailingNewline) {
  testing::TempDir dir;
  const ClusterKey k = generate_cluster_key();
  const std::string path = dir.file("cluster.key");
  ASSERT_TRUE(save_key_file(path, k).is_ok());
  EXPECT_FALSE(save_key_file(path, k).is_ok());  // never overwrites
  auto loaded = load_key_file(path);
  ASSERT_TRUE(loaded.is_ok()) << loaded.status().message();
  EXPECT_EQ(loaded->bytes, k.bytes);

  const std::string hand = dir.file("hand.key");
  std::ofstream(hand) << "  " << key_to_hex(k) << "\r\n\n";
  auto loaded2 = load_key_file(hand);
  ASSERT_TRUE(loaded2.is_ok()) << loaded2.status().message();
  EXPECT_EQ(loaded2->bytes, k.bytes);
}

TEST(ClusterKey, KeyFileErrorsNameThePathNotTheKey) {
  testing::TempDir dir;
  auto missing = load_key_file(dir.file("nope.key"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("nope.key"), std::string::npos);

  const std::string hex = key_to_hex(generate_cluster_key());
  const std::string path = dir.file("short.key");
  std::ofstream(path) << hex.substr(0, 40) << "\n";
  auto bad = load_key_file(path);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bad.status().message().find(hex.substr(0, 8)), std::string::npos);

  const std::string big = dir.file("big.key");
  std::ofstream(big) << std::string(10000, 'a');
  EXPECT_FALSE(load_key_file(big).is_ok());
}

}  // namespace
}  // namespace cohort::net
