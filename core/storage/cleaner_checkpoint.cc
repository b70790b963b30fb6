#include "core/storage/cleaner_checkpoint.h"

#include <charconv>
#include <vector>

#include <fmt/format.h>

#include "core/storage/log_format.h"

namespace sluice::storage {
namespace {

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  while (!text.empty()) {
    const size_t end = text.find(separator);
    parts.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return parts;
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

Status bad_line(size_t line, std::string_view why) {
  return corruption(fmt::format("{} line {}: {}", kCleanerCheckpointFile, line + 1, why));
}

}  // namespace

std::string encode_cleaner_checkpoints(const CleanerCheckpoints& checkpoints) {
  std::string text = fmt::format("0\n{}\n", checkpoints.size());
  for (const auto& [tp, offset] : checkpoints) text += fmt::format("{} {} {}\n", tp.topic, tp.partition, offset);
  return text;
}

Result<CleanerCheckpoints> decode_cleaner_checkpoints(std::string_view text) {
  const std::vector<std::string_view> lines = split(text, '\n');
  if (lines.size() < 2 || lines[0] != "0") return bad_line(0, "expected version 0");
  size_t count = 0;
  if (!parse_number(lines[1], count) || lines.size() < count + 2) return bad_line(1, "bad entry count");
  CleanerCheckpoints checkpoints;
  for (size_t i = 2; i < count + 2; ++i) {
    const std::vector<std::string_view> fields = split(lines[i], ' ');
    TopicPartition tp;
    int64_t offset = 0;
    if (fields.size() != 3 || !parse_number(fields[1], tp.partition) || !parse_number(fields[2], offset) ||
        tp.partition < 0 || offset < 0) {
      return bad_line(i, "expected \"topic partition offset\"");
    }
    tp.topic = std::string(fields[0]);
    checkpoints[tp] = offset;
  }
  return checkpoints;
}

Result<CleanerCheckpoints> read_cleaner_checkpoints(FileSystem& fs, const std::string& data_dir) {
  Result<std::unique_ptr<File>> file = fs.open(join_path(data_dir, kCleanerCheckpointFile), OpenMode::kRead);
  if (!file.ok() && file.status().code() == Code::kNotFound) return CleanerCheckpoints();
  SLUICE_TRY(file.status());
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes, read_whole_file(**file));
  SLUICE_TRY((*file)->close());
  return decode_cleaner_checkpoints(as_chars(bytes));
}

Status write_cleaner_checkpoints(FileSystem& fs, const std::string& data_dir, const CleanerCheckpoints& checkpoints) {
  const std::string path = join_path(data_dir, kCleanerCheckpointFile);
  return replace_file_durably(fs, path, path + ".tmp", as_bytes(encode_cleaner_checkpoints(checkpoints)));
}

}  // namespace sluice::storage
