// Producer: send, settle, and the producer id of an idempotent producer (producer_state.h); each partition's
// sender fiber is in producer_lane.cc.
#include <fmt/format.h>

#include "core/client/errors.h"
#include "core/client/producer_state.h"
#include "core/client/requests.h"

namespace sluice::client {

using detail::BatchPtr;
using detail::Lane;
using detail::PendingBatch;

Producer::Producer(Client& client, ProducerConfig config)
    : state_(std::make_shared<State>(client.core_, std::move(config))) {
  const ProducerConfig& c = state_->config;
  SLUICE_ASSERT_MSG(!c.idempotent || c.acks == -1, "an idempotent producer needs acks=-1, as Kafka's does");
  SLUICE_ASSERT(c.acks == -1 || c.acks == 0 || c.acks == 1);
  SLUICE_ASSERT(c.max_in_flight >= 1);
  SLUICE_ASSERT_MSG(!c.idempotent || c.max_in_flight <= 5, "the broker remembers a producer's last 5 batches");
}

Producer::~Producer() {
  state_->stopped = true;
  state_->wake_all_lanes();
  state_->changed.notify_all();  // a flush on another fiber re-checks
}

void Producer::send(const TopicPartitionId& tp, std::vector<ProducerRecord> records, Done done) {
  SLUICE_ASSERT(!records.empty());
  auto batch = std::make_shared<PendingBatch>();
  batch->tp = tp;
  batch->records = std::move(records);
  batch->done = std::move(done);
  batch->deadline = state_->env.clock.now() + state_->config.delivery_timeout;
  state_->enqueue(std::move(batch));
}

ProduceResult Producer::send_and_wait(const TopicPartitionId& tp, std::vector<ProducerRecord> records) {
  struct Waiter {
    explicit Waiter(Scheduler& scheduler) : settled(scheduler) {}
    Event settled;
    ProduceResult result;
  };
  auto waiter = std::make_shared<Waiter>(state_->env.scheduler);
  send(tp, std::move(records), [waiter](const ProduceResult& result) {
    waiter->result = result;
    waiter->settled.set();
  });
  waiter->settled.wait();
  return waiter->result;
}

void Producer::flush() {
  const std::shared_ptr<State> state = state_;
  while (state->unsettled > 0) state->changed.wait();
}

size_t Producer::in_flight() const { return state_->unsettled; }
int64_t Producer::producer_id() const { return state_->producer_id; }
int16_t Producer::producer_epoch() const { return state_->producer_epoch; }

// ---- State ----

Producer::State::State(std::shared_ptr<detail::ClientCore> core_, ProducerConfig config_)
    : core(std::move(core_)),
      env(core->env()),
      config(std::move(config_)),
      changed(env.scheduler),
      identity_mutex(env.scheduler) {}

void Producer::State::enqueue(BatchPtr batch) {
  std::shared_ptr<Lane>& slot = lanes[batch->tp];
  if (slot == nullptr) {
    slot = std::make_shared<Lane>(env.scheduler);
    slot->tp = batch->tp;
    slot->sender_name = "producer " + slot->tp.topic + '-' + std::to_string(slot->tp.partition);
  }
  const std::shared_ptr<Lane> lane = slot;
  lane->queued.push_back(std::move(batch));
  ++unsettled;
  if (lane->sender_running) {
    lane->wake.notify_all();
    return;
  }
  lane->sender_running = true;
  env.scheduler.spawn(lane->sender_name, [self = shared_from_this(), lane] { self->run_lane(lane); });
}

void Producer::State::settle(const BatchPtr& batch, Outcome outcome, int64_t base_offset, int64_t log_start_offset) {
  ProduceResult result;
  result.outcome = outcome;
  result.error_code = outcome == Outcome::kOk ? 0 : batch->last_error;
  if (outcome != Outcome::kOk) result.error = batch->error;
  result.base_offset = base_offset;
  result.log_start_offset = log_start_offset;
  result.attempts = batch->attempts;
  result.producer_id = batch->producer_id;
  result.producer_epoch = batch->producer_epoch;
  result.base_sequence = batch->base_sequence;
  SLUICE_ASSERT(unsettled > 0);
  --unsettled;
  changed.notify_all();
  if (stopped || !batch->done) return;
  Producer::Done done = std::move(batch->done);
  batch->done = nullptr;
  done(result);
}

// A batch that stops here without success: kUnknown when an attempt may have been appended, kFailed otherwise.
void Producer::State::settle_unresolved(const BatchPtr& batch, const std::string& why) {
  batch->error = batch->error.empty() ? why : fmt::format("{} (last: {})", why, batch->error);
  settle(batch, batch->maybe_appended ? Outcome::kUnknown : Outcome::kFailed);
}

std::function<void()> Producer::State::notifier(Lane& lane) {
  // A call may finish after the producer is gone; its lanes live as long as the state does (never removed).
  return [weak = weak_from_this(), woken = &lane] {
    if (std::shared_ptr<State> self = weak.lock()) woken->wake.notify_all();
  };
}

void Producer::State::wake_all_lanes() {
  for (const auto& [tp, lane] : lanes) lane->wake.notify_all();
}

// ---- Idempotence ----

Status Producer::State::init_producer_id() {
  const int64_t old_id = producer_id;
  const int16_t old_epoch = producer_epoch;
  SLUICE_ASSIGN_OR_RETURN(
      protocol::InitProducerIdResponse response,
      core->call<protocol::InitProducerIdResponse>(
          -1, [&](int16_t) { return init_producer_id_request(old_id, old_epoch); }, core->config().request_timeout));
  if (response.error_code != 0) return broker_error(response.error_code, "InitProducerId");
  if (response.producer_id < 0) return corruption("InitProducerId answered producer id -1");
  producer_id = response.producer_id;
  producer_epoch = response.producer_epoch;
  env.log.debug("producer: id {} epoch {}", producer_id, producer_epoch);
  return Status();
}

Status Producer::State::ensure_identity(Lane& lane) {
  if (lane.producer_id >= 0) return Status();
  {
    LockGuard lock(identity_mutex);
    if (producer_id < 0) SLUICE_TRY(init_producer_id());
  }
  lane.producer_id = producer_id;
  lane.producer_epoch = producer_epoch;
  lane.next_sequence = 0;
  lane.acked_end = -1;
  return Status();
}

Status Producer::State::reset_identity(Lane& lane) {
  SLUICE_ASSERT(lane.window.empty());
  // The batches built under the old identity are built again, but not those that may have been appended.
  std::vector<BatchPtr> unresolved;
  std::erase_if(lane.queued, [&](const BatchPtr& batch) {
    if (!batch->built) return false;
    if (batch->maybe_appended) {
      unresolved.push_back(batch);
      return true;
    }
    batch->built.reset();
    return false;
  });
  // Settled after the queue is consistent again: a done callback may send().
  for (const BatchPtr& batch : unresolved) {
    settle_unresolved(batch, "its sequence could not be resolved after an earlier batch failed");
  }
  {
    LockGuard lock(identity_mutex);
    if (producer_id == lane.producer_id) SLUICE_TRY(init_producer_id());  // else another lane got a new one
  }
  lane.producer_id = producer_id;
  lane.producer_epoch = producer_epoch;
  lane.next_sequence = 0;
  lane.acked_end = -1;
  lane.reset_needed = false;
  return Status();
}

}  // namespace sluice::client
