#include "python/convert.h"

#include <fmt/format.h>

#include <pybind11/stl.h>

namespace py = pybind11;

namespace sluice::sim {
namespace {

double seconds(Instant t) { return to_seconds(t.time_since_epoch()); }

py::list records_list(const std::vector<RecordView>& records) {
  py::list out;
  for (const RecordView& r : records) {
    py::dict d;
    d["offset"] = r.offset;
    d["key"] = r.key ? py::object(py::str(*r.key)) : py::object(py::none());
    d["value"] = r.tombstone ? py::object(py::none()) : py::object(py::str(fmt::format("{:016x}", r.value_digest)));
    d["timestamp"] = r.timestamp_ms;
    out.append(std::move(d));
  }
  return out;
}

py::dict offsets_dict(const std::map<TopicPartitionId, int64_t>& offsets) {
  py::dict d;
  for (const auto& [tp, offset] : offsets) d[py::str(tp.to_string())] = offset;
  return d;
}

template <typename T, typename F>
py::array_t<T> column(const std::vector<PartitionSample>& samples, F field) {
  py::array_t<T> out(static_cast<py::ssize_t>(samples.size()));
  auto view = out.template mutable_unchecked<1>();
  for (size_t i = 0; i < samples.size(); ++i) view(static_cast<py::ssize_t>(i)) = static_cast<T>(field(samples[i]));
  return out;
}

}  // namespace

py::dict result_dict(const RunResult& r) {
  py::dict d;
  d["scenario"] = r.scenario;
  d["seed"] = r.seed;
  d["passed"] = r.passed();
  d["replay"] = r.replay;
  d["expanded"] = r.expanded;
  py::list violations;
  for (const Violation& v : r.report.violations) {
    py::dict item;
    item["invariant"] = v.invariant;
    item["evidence"] = v.evidence;
    violations.append(std::move(item));
  }
  d["violations"] = std::move(violations);
  py::dict figures;
  for (const auto& [figure, n] : r.report.figures) figures[py::str(figure)] = n;
  d["figures"] = std::move(figures);
  d["trace_hash"] = fmt::format("{:016x}", r.trace_hash);
  d["simulated_seconds"] = r.simulated_seconds;
  d["wall_seconds"] = r.wall_seconds;
  d["events"] = r.events;
  d["operations"] = r.operations;
  d["faults_applied"] = r.faults_applied;
  return d;
}

py::list operations_list(const History& history) {
  py::list out;
  for (const Operation& op : history.ops()) {
    py::dict d;
    d["id"] = op.id;
    d["process"] = op.process;
    d["kind"] = std::string(op_kind_name(op.kind));
    d["outcome"] = op.completed ? std::string(client::outcome_name(op.outcome)) : "pending";
    d["invoked"] = seconds(op.invoked_at);
    d["completed"] = op.completed ? py::object(py::float_(seconds(op.completed_at))) : py::object(py::none());
    d["topic"] = op.tp.topic;
    d["partition"] = op.tp.partition;
    d["error_code"] = op.error_code;
    d["error"] = op.error();
    d["acks"] = op.acks;
    d["idempotent"] = op.idempotent;
    d["offset"] = op.offset;
    d["high_watermark"] = op.high_watermark;
    d["log_start"] = op.log_start_offset;
    d["records"] = records_list(op.records);
    if (const OperationDetails& details = op.details(); !details.group.empty()) {
      d["group"] = details.group;
      d["generation"] = details.generation;
      d["offsets"] = offsets_dict(details.offsets);
    }
    out.append(std::move(d));
  }
  return out;
}

py::list world_events_list(const History& history) {
  py::list out;
  for (const WorldEvent& e : history.events()) {
    py::dict d;
    d["kind"] = std::string(world_event_name(e.kind));
    d["at"] = seconds(e.at);
    d["node"] = e.node;
    d["text"] = e.text;
    d["amount_ms"] = e.amount_ms;
    out.append(std::move(d));
  }
  return out;
}

py::list effects_list(const History& history) {
  py::list out;
  for (const TimedEffect& e : history.effects()) {
    py::dict d;
    d["at"] = seconds(e.at);
    d["node"] = e.node;
    d["text"] = storage::to_string(e.effect);
    d["topic"] = e.effect.tp.topic;
    d["partition"] = e.effect.tp.partition;
    d["from"] = e.effect.from;
    d["to"] = e.effect.to;
    out.append(std::move(d));
  }
  return out;
}

py::dict samples_dict(const std::vector<PartitionSample>& s) {
  py::dict d;
  d["at"] = column<double>(s, [](const PartitionSample& p) { return p.at_seconds; });
  py::list nodes;
  py::list topics;
  for (const PartitionSample& p : s) {
    nodes.append(p.node);
    topics.append(p.topic);
  }
  d["node"] = std::move(nodes);
  d["topic"] = std::move(topics);
  d["partition"] = column<int32_t>(s, [](const PartitionSample& p) { return p.partition; });
  d["log_start"] = column<int64_t>(s, [](const PartitionSample& p) { return p.log_start; });
  d["log_end"] = column<int64_t>(s, [](const PartitionSample& p) { return p.log_end; });
  d["high_watermark"] = column<int64_t>(s, [](const PartitionSample& p) { return p.high_watermark; });
  d["size_bytes"] = column<int64_t>(s, [](const PartitionSample& p) { return p.size_bytes; });
  d["dirty_ratio"] = column<double>(s, [](const PartitionSample& p) { return p.dirty_ratio; });
  d["segments"] = column<int64_t>(s, [](const PartitionSample& p) { return p.segments; });
  return d;
}

}  // namespace sluice::sim
