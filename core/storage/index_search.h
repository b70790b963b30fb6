// Searching a released index in its file. A closed segment's OffsetIndex and TimeIndex drop their entries from
// memory (only the count, the first and the last stay), so a broker's memory follows its open segments, not its
// history (Kafka maps its indexes lazily for the same reason). A lookup then bisects the file with preads and reads
// the last stretch of up to kIndexSearchBlockEntries whole: about ten small reads for a full 10 MiB index.
//
// The file was checked entry by entry when it was loaded, and nothing changes it while the entries are released
// (a change loads them back first), so an entry out of order here is a damaged read: kCorruption, which the caller
// reads again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/file_system.h"

namespace sluice::storage {

inline constexpr size_t kIndexSearchBlockEntries = 512;

// What a released index keeps of its entries.
template <typename Entry>
struct ReleasedEntries {
  size_t count = 0;
  Entry first{};
  Entry last{};
};

// Takes `entries` out of memory (the vector's storage goes too), keeping what ReleasedEntries holds.
template <typename Entry>
ReleasedEntries<Entry> release_index_entries(std::vector<Entry>& entries) {
  ReleasedEntries<Entry> kept{entries.size(), entries.empty() ? Entry{} : entries.front(),
                              entries.empty() ? Entry{} : entries.back()};
  std::vector<Entry>().swap(entries);
  return kept;
}

// Loads released entries back: `load()` refills `entries` and `intact` from the file. kCorruption, the entries still
// released, unless they are the ones released.
template <typename Entry, typename Load>
Status reload_index_entries(std::vector<Entry>& entries, bool& intact,
                            std::optional<ReleasedEntries<Entry>>& released, const std::string& name, Load load) {
  if (!released.has_value()) return Status();
  SLUICE_TRY(load());
  const bool same = intact && entries.size() == released->count &&
                    (entries.empty() || (entries.front() == released->first && entries.back() == released->last));
  if (!same) {
    entries.clear();
    intact = true;  // as when released
    return corruption(name + ": the index read back is not the one released (" + std::to_string(released->count) +
                      " entries)");
  }
  released.reset();
  return Status();
}

// The last of `count` entries of `entry_bytes` each in `file` for which `at_or_below(entry)` holds (nullopt: none);
// `parse(bytes)` decodes one, `ordered(a, b)` holds when a may precede b, and `first` and `last` are the entries at
// 0 and count - 1 as loaded. REQUIRES: at_or_below is true up to some entry and false after it.
template <typename Entry, typename Parse, typename AtOrBelow, typename Ordered>
Result<std::optional<Entry>> search_index_file(File& file, const std::string& name, size_t count,
                                               size_t entry_bytes, const Entry& first, const Entry& last,
                                               Parse parse, AtOrBelow at_or_below, Ordered ordered) {
  if (count == 0 || !at_or_below(first)) return std::optional<Entry>();
  if (at_or_below(last)) return std::optional<Entry>(last);
  auto damaged = [&name](size_t index) {
    return corruption(name + ": entry " + std::to_string(index) + " is out of order on read");
  };
  // Entry `low` holds and entry `high` does not.
  size_t low = 0;
  size_t high = count - 1;
  Entry low_entry = first;
  Entry high_entry = last;
  Bytes bytes;
  while (high - low > 1) {
    const size_t between = high - low - 1;
    const size_t from = between <= kIndexSearchBlockEntries ? low + 1 : low + between / 2;
    const size_t entries = between <= kIndexSearchBlockEntries ? between : 1;
    bytes.resize(entries * entry_bytes);
    SLUICE_ASSIGN_OR_RETURN(size_t got, file.pread(from * entry_bytes, bytes));
    if (got != bytes.size()) return corruption(name + ": short read at entry " + std::to_string(from));
    if (entries == 1) {
      const Entry middle = parse(bytes.data());
      if (!ordered(low_entry, middle) || !ordered(middle, high_entry)) return damaged(from);
      if (at_or_below(middle)) {
        low = from;
        low_entry = middle;
      } else {
        high = from;
        high_entry = middle;
      }
      continue;
    }
    // The last stretch, whole: every entry in order between the bounds, the answer the last that holds.
    Entry previous = low_entry;
    for (size_t i = 0; i < entries; ++i) {
      const Entry entry = parse(bytes.data() + i * entry_bytes);
      if (!ordered(previous, entry)) return damaged(from + i);
      if (at_or_below(entry)) low_entry = entry;
      previous = entry;
    }
    if (!ordered(previous, high_entry)) return damaged(high);
    return std::optional<Entry>(low_entry);
  }
  return std::optional<Entry>(low_entry);
}

}  // namespace sluice::storage
