#include "daemon/controller/features/goodput/goodput_feature.h"

#include "common/log.h"
#include "daemon/controller/core/controller_metrics.h"
#include "daemon/controller/core/goodput.h"

namespace gantry {

GoodputFeature::GoodputFeature(const FeatureContext& context)
    : context_(context) {}

void GoodputFeature::OnStateLoaded(const v1::FairShareRecord* retired) {
  const int64_t now = context_.clock().NowMs();
  Prune(now);
  if (retired != nullptr && retired->retired_goodput().buckets_size() > 0 &&
      !retired_.Restore(retired->retired_goodput())) {
    log::Warn(
        "stored goodput of retired jobs has another bucket size; "
        "the last day's figure restarts without them",
        {{"bucket_ms", retired->retired_goodput().bucket_ms()}});
  }
  context_.ForEachJob(
      [this, now](const v1::JobRecord& job) { Follow(job, now); });
}

void GoodputFeature::OnJobChanged(const v1::JobRecord& job) {
  Follow(job, context_.clock().NowMs());
}

void GoodputFeature::OnJobFinished(const v1::JobRecord& job) {
  if (ControllerMetrics* metrics = context_.metrics()) {
    metrics->CountFinishedGoodput(
        SumTimeline(GoodputTimeline(job, context_.clock().NowMs())));
  }
}

void GoodputFeature::OnJobRetired(const v1::JobRecord& job) {
  retired_.Add(live_.Remove(job.id()), 1);
}

void GoodputFeature::SaveRetired(v1::FairShareRecord& retired) {
  retired_.Prune(context_.clock().NowMs());
  *retired.mutable_retired_goodput() = retired_.ToRecord();
}

void GoodputFeature::OnTick(uint64_t tick) {
  if (tick % kTicksPerRefresh != 0) return;
  const int64_t now = context_.clock().NowMs();
  Prune(now);
  context_.ForEachLiveJob(
      [this, now](const v1::JobRecord& job) { Follow(job, now); });
  if (ControllerMetrics* metrics = context_.metrics()) {
    metrics->PublishGoodput(LastDay());
  }
}

void GoodputFeature::FillStatus(v1::ClusterStatusResponse& status) const {
  const GoodputTotals totals = LastDay();
  *status.mutable_goodput_last_day() = ToProto(totals);
  status.set_ettr_last_day(totals.Ettr());
  status.set_goodput_window_seconds(retired_.window_ms() / 1000);
}

GoodputTotals GoodputFeature::LastDay() const {
  const int64_t now = context_.clock().NowMs();
  GoodputTotals totals = live_.ledger().Window(now);
  totals += retired_.Window(now);
  return totals;
}

void GoodputFeature::Follow(const v1::JobRecord& job, int64_t now_ms) {
  live_.Update(job.id(), GoodputTimeline(job, now_ms));
}

void GoodputFeature::Prune(int64_t now_ms) {
  live_.ledger().Prune(now_ms);
  retired_.Prune(now_ms);
}

std::unique_ptr<ControllerFeature> MakeGoodputFeature(
    const FeatureContext& context) {
  return std::make_unique<GoodputFeature>(context);
}

}  // namespace gantry
