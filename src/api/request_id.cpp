#include "api/request_id.h"

#include <chrono>
#include <random>

namespace cohort::api {

std::string random_id(std::string_view prefix) {
  static constexpr char kAlphabet[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  thread_local std::mt19937_64 gen{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, sizeof(kAlphabet) - 2);
  std::string id(prefix);
  for (int i = 0; i < 24; ++i) id += kAlphabet[pick(gen)];
  return id;
}

int64_t unix_time_s() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace cohort::api
