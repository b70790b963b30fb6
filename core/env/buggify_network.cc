#include "core/env/buggify_network.h"

#include <chrono>
#include <vector>

namespace sluice {
namespace {

// Up to this long between the two pieces of a split write: long enough for the peer to read the first alone.
constexpr int64_t kMaxSplitPauseMicros = 2000;

class BuggifyStream final : public Stream {
 public:
  BuggifyStream(std::unique_ptr<Stream> inner, Buggify& buggify, Scheduler& scheduler)
      : inner_(std::move(inner)), buggify_(buggify), scheduler_(scheduler) {}

  Result<size_t> read_some(MutableByteView out) override {
    if (out.size() > 1 && SLUICE_BUGGIFY(buggify_, "stream.short-read")) {
      out = out.first(1 + buggify_.random().uniform(out.size() - 1));
    }
    return inner_->read_some(out);
  }

  Status write_all(ByteView data) override {
    const std::array<ByteView, 1> parts{data};
    return write_all_gathered(parts);
  }

  Status write_all_gathered(std::span<const ByteView> parts) override {
    uint64_t total = 0;
    for (const ByteView part : parts) total += part.size();
    if (total < 2 || !SLUICE_BUGGIFY(buggify_, "stream.split-write")) return inner_->write_all_gathered(parts);
    const uint64_t cut = 1 + buggify_.random().uniform(total - 1);
    std::vector<ByteView> first;
    std::vector<ByteView> second;
    uint64_t at = 0;
    for (const ByteView part : parts) {
      if (at + part.size() <= cut) {
        first.push_back(part);
      } else if (at >= cut) {
        second.push_back(part);
      } else {
        first.push_back(part.first(cut - at));
        second.push_back(part.subspan(cut - at));
      }
      at += part.size();
    }
    SLUICE_TRY(inner_->write_all_gathered(first));
    scheduler_.sleep_for(std::chrono::microseconds(buggify_.random().uniform_range(0, kMaxSplitPauseMicros)));
    return inner_->write_all_gathered(second);
  }

  void set_prompt_acks(bool on) override { inner_->set_prompt_acks(on); }
  void close() override { inner_->close(); }
  Address peer() const override { return inner_->peer(); }
  Address local() const override { return inner_->local(); }

 private:
  std::unique_ptr<Stream> inner_;
  Buggify& buggify_;
  Scheduler& scheduler_;
};

class BuggifyListener final : public Listener {
 public:
  BuggifyListener(std::unique_ptr<Listener> inner, Buggify& buggify, Scheduler& scheduler)
      : inner_(std::move(inner)), buggify_(buggify), scheduler_(scheduler) {}

  Result<std::unique_ptr<Stream>> accept() override {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, inner_->accept());
    return BuggifyNetwork::wrap(std::move(stream), buggify_, scheduler_);
  }
  Address address() const override { return inner_->address(); }
  void close() override { inner_->close(); }

 private:
  std::unique_ptr<Listener> inner_;
  Buggify& buggify_;
  Scheduler& scheduler_;
};

}  // namespace

std::unique_ptr<Stream> BuggifyNetwork::wrap(std::unique_ptr<Stream> stream, Buggify& buggify, Scheduler& scheduler) {
  return std::make_unique<BuggifyStream>(std::move(stream), buggify, scheduler);
}

Result<std::unique_ptr<Listener>> BuggifyNetwork::listen(const Address& address) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Listener> listener, inner_.listen(address));
  return std::unique_ptr<Listener>(std::make_unique<BuggifyListener>(std::move(listener), buggify_, scheduler_));
}

Result<std::unique_ptr<Stream>> BuggifyNetwork::connect(const Address& address) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Stream> stream, inner_.connect(address));
  return wrap(std::move(stream), buggify_, scheduler_);
}

}  // namespace sluice
