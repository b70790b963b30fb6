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

}  // namespace

std::span<const ApiInfo> all_apis() { return kApis; }

const ApiInfo* find_api(int16_t key) {
  const auto it = std::ranges::lower_bound(kApis, static_cast<ApiKey>(key), {}, &ApiInfo::key);
  return it != kApis.end() && it->key == static_cast<ApiKey>(key) ? &*it : nullptr;
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
