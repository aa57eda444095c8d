// Controller: the features beside the core (controller_feature.h). The
// core calls their hooks where it changes a job (StageJob, the end of a
// job, retention), at start, on each tick and for `gantry status`; this
// file gives them their read-only view of the controller.
#include "daemon/controller/controller.h"

namespace gantry {

class Controller::FeatureView : public FeatureContext {
 public:
  explicit FeatureView(const Controller& controller)
      : controller_(controller) {}

  const Clock& clock() const override { return controller_.clock_; }
  ControllerMetrics* metrics() const override {
    return controller_.options_.metrics;
  }
  void ForEachJob(
      const std::function<void(const v1::JobRecord&)>& visit) const override {
    for (const auto& [id, job] : controller_.jobs_) visit(job.record);
  }
  void ForEachLiveJob(
      const std::function<void(const v1::JobRecord&)>& visit) const override {
    for (const auto& [id, job] : controller_.live_jobs_) visit(job->record);
  }

 private:
  const Controller& controller_;
};

void Controller::MakeFeatures() {
  feature_view_ = std::make_unique<FeatureView>(*this);
  for (const FeatureFactory& make : options_.features) {
    features_.push_back(make(*feature_view_));
  }
}

}  // namespace gantry
