// Seeds of batch_fuzzer and loader_fuzzer (storage_seeds.cc): named inputs, written by seed_corpus.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/base/bytes.h"

namespace sluice::fuzz {

std::vector<std::pair<std::string, Bytes>> batch_seeds();
std::vector<std::pair<std::string, Bytes>> loader_seeds();

}  // namespace sluice::fuzz
