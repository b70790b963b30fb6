// A RapidCheck property: random sequences of appends, pwrites, truncates, syncs, renames, removes, sync_dirs,
// kernel writebacks and power losses on three files of one durable directory, judged against a reference
// model. After every step the volatile view must equal the model exactly; after every power loss some prefix
// of the directory's un-synced operations must explain the names that survived, and for it every file's bytes
// must be its synced bytes plus a prefix of its un-synced operations with the next one torn at sector
// granularity (tests/sim/sim_disk_model.h). Synced bytes nothing overwrote thus survive byte-exact, a name
// whose creation was followed by sync_dir never vanishes, and a write past the capacity fails with kNoSpace
// exactly when the model says it must.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/world/sim_disk.h"
#include "sim/world/sim_file_system.h"
#include "tests/sim/world/sim_disk_model.h"
#include "tests/sim/world/sim_disk_test_util.h"

namespace sluice {
namespace {

using testing_model::model_apply;
using testing_model::model_crash_ok;
using testing_model::ModelOp;

enum StepKind : int {
  kAppend,
  kPwrite,
  kTruncate,
  kSync,
  kSyncDir,
  kRename,
  kRemove,
  kPowerLoss,
  kWriteback
};
constexpr const char* kNames[] = {"a", "b", "c"};

struct Step {
  int kind = kAppend;
  int name = 0;
  int other = 0;
  uint32_t offset = 0;
  uint32_t length = 1;
  uint8_t fill = 0;
};

std::ostream& operator<<(std::ostream& os, const Step& step) {
  static constexpr const char* kKinds[] = {"append", "pwrite", "truncate",   "sync",     "sync_dir",
                                           "rename", "remove", "power_loss", "writeback"};
  return os << kKinds[step.kind] << "(" << kNames[step.name] << ", " << kNames[step.other] << ", offset "
            << step.offset << ", length " << step.length << ", fill " << int{step.fill} << ")";
}

rc::Gen<Step> step_gen() {
  const rc::Gen<int> kind = rc::gen::weightedElement<int>({{5, kAppend},
                                                           {2, kPwrite},
                                                           {1, kTruncate},
                                                           {2, kSync},
                                                           {1, kSyncDir},
                                                           {1, kRename},
                                                           {1, kRemove},
                                                           {1, kPowerLoss},
                                                           {1, kWriteback}});
  return rc::gen::build<Step>(rc::gen::set(&Step::kind, kind),
                              rc::gen::set(&Step::name, rc::gen::inRange(0, 3)),
                              rc::gen::set(&Step::other, rc::gen::inRange(0, 3)),
                              rc::gen::set(&Step::offset, rc::gen::inRange<uint32_t>(0, 5000)),
                              rc::gen::set(&Step::length, rc::gen::inRange<uint32_t>(1, 1500)),
                              rc::gen::set(&Step::fill, rc::gen::arbitrary<uint8_t>()));
}

struct ModelFile {
  std::string durable;
  std::string data;
  std::vector<ModelOp> ops;  // un-synced, in order
};

using ModelEntries = std::map<std::string, int>;                // name → model file
using ModelEntryOp = std::vector<std::pair<std::string, int>>;  // name → file, or -1 for removal

void apply_entry_op(ModelEntries& entries, const ModelEntryOp& op) {
  for (const auto& [name, id] : op) {
    if (id < 0) {
      entries.erase(name);
    } else {
      entries[name] = id;
    }
  }
}

class Harness {
 public:
  Harness(uint64_t seed, uint64_t capacity)
      : disk_(Random(seed), SimDiskOptions{.capacity_bytes = capacity}),
        fs_(disk_),
        crash_rng_(~seed),
        capacity_(capacity) {
    RC_ASSERT(fs_.create_dirs("d").ok());
    RC_ASSERT(fs_.sync_dir(".").ok());
  }

  void run(const Step& step) {
    const std::string name = kNames[step.name];
    switch (step.kind) {
      case kAppend:
      case kPwrite:
        write(step, name);
        break;
      case kTruncate:
        truncate(step, name);
        break;
      case kSync:
        sync(name);
        break;
      case kSyncDir:
        RC_ASSERT(fs_.sync_dir("d").ok());
        durable_entries_ = entries_;
        entry_ops_.clear();
        break;
      case kRename:
        rename(name, kNames[step.other]);
        break;
      case kRemove:
        if (!entries_.contains(name)) return;
        RC_ASSERT(fs_.remove("d/" + name).ok());
        record(ModelEntryOp{{name, -1}});
        break;
      case kPowerLoss:
        power_loss();
        break;
      case kWriteback:
        // The kernel flushed some dirty state: it moves the durable point within the un-synced operations,
        // which the model's "some prefix survives" already allows, so the model does not change.
        disk_.writeback(crash_rng_);
        break;
    }
    check_volatile();
  }

  void tag() {
    const SimDiskStats& stats = disk_.stats();
    RC_TAG(stats.torn_writes > 0 ? "torn" : "-", stats.no_space_errors > 0 ? "nospace" : "-",
           stats.lost_entry_ops > 0 ? "lost-entries" : "-", stats.lost_writes > 0 ? "lost-writes" : "-");
  }

  void power_loss() {
    disk_.power_loss(crash_rng_);
    RC_ASSERT(disk_.consistent());
    std::map<std::string, std::string> actual;
    for (const std::string& name : listed()) actual[name] = read("d/" + name);
    bool explained = false;
    ModelEntries entries = durable_entries_;
    for (size_t k = 0; k <= entry_ops_.size() && !explained; ++k) {
      if (k > 0) apply_entry_op(entries, entry_ops_[k - 1]);
      explained = explains(entries, actual);
    }
    RC_ASSERT(explained);
    for (const auto& [name, id] : durable_entries_) {
      if (!touched_by_pending(name)) RC_ASSERT(actual.contains(name));  // synced names never vanish
    }
    // The survivors are the new synced state.
    files_.clear();
    entries_.clear();
    entry_ops_.clear();
    for (const auto& [name, content] : actual) {
      files_[next_id_] = ModelFile{content, content, {}};
      entries_[name] = next_id_++;
    }
    durable_entries_ = entries_;
  }

 private:
  void record(ModelEntryOp op) {
    apply_entry_op(entries_, op);
    entry_ops_.push_back(std::move(op));
  }

  uint64_t used() const {
    uint64_t used = 0;
    for (const auto& [name, id] : entries_) used += files_.at(id).data.size();
    return used;
  }

  // Opens (creating when needed, as the disk does even when the write then fails) and returns the model file.
  ModelFile& open_model(const std::string& name) {
    if (!entries_.contains(name)) {
      files_[next_id_] = ModelFile{};
      record(ModelEntryOp{{name, next_id_++}});
    }
    return files_.at(entries_.at(name));
  }

  void write(const Step& step, const std::string& name) {
    std::unique_ptr<File> file = sim_disk_test::must_open(fs_, "d/" + name, OpenMode::kCreate);
    RC_ASSERT(file != nullptr);
    ModelFile& model = open_model(name);
    const uint64_t size = model.data.size();
    const uint64_t offset = step.kind == kAppend ? size : step.offset % (size + 600);
    std::string data(step.length, '\0');
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(step.fill + i * 7);
    const uint64_t growth = offset + data.size() > size ? offset + data.size() - size : 0;
    const Status status =
        step.kind == kAppend ? file->append(as_bytes(data)) : file->pwrite(offset, as_bytes(data));
    if (growth > 0 && used() + growth > capacity_) {  // no growth needs no space, even on an over-full disk
      RC_ASSERT(status.code() == Code::kNoSpace);
      return;
    }
    RC_ASSERT(status.ok());
    const ModelOp op{false, offset, data};
    model_apply(model.data, op);
    model.ops.push_back(op);
  }

  void truncate(const Step& step, const std::string& name) {
    if (!entries_.contains(name)) return;
    std::unique_ptr<File> file = sim_disk_test::must_open(fs_, "d/" + name, OpenMode::kReadWrite);
    RC_ASSERT(file != nullptr);
    ModelFile& model = files_.at(entries_.at(name));
    const uint64_t size = model.data.size();
    const uint64_t new_size = step.offset % (size + 300);
    const Status status = file->truncate(new_size);
    const uint64_t growth = new_size > size ? new_size - size : 0;
    if (growth > 0 && used() + growth > capacity_) {
      RC_ASSERT(status.code() == Code::kNoSpace);
      return;
    }
    RC_ASSERT(status.ok());
    const ModelOp op{true, new_size, {}};
    model_apply(model.data, op);
    model.ops.push_back(op);
  }

  void sync(const std::string& name) {
    if (!entries_.contains(name)) return;
    std::unique_ptr<File> file = sim_disk_test::must_open(fs_, "d/" + name, OpenMode::kRead);
    RC_ASSERT(file != nullptr);
    RC_ASSERT(file->sync().ok());
    ModelFile& model = files_.at(entries_.at(name));
    model.durable = model.data;
    model.ops.clear();
  }

  void rename(const std::string& from, const std::string& to) {
    if (!entries_.contains(from)) return;
    RC_ASSERT(fs_.rename("d/" + from, "d/" + to).ok());
    if (from != to) record(ModelEntryOp{{from, -1}, {to, entries_.at(from)}});
  }

  bool explains(const ModelEntries& entries, const std::map<std::string, std::string>& actual) const {
    if (entries.size() != actual.size()) return false;
    for (const auto& [name, id] : entries) {
      const auto found = actual.find(name);
      if (found == actual.end()) return false;
      const ModelFile& model = files_.at(id);
      if (!model_crash_ok(found->second, model.durable, model.ops)) return false;
    }
    return true;
  }

  bool touched_by_pending(const std::string& name) const {
    for (const ModelEntryOp& op : entry_ops_) {
      for (const auto& change : op) {
        if (change.first == name) return true;
      }
    }
    return false;
  }

  std::vector<std::string> listed() {
    Result<std::vector<DirEntry>> entries = fs_.list("d");
    RC_ASSERT(entries.ok());
    std::vector<std::string> out;
    for (const DirEntry& entry : *entries) out.push_back(entry.name);
    return out;
  }

  std::string read(const std::string& path) {
    std::optional<std::string> content = sim_disk_test::read_file(fs_, path);
    RC_ASSERT(content.has_value());
    return *content;
  }

  void check_volatile() {
    std::vector<std::string> expected;
    for (const auto& [name, id] : entries_) expected.push_back(name);
    RC_ASSERT(listed() == expected);
    for (const auto& [name, id] : entries_) RC_ASSERT(read("d/" + name) == files_.at(id).data);
    const uint64_t used_now = used();
    RC_ASSERT(disk_.used_bytes() == used_now);
    RC_ASSERT(*fs_.free_bytes("d") == (used_now >= capacity_ ? 0 : capacity_ - used_now));
  }

  SimDisk disk_;
  SimFileSystem fs_;
  Random crash_rng_;
  const uint64_t capacity_;
  std::map<int, ModelFile> files_;  // every file ever named: a reverted removal brings one back
  ModelEntries durable_entries_;
  ModelEntries entries_;
  std::vector<ModelEntryOp> entry_ops_;
  int next_id_ = 0;
};

RC_GTEST_PROP(SimDiskProperty, PowerLossKeepsSyncedStateAndAPrefixOfTheRest, ()) {
  const uint64_t seed = *rc::gen::arbitrary<uint64_t>();
  const uint64_t capacity = *rc::gen::inRange<uint64_t>(512, 6 * 1024);
  const std::vector<Step> steps = *rc::gen::scale(0.8, rc::gen::container<std::vector<Step>>(step_gen()));
  Harness harness(seed, capacity);
  for (const Step& step : steps) harness.run(step);
  harness.power_loss();
  harness.tag();
}

}  // namespace
}  // namespace sluice
