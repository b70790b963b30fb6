// Scenario files: TOML in, Scenario out (and back, for the expanded configuration a seed prints).
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "core/base/assert.h"
#include "core/env/buggify.h"
#include "sim/scenario/scenario.h"
#include "sim/faults/injector.h"
#include "sim/scenario/knobs.h"
#include "sim/scenario/scenario_parts.h"
#include "sim/scenario/toml_reader.h"

namespace sluice::sim {
namespace {

using namespace std::chrono_literals;

// Random::fork stream of a seed's fault-schedule draws; fixed forever, or old seeds stop replaying.
constexpr uint64_t kScheduleDrawStream = 77;
// ... and of its knob draws.
constexpr uint64_t kKnobDrawStream = 78;

// The leading comment block: the scenario's summary.
std::string leading_comment(std::string_view text) {
  std::string summary;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("#", 0) != 0) break;
    std::string body = line.substr(1);
    if (!body.empty() && body[0] == ' ') body = body.substr(1);
    summary += (summary.empty() ? "" : "\n") + body;
  }
  return summary;
}

Status parse_topics(TomlReader& root, Scenario& s) {
  SLUICE_ASSIGN_OR_RETURN(std::vector<const toml::table*> topics, root.tables("topics"));
  for (size_t i = 0; i < topics.size(); ++i) {
    TomlReader t(*topics[i], fmt::format("topics[{}]", i));
    TopicSpec topic;
    SLUICE_ASSIGN_OR_RETURN(topic.name, t.string("name"));
    SLUICE_ASSIGN_OR_RETURN(int64_t partitions, t.integer("partitions", 1));
    if (partitions < 1 || partitions > 1000) return invalid_argument(t.where() + ": partitions must be 1..1000");
    topic.partitions = static_cast<int32_t>(partitions);
    SLUICE_ASSIGN_OR_RETURN(int64_t replication_factor, t.integer("replication_factor", 0));
    if (replication_factor < 0 || replication_factor > 9) {
      return invalid_argument(t.where() + ": replication_factor must be 1..9 (0 or absent: min(brokers, 3))");
    }
    topic.replication_factor = static_cast<int32_t>(replication_factor);
    SLUICE_ASSIGN_OR_RETURN(topic.config, t.string_map("config"));
    SLUICE_TRY(t.finish());
    s.topics.push_back(std::move(topic));
  }
  return Status::ok_status();
}

Status parse_faults(TomlReader& root, Scenario& s) {
  const toml::table* faults = root.table("faults");
  if (faults == nullptr) return Status::ok_status();
  TomlReader f(*faults, "faults");
  SLUICE_ASSIGN_OR_RETURN(s.warmup, f.duration("warmup", 2s));
  SLUICE_ASSIGN_OR_RETURN(std::vector<const toml::table*> schedule, f.tables("schedule"));
  for (size_t i = 0; i < schedule.size(); ++i) {
    TomlReader t(*schedule[i], fmt::format("faults.schedule[{}]", i));
    SLUICE_ASSIGN_OR_RETURN(Fault fault, parse_fault(t));
    s.schedule.push_back(std::move(fault));
  }
  SLUICE_ASSIGN_OR_RETURN(std::vector<const toml::table*> rates, f.tables("rates"));
  for (size_t i = 0; i < rates.size(); ++i) {
    TomlReader t(*rates[i], fmt::format("faults.rates[{}]", i));
    SLUICE_ASSIGN_OR_RETURN(FaultRate rate, parse_fault_rate(t));
    s.rates.push_back(rate);
  }
  return f.finish();
}

Status parse_checks(TomlReader& root, Scenario& s) {
  if (const toml::table* checks = root.table("checks")) {
    TomlReader c(*checks, "checks");
    SLUICE_ASSIGN_OR_RETURN(std::vector<std::string> only, c.strings("only"));
    s.checks.insert(only.begin(), only.end());
    SLUICE_ASSIGN_OR_RETURN(s.catches, c.strings("catches"));
    SLUICE_ASSIGN_OR_RETURN(auto sometimes, c.string_map("sometimes"));
    for (const auto& [probe, share_text] : sometimes) {
      char* end = nullptr;
      const double share = std::strtod(share_text.c_str(), &end);
      if (end == share_text.c_str() || *end != '\0' || !(share > 0 && share <= 1)) {
        return invalid_argument(fmt::format("checks.sometimes: '{}' = {}: a share of seeds, in (0, 1]", probe,
                                            share_text));
      }
      s.sometimes[probe] = share;
    }
    SLUICE_TRY(c.finish());
  }
  if (const toml::table* knobs = root.table("knobs")) {
    TomlReader k(*knobs, "knobs");
    SLUICE_ASSIGN_OR_RETURN(s.randomize_knobs, k.boolean("randomize", true));
    SLUICE_TRY(k.finish());
  }
  if (const toml::table* expect = root.table("expect")) {
    TomlReader e(*expect, "expect");
    SLUICE_ASSIGN_OR_RETURN(s.expect.damage_refused, e.boolean("damage_refused", false));
    SLUICE_TRY(e.finish());
  }
  return Status::ok_status();
}

Status parse_raft(TomlReader& root, Scenario& s) {
  const toml::table* table = root.table("raft");
  if (table == nullptr) return Status::ok_status();
  TomlReader r(*table, "raft");
  RaftSpec spec;
  SLUICE_ASSIGN_OR_RETURN(int64_t groups, r.integer("groups", 1));
  if (groups < 1 || groups > 10000) return invalid_argument("raft.groups must be 1..10000");
  spec.groups = static_cast<int>(groups);
  SLUICE_ASSIGN_OR_RETURN(spec.durability, r.string("durability", "persisted"));
  if (spec.durability != "persisted" && spec.durability != "replicated") {
    return invalid_argument("raft.durability must be \"persisted\" or \"replicated\", not '" + spec.durability + "'");
  }
  SLUICE_ASSIGN_OR_RETURN(spec.propose_every, r.duration("propose_every", 50ms));
  SLUICE_ASSIGN_OR_RETURN(spec.tick, r.duration("tick", 100ms));
  SLUICE_ASSIGN_OR_RETURN(int64_t election_ticks, r.integer("election_ticks", 10));
  if (election_ticks < 2 || election_ticks > 1000) return invalid_argument("raft.election_ticks must be 2..1000");
  spec.election_ticks = static_cast<int>(election_ticks);
  SLUICE_ASSIGN_OR_RETURN(int64_t max_count, r.integer("max_count", 1));
  if (max_count < 1 || max_count > 1000000) return invalid_argument("raft.max_count must be 1..1000000");
  spec.max_count = static_cast<int>(max_count);
  SLUICE_ASSIGN_OR_RETURN(spec.max_stale_leader, r.duration("max_stale_leader", Duration(0)));
  SLUICE_ASSIGN_OR_RETURN(spec.storage, r.string("storage", "raft-log"));
  if (spec.storage != "raft-log" && spec.storage != "partition-log") {
    return invalid_argument("raft.storage must be \"raft-log\" or \"partition-log\", not '" + spec.storage + "'");
  }
  SLUICE_ASSIGN_OR_RETURN(int64_t proposers, r.integer("proposers", 1));
  if (proposers < 1 || proposers > 64) return invalid_argument("raft.proposers must be 1..64");
  spec.proposers = static_cast<int>(proposers);
  SLUICE_ASSIGN_OR_RETURN(int64_t entries_per_append, r.integer("max_entries_per_append", 64));
  if (entries_per_append < 1 || entries_per_append > 100000) {
    return invalid_argument("raft.max_entries_per_append must be 1..100000");
  }
  spec.max_entries_per_append = static_cast<int>(entries_per_append);
  SLUICE_ASSIGN_OR_RETURN(int64_t inflight, r.integer("max_inflight_appends", 4));
  if (inflight < 1 || inflight > 1000) return invalid_argument("raft.max_inflight_appends must be 1..1000");
  spec.max_inflight_appends = static_cast<int>(inflight);
  if (spec.propose_every <= Duration(0) || spec.tick <= Duration(0)) {
    return invalid_argument("raft.propose_every and raft.tick must be positive");
  }
  SLUICE_TRY(r.finish());
  s.raft = spec;
  return Status::ok_status();
}

Status validate(const Scenario& s) {
  if (s.raft && (!s.topics.empty() || !s.workloads.empty())) {
    return invalid_argument("a [raft] scenario runs no broker: it has no topics or workloads");
  }
  std::set<std::string> topics;
  for (const TopicSpec& t : s.topics) {
    if (!topics.insert(t.name).second) return invalid_argument(fmt::format("topic '{}' is declared twice", t.name));
    if (t.replication_factor > s.brokers) {
      return invalid_argument(fmt::format("topic '{}': replication_factor {} exceeds the {} broker(s)", t.name,
                                          t.replication_factor, s.brokers));
    }
  }
  const bool forwards = s.brokers > 1 && !s.raft;  // only a broker cluster forwards produces to leaders
  auto forwarding_fault = [](FaultKind kind) { return kind == FaultKind::kDropAcks0Forwards; };
  for (const Fault& f : s.schedule) {
    if (forwarding_fault(f.kind) && !forwards) {
      return invalid_argument(fmt::format("fault at {}: {} needs a cluster of brokers (brokers > 1, no [raft])",
                                          format_duration(f.at), fault_kind_name(f.kind)));
    }
  }
  for (const FaultRate& r : s.rates) {
    if (forwarding_fault(r.kind) && !forwards) {
      return invalid_argument(fmt::format("fault rate of {} needs a cluster of brokers (brokers > 1, no [raft])",
                                          fault_kind_name(r.kind)));
    }
  }
  const std::vector<std::string> brokers = broker_names(s);
  for (const Fault& f : s.schedule) {
    if (std::find(brokers.begin(), brokers.end(), f.node) == brokers.end()) {
      return invalid_argument(fmt::format("fault at {} strikes '{}', not a broker node (n1..n{})",
                                          format_duration(f.at), f.node, s.brokers));
    }
  }
  for (const Fault& f : s.schedule) {
    if (f.kind == FaultKind::kSwizzleClog && f.amount > s.brokers) {
      return invalid_argument(fmt::format("fault at {}: a swizzle-clog of {} brokers in a cluster of {}",
                                          format_duration(f.at), f.amount, s.brokers));
    }
  }
  for (const FaultRate& r : s.rates) {
    if (r.kind == FaultKind::kSwizzleClog && r.amount_max > s.brokers) {
      return invalid_argument(fmt::format("fault rate of swizzle-clog: amount_max {} exceeds the {} broker(s)",
                                          r.amount_max, s.brokers));
    }
  }
  std::set<std::string> names;
  for (const WorkloadSpec& w : s.workloads) {
    if (!names.insert(w.name).second) return invalid_argument(fmt::format("workload name '{}' is used twice", w.name));
    if (w.kind == WorkloadSpec::Kind::kProducer && w.producer.via_node > s.brokers) {
      return invalid_argument(fmt::format("workload '{}': via = \"n{}\" is not a broker node (n1..n{})", w.name,
                                          w.producer.via_node, s.brokers));
    }
    SLUICE_TRY(validate_workload(w, topics));
  }
  return Status::ok_status();
}

}  // namespace

Result<Scenario> parse_scenario(std::string_view text, const std::string& path) {
  toml::table root_table;
  try {
    root_table = toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    return invalid_argument(fmt::format("{}:{}:{}: {}", path, e.source().begin.line, e.source().begin.column,
                                        e.description()));
  }
  Scenario s;
  s.path = path;
  s.summary = leading_comment(text);
  TomlReader root(root_table, path);
  SLUICE_ASSIGN_OR_RETURN(s.name, root.string("name"));
  SLUICE_TRY(parse_raft(root, s));
  SLUICE_ASSIGN_OR_RETURN(int64_t brokers, root.integer("brokers", 1));
  if (brokers < 1 || brokers > 9) return invalid_argument(path + ": brokers must be 1..9");
  s.brokers = static_cast<int>(brokers);
  SLUICE_ASSIGN_OR_RETURN(s.duration, root.duration("duration", 30s));
  SLUICE_ASSIGN_OR_RETURN(s.liveness, root.duration("liveness", 30s));
  SLUICE_ASSIGN_OR_RETURN(s.buggify, root.boolean("buggify", false));
  SLUICE_ASSIGN_OR_RETURN(s.broker, root.string_map("broker"));
  SLUICE_TRY(parse_topics(root, s));
  SLUICE_ASSIGN_OR_RETURN(std::vector<const toml::table*> workloads, root.tables("workloads"));
  for (size_t i = 0; i < workloads.size(); ++i) {
    TomlReader w(*workloads[i], fmt::format("workloads[{}]", i));
    SLUICE_ASSIGN_OR_RETURN(WorkloadSpec spec, parse_workload(w, i));
    s.workloads.push_back(std::move(spec));
  }
  SLUICE_TRY(parse_faults(root, s));
  SLUICE_TRY(parse_checks(root, s));
  SLUICE_TRY(root.finish());
  if (Status valid = validate(s); !valid.ok()) return invalid_argument(path + ": " + valid.message());
  return s;
}

Result<Scenario> load_scenario_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return not_found("cannot read scenario file " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path);
}

namespace {

// `buggify = true` and, in an expanded scenario, the sites its seed switches on (a comment: the seed picks them).
std::string buggify_to_toml(const Scenario& s) {
  if (!s.buggify) return "";
  std::string text = "buggify = true\n";
  if (!s.buggify_sites_on.empty()) {
    std::string sites;
    for (const std::string& site : s.buggify_sites_on) sites += (sites.empty() ? "" : ", ") + site;
    text += "# BUGGIFY sites this seed switches on: " + sites + "\n";
  }
  return text + "\n";
}

}  // namespace

std::string to_toml(const Scenario& s, bool schedule_only) {
  std::string text;
  std::istringstream summary(s.summary);
  for (std::string line; std::getline(summary, line);) text += line.empty() ? "#\n" : "# " + line + "\n";
  text += fmt::format("name = \"{}\"\nbrokers = {}\nduration = \"{}\"\nliveness = \"{}\"\n\n", s.name, s.brokers,
                      format_duration(s.duration), format_duration(s.liveness));
  text += buggify_to_toml(s);
  if (!s.broker.empty()) {
    text += "[broker]\n";
    for (const auto& [key, value] : s.broker) {
      const bool drawn = std::find(s.drawn_knobs.begin(), s.drawn_knobs.end(), key) != s.drawn_knobs.end();
      text += fmt::format("\"{}\" = \"{}\"{}\n", key, value, drawn ? "  # a knob the seed drew" : "");
    }
    text += "\n";
  }
  if (!s.randomize_knobs) text += "[knobs]\nrandomize = false\n\n";
  for (const TopicSpec& t : s.topics) {
    text += fmt::format("[[topics]]\nname = \"{}\"\npartitions = {}\n", t.name, t.partitions);
    if (t.replication_factor > 0) text += fmt::format("replication_factor = {}\n", t.replication_factor);
    std::string config;
    for (const auto& [k, v] : t.config) config += fmt::format("{}\"{}\" = \"{}\"", config.empty() ? "" : ", ", k, v);
    if (!config.empty()) text += "config = { " + config + " }\n";
    text += "\n";
  }
  for (const WorkloadSpec& w : s.workloads) text += workload_to_toml(w) + "\n";
  text += fmt::format("[faults]\nwarmup = \"{}\"\n", format_duration(s.warmup));
  text += to_toml(s.schedule);
  if (!schedule_only && !s.rates.empty()) {
    text += "rates = [\n";
    for (const FaultRate& r : s.rates) text += "  " + fault_rate_to_toml(r) + ",\n";
    text += "]\n";
  }
  const auto list = [](const auto& names) {
    std::string text;
    for (const std::string& n : names) text += (text.empty() ? "\"" : ", \"") + n + "\"";
    return "[" + text + "]";
  };
  if (!s.checks.empty() || !s.catches.empty() || !s.sometimes.empty()) text += "\n[checks]\n";
  if (!s.checks.empty()) text += "only = " + list(s.checks) + "\n";
  if (!s.catches.empty()) text += "catches = " + list(s.catches) + "\n";
  if (!s.sometimes.empty()) {
    std::string shares;
    for (const auto& [probe, share] : s.sometimes) {
      shares += fmt::format("{}\"{}\" = {}", shares.empty() ? "" : ", ", probe, share);
    }
    text += "sometimes = { " + shares + " }\n";
  }
  if (s.expect.damage_refused) text += "\n[expect]\ndamage_refused = true\n";
  if (s.raft) {
    text += fmt::format(
        "\n[raft]\ngroups = {}\ndurability = \"{}\"\npropose_every = \"{}\"\ntick = \"{}\"\nelection_ticks = {}\n",
        s.raft->groups, s.raft->durability, format_duration(s.raft->propose_every), format_duration(s.raft->tick),
        s.raft->election_ticks);
    if (s.raft->max_count != 1) text += fmt::format("max_count = {}\n", s.raft->max_count);
    if (s.raft->max_stale_leader > Duration(0)) {
      text += fmt::format("max_stale_leader = \"{}\"\n", format_duration(s.raft->max_stale_leader));
    }
    if (s.raft->storage != "raft-log") text += fmt::format("storage = \"{}\"\n", s.raft->storage);
    if (s.raft->proposers != 1) text += fmt::format("proposers = {}\n", s.raft->proposers);
    if (s.raft->max_entries_per_append != 64) {
      text += fmt::format("max_entries_per_append = {}\n", s.raft->max_entries_per_append);
    }
    if (s.raft->max_inflight_appends != 4) {
      text += fmt::format("max_inflight_appends = {}\n", s.raft->max_inflight_appends);
    }
  }
  return text;
}

std::vector<std::string> broker_names(const Scenario& scenario) {
  std::vector<std::string> names;
  for (int i = 1; i <= scenario.brokers; ++i) names.push_back(fmt::format("n{}", i));
  return names;
}

uint64_t buggify_run_seed(uint64_t seed) {
  constexpr uint64_t kBuggifySitesStream = 0xb0661f75;  // fixed forever, or old seeds pick other sites
  return Random(seed).fork(kBuggifySitesStream).next_u64();
}

Scenario expand(const Scenario& scenario, uint64_t seed) {
  Scenario expanded = scenario;
  expanded.buggify_sites_on.clear();
  if (scenario.buggify && !scenario.raft) {
    Buggify picker;
    picker.enable(buggify_run_seed(seed), Random(0));
    for (const std::string& site : buggify_sites()) {
      if (picker.site_on(site)) expanded.buggify_sites_on.push_back(site);
    }
  }
  if (scenario.randomize_knobs && !scenario.raft) {  // knobs are the broker's; a raft scenario runs none
    Random knob_rng = Random(seed).fork(kKnobDrawStream);
    std::vector<std::string> drawn = draw_knobs(expanded.broker, knob_rng);
    expanded.drawn_knobs.insert(expanded.drawn_knobs.end(), drawn.begin(), drawn.end());
    expanded.randomize_knobs = false;
  }
  Random rng = Random(seed).fork(kScheduleDrawStream);
  std::vector<Fault> drawn =
      draw_schedule(scenario.rates, broker_names(scenario), scenario.warmup, scenario.duration, rng);
  expanded.schedule.insert(expanded.schedule.end(), drawn.begin(), drawn.end());
  std::stable_sort(expanded.schedule.begin(), expanded.schedule.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
  expanded.rates.clear();
  return expanded;
}

}  // namespace sluice::sim
