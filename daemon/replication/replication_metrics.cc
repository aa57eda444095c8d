#include "daemon/replication/replication_metrics.h"

#include <chrono>
#include <optional>

#include <prometheus/family.h>

#include "common/log.h"
#include "daemon/replication/controller_members.h"

namespace gantry::replication {
namespace {

constexpr auto kSampleEvery = std::chrono::seconds(1);
// etcd's members are asked one by one, each within the call timeout.
constexpr int kHealthEverySamples = 5;

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

prometheus::Gauge& OneGauge(prometheus::Registry& registry,
                            const std::string& name, const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(registry).Add(
      {});
}

}  // namespace

LagTracker::Lag LagTracker::Update(uint64_t applied, uint64_t leader_index,
                                   int64_t now_ms) {
  if (first_ms_ < 0) first_ms_ = now_ms;
  Lag lag;
  lag.entries = leader_index > applied ? leader_index - applied : 0;
  if (lag.entries == 0) {
    caught_up_ms_ = now_ms;
    return lag;
  }
  const int64_t since = caught_up_ms_ >= 0 ? caught_up_ms_ : first_ms_;
  lag.seconds = static_cast<double>(now_ms - since) / 1000.0;
  return lag;
}

ReplicationMetrics::ReplicationMetrics(prometheus::Registry& registry,
                                       ReplicatedController& controller)
    : controller_(controller),
      is_leader_(OneGauge(registry, "gantry_replication_is_leader",
                          "1 while this gantryd leads with its etcd lease "
                          "surely held, 0 otherwise")),
      leader_term_(OneGauge(
          registry, "gantry_replication_leader_term",
          "The leader key's creation revision in etcd: changes with each "
          "new leader (0: none known)")),
      leader_changes_(
          prometheus::BuildCounter()
              .Name("gantry_replication_leader_changes_total")
              .Help("New leaders this gantryd saw take office since it "
                    "started")
              .Register(registry)
              .Add({})),
      applied_index_(OneGauge(registry, "gantry_replication_applied_index",
                              "The last log entry applied to this "
                              "gantryd's state")),
      leader_index_(OneGauge(registry, "gantry_replication_leader_index",
                             "The leader's last log entry, as it last "
                             "published it")),
      lag_entries_(OneGauge(registry, "gantry_replication_lag_entries",
                            "Log entries this gantryd has yet to apply")),
      lag_seconds_(OneGauge(registry, "gantry_replication_lag_seconds",
                            "Seconds since this gantryd was last caught up "
                            "with the leader (0: it is)")),
      etcd_members_(prometheus::BuildGauge()
                        .Name("gantry_replication_etcd_members")
                        .Help("etcd members by whether this gantryd reaches "
                              "them (and they have a raft leader)")
                        .Register(registry)),
      etcd_reachable_(etcd_members_.Add({{"state", "reachable"}})),
      etcd_unreachable_(etcd_members_.Add({{"state", "unreachable"}})),
      etcd_foreign_(OneGauge(
          registry, "gantry_replication_etcd_foreign_members",
          "etcd endpoints answering for another etcd cluster than the one "
          "checked at start (their answers are ignored; fix etcd: two "
          "clusters would each elect a leader)")),
      forged_records_(prometheus::BuildCounter()
                          .Name("gantry_replication_forged_records_total")
                          .Help("Records in etcd this gantryd refused because "
                                "the cluster's replication key did not seal "
                                "them (forged, altered or replayed)")
                          .Register(registry)
                          .Add({})),
      sampler_([this] { SampleLoop(); }),
      validity_([this] { ValidityLoop(); }) {}

ReplicationMetrics::~ReplicationMetrics() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  stop_changed_.NotifyAll();
  sampler_.join();
  validity_.join();
}

void ReplicationMetrics::ValidityLoop() {
  constexpr auto kEvery = std::chrono::milliseconds(100);
  MutexLock lock(mutex_);
  while (!stopping_) {
    is_leader_.Set(controller_.leadership().Valid() ? 1 : 0);
    stop_changed_.WaitFor(lock, kEvery, [this] {
      mutex_.AssertHeld();
      return stopping_;
    });
  }
}

void ReplicationMetrics::SampleLoop() {
  int samples = 0;
  MutexLock lock(mutex_);
  while (!stopping_) {
    lock.Unlock();
    Sample(samples++ % kHealthEverySamples == 0);
    lock.Lock();
    stop_changed_.WaitFor(lock, kSampleEvery, [this] {
      mutex_.AssertHeld();
      return stopping_;
    });
  }
}

void ReplicationMetrics::Sample(bool ask_etcd_health) {
  Leadership& leadership = controller_.leadership();
  const bool leading = leadership.is_leader();
  const uint64_t applied = leadership.applied_index();
  applied_index_.Set(static_cast<double>(applied));
  const uint64_t forged = controller_.seal().forged_count();
  if (forged > forged_counted_) {
    forged_records_.Increment(static_cast<double>(forged - forged_counted_));
    forged_counted_ = forged;
  }

  // The leader key and every member record, in one round trip.
  etcdserverpb::TxnRequest read;
  read.add_success()->mutable_request_range()->set_key(
      controller_.keys().leader());
  etcdserverpb::RangeRequest* members =
      read.add_success()->mutable_request_range();
  members->set_key(controller_.keys().members());
  members->set_range_end(PrefixEnd(controller_.keys().members()));
  absl::StatusOr<etcdserverpb::TxnResponse> answer =
      controller_.etcd().Txn(read);
  if (answer.ok() && answer->responses_size() == 2) {
    const etcdserverpb::RangeResponse& leader_key =
        answer->responses(0).response_range();
    int64_t term = 0;
    std::optional<v1::ControllerMember> leader;
    if (leader_key.kvs_size() == 1) {
      term = leader_key.kvs(0).create_revision();
      absl::StatusOr<v1::ControllerMember> record =
          OpenMember(controller_.seal(), leader_key.kvs(0));
      if (record.ok()) leader = std::move(*record);
    }
    leader_term_.Set(static_cast<double>(term));
    if (term != 0 && last_term_ != 0 && term != last_term_) {
      leader_changes_.Increment();
    }
    if (term != 0) last_term_ = term;
    if (leader) {
      // The leader key holds its record as of its election; its member
      // record is republished as it commits.
      last_leader_index_ = leader->applied_index();
      for (const mvccpb::KeyValue& kv :
           answer->responses(1).response_range().kvs()) {
        absl::StatusOr<v1::ControllerMember> member =
            OpenMember(controller_.seal(), kv);
        if (member.ok() && member->name() == leader->name()) {
          last_leader_index_ = member->applied_index();
        }
      }
    }
  } else if (!answer.ok()) {
    log::Debug("cannot read the leader for the replication metrics",
               {{"error", answer.status().ToString()}});
  }
  const uint64_t leader_index = leading ? applied : last_leader_index_;
  leader_index_.Set(static_cast<double>(leader_index));
  const LagTracker::Lag lag = lag_.Update(applied, leader_index, SteadyMs());
  lag_entries_.Set(static_cast<double>(lag.entries));
  lag_seconds_.Set(lag.seconds);

  if (ask_etcd_health) {
    int reachable = 0;
    int unreachable = 0;
    for (const EtcdMemberHealth& member : controller_.etcd().Health()) {
      // A member without a raft leader answers, but serves nothing.
      (member.reachable && member.error.empty() ? reachable : unreachable)++;
    }
    etcd_reachable_.Set(reachable);
    etcd_unreachable_.Set(unreachable);
  }
  etcd_foreign_.Set(
      static_cast<double>(controller_.etcd().ForeignMembers().size()));
}

}  // namespace gantry::replication
