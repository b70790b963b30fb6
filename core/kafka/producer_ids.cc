#include "core/kafka/producer_ids.h"

#include <fmt/format.h>

#include <charconv>
#include <string_view>

#include "core/base/assert.h"
#include "core/storage/log_format.h"

namespace sluice::kafka {

ProducerIdManager::ProducerIdManager(Env env, std::string data_dir)
    : env_(env), data_dir_(std::move(data_dir)), ids_mutex_(env.scheduler) {}

ProducerIdManager::ProducerIdManager(Env env, BlockSource source)
    : env_(env), source_(std::move(source)), ids_mutex_(env.scheduler), ids_loaded_(true) {
  SLUICE_ASSERT(source_ != nullptr);
}

Status ProducerIdManager::load_id_block() {
  const std::string path = join_path(data_dir_, kProducerIdBlockFile);
  Result<std::unique_ptr<File>> file = env_.fs.open(path, OpenMode::kRead);
  if (!file.ok() && file.status().code() == Code::kNotFound) return Status();
  SLUICE_TRY(file.status());
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes, storage::read_whole_file(**file));
  SLUICE_TRY((*file)->close());
  // "0\n<first id of the next block>\n": a version line, then the end of the last reserved block.
  const std::string_view text = as_chars(bytes);
  int64_t end = -1;
  const bool versioned = text.starts_with("0\n") && text.ends_with("\n");
  const std::string_view number = versioned ? text.substr(2, text.size() - 3) : std::string_view();
  auto [stop, ec] = std::from_chars(number.data(), number.data() + number.size(), end);
  if (!versioned || ec != std::errc() || stop != number.data() + number.size() || end < 0) {
    return corruption(fmt::format("{}: expected \"0\\n<next producer id>\\n\"", path));
  }
  next_id_ = block_end_ = end;
  return Status();
}

Result<int64_t> ProducerIdManager::allocate_producer_id() {
  LockGuard lock(ids_mutex_);
  if (!ids_loaded_) {
    SLUICE_TRY(load_id_block());
    ids_loaded_ = true;
  }
  if (next_id_ >= block_end_ && source_ != nullptr) {
    SLUICE_ASSIGN_OR_RETURN(auto block, source_());
    SLUICE_ASSERT(block.first >= block_end_);  // blocks only move forward
    SLUICE_ASSERT(block.second > block.first);
    next_id_ = block.first;
    block_end_ = block.second;
  }
  if (next_id_ >= block_end_) {
    const int64_t end = next_id_ + kProducerIdBlockSize;
    const std::string path = join_path(data_dir_, kProducerIdBlockFile);
    SLUICE_TRY(write_file_atomically(env_.fs, path, path + ".tmp", as_bytes(fmt::format("0\n{}\n", end))));
    block_end_ = end;
  }
  return next_id_++;
}

}  // namespace sluice::kafka
