#include "sim/selftest/journal.h"

#include <cstring>

#include "core/base/assert.h"
#include "core/env/random.h"

namespace sluice {
namespace {

uint64_t checksum(uint32_t length, ByteView payload) {
  uint64_t h = mix64(length);
  size_t i = 0;
  for (; i + 8 <= payload.size(); i += 8) {
    uint64_t word;
    std::memcpy(&word, payload.data() + i, 8);
    h = mix64(h ^ word);
  }
  for (; i < payload.size(); ++i) h = mix64(h ^ payload[i]);
  return h;
}

void put_le(uint8_t* out, uint64_t value, size_t bytes) {
  for (size_t i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t get_le(const uint8_t* in, size_t bytes) {
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value |= static_cast<uint64_t>(in[i]) << (8 * i);
  return value;
}

struct Scan {
  std::vector<Bytes> records;
  uint64_t valid_bytes = 0;
  uint64_t file_bytes = 0;
};

// Reads records until the first one that is incomplete or fails its checksum.
Result<Scan> scan(File& file) {
  Scan out;
  SLUICE_ASSIGN_OR_RETURN(out.file_bytes, file.size());
  uint8_t header[Journal::kHeaderBytes];
  while (out.valid_bytes + Journal::kHeaderBytes <= out.file_bytes) {
    SLUICE_ASSIGN_OR_RETURN(size_t got, file.pread(out.valid_bytes, MutableByteView(header)));
    if (got < Journal::kHeaderBytes) break;
    const uint32_t length = static_cast<uint32_t>(get_le(header, 4));
    if (length > Journal::kMaxRecordBytes) break;
    if (out.valid_bytes + Journal::kHeaderBytes + length > out.file_bytes) break;
    Bytes payload(length);
    SLUICE_ASSIGN_OR_RETURN(size_t read, file.pread(out.valid_bytes + Journal::kHeaderBytes, payload));
    if (read < length) break;
    if (checksum(length, payload) != get_le(header + 4, 8)) break;
    out.records.push_back(std::move(payload));
    out.valid_bytes += Journal::kHeaderBytes + length;
  }
  SLUICE_ASSERT(out.valid_bytes <= out.file_bytes);
  return out;
}

}  // namespace

Result<std::unique_ptr<Journal>> Journal::open(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(bool existed, fs.exists(path));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kCreate));
  if (!existed) SLUICE_TRY(fs.sync_dir(parent_dir(path)));
  SLUICE_ASSIGN_OR_RETURN(Scan found, scan(*file));
  const uint64_t torn = found.file_bytes - found.valid_bytes;
  if (torn > 0) {
    SLUICE_PROBE("journal.torn_tail_truncated");
    SLUICE_TRY(file->truncate(found.valid_bytes));
    SLUICE_TRY(file->sync());
  }
  return std::unique_ptr<Journal>(
      new Journal(std::move(file), std::move(found.records), found.valid_bytes, torn));
}

Status Journal::append(ByteView payload) {
  if (payload.size() > kMaxRecordBytes) return invalid_argument("journal record over 1 MiB");
  Bytes frame(kHeaderBytes + payload.size());
  const uint32_t length = static_cast<uint32_t>(payload.size());
  put_le(frame.data(), length, 4);
  put_le(frame.data() + 4, checksum(length, payload), 8);
  if (!payload.empty()) std::memcpy(frame.data() + kHeaderBytes, payload.data(), payload.size());
  SLUICE_TRY(file_->append(frame));
  size_bytes_ += frame.size();
  records_.emplace_back(payload.begin(), payload.end());
  return Status();
}

Status Journal::sync() { return file_->sync(); }

Result<std::vector<Bytes>> Journal::read_records(FileSystem& fs, const std::string& path) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(path, OpenMode::kRead));
  SLUICE_ASSIGN_OR_RETURN(Scan found, scan(*file));
  return std::move(found.records);
}

}  // namespace sluice
