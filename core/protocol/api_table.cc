#include "core/protocol/api_table.h"

#include <algorithm>
#include <array>

#include "core/base/assert.h"

namespace sluice::protocol {
namespace {

constexpr std::array kApis = {
#define SLUICE_KAFKA_API_INFO(name, key, min, max, flexible_from) \
  ApiInfo{ApiKey::k##name, #name, (min), (max), (flexible_from)},
    SLUICE_KAFKA_APIS(SLUICE_KAFKA_API_INFO)
#undef SLUICE_KAFKA_API_INFO
};

static_assert(std::ranges::is_sorted(kApis, {}, &ApiInfo::key), "keep SLUICE_KAFKA_APIS ordered by key");

// Every request and response looks its API up several times (header versions, flexible encodings): an index by
// key answers at once, where a binary search cost 1 % of a simulated run.
constexpr int16_t kKeyLimit = static_cast<int16_t>(kApis.back().key) + 1;
constexpr std::array<int8_t, kKeyLimit> kIndexByKey = [] {
  std::array<int8_t, kKeyLimit> index{};
  index.fill(-1);
  for (size_t i = 0; i < kApis.size(); ++i) index[static_cast<size_t>(kApis[i].key)] = static_cast<int8_t>(i);
  return index;
}();
static_assert(kApis.size() <= 127, "kIndexByKey holds int8_t positions");

}  // namespace

std::span<const ApiInfo> all_apis() { return kApis; }

const ApiInfo* find_api(int16_t key) {
  if (key < 0 || key >= kKeyLimit) return nullptr;
  const int8_t at = kIndexByKey[static_cast<size_t>(key)];
  return at < 0 ? nullptr : &kApis[static_cast<size_t>(at)];
}

const ApiInfo& api_info(ApiKey key) {
  const ApiInfo* info = find_api(static_cast<int16_t>(key));
  SLUICE_ASSERT(info != nullptr);  // every ApiKey enumerator comes from the table
  return *info;
}

std::string_view api_name(ApiKey key) { return api_info(key).name; }
bool is_flexible(ApiKey key, int16_t version) { return api_info(key).flexible(version); }
bool is_supported(ApiKey key, int16_t version) { return api_info(key).supports(version); }

}  // namespace sluice::protocol
