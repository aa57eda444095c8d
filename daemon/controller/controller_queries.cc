// Controller: the read-only client views (views/): job listings, one job,
// the node table, sacct and the scheduler's report. The views read const
// state; what runs off the loop (sacct's history part) is posted here.
#include <memory>
#include <optional>

#include "daemon/controller/controller.h"
#include "daemon/controller/views/job_listing.h"
#include "daemon/controller/views/job_view.h"
#include "daemon/controller/views/live_accounting.h"
#include "daemon/controller/views/node_listing.h"
#include "daemon/controller/views/scheduler_report.h"

namespace gantry {

absl::StatusOr<v1::ListJobsResponse> Controller::ListJobs(
    const v1::ListJobsRequest& request, const Caller& caller) const {
  return gantry::ListJobs(core_.state, request, caller);
}

absl::StatusOr<v1::GetJobResponse> Controller::GetJob(
    JobId job_id, const Caller& caller) const {
  v1::GetJobRequest request;
  request.set_job_id(job_id.value());
  return GetJob(request, caller);
}

absl::StatusOr<v1::GetJobResponse> Controller::GetJob(
    const v1::GetJobRequest& request, const Caller& caller) const {
  const JobViewSources sources{.state = core_.state,
                               .retention = core_.retention,
                               .commits = core_.commits,
                               .features = features_,
                               .store = store_};
  return ViewJob(sources, request, caller, clock_.NowMs());
}

v1::ListNodesResponse Controller::ListNodes() const {
  return gantry::ListNodes(core_.state, core_.switch_tree, options_.partitions);
}

void Controller::Accounting(
    const v1::AccountingRequest& request, const Caller& caller,
    std::function<void(absl::StatusOr<v1::AccountingResponse>)> done) {
  absl::StatusOr<AccountingPage> live =
      LiveAccountingPage(request, caller, clock_.NowMs(), options_.cluster_name,
                         core_.state, core_.commits);
  if (!live.ok()) return done(live.status());
  auto page = std::make_shared<AccountingPage>(*std::move(live));
  // The history part, off the loop. Others' records are passed over
  // unread unless an admin asks.
  auto answer = std::make_shared<
      std::function<void(absl::StatusOr<v1::AccountingResponse>)>>(
      std::move(done));
  const bool queued =
      history_worker_.Post([this, page, answer](bool cancelled) {
        if (cancelled) {
          return (*answer)(
              absl::UnavailableError("the controller is stopping; ask again"));
        }
        std::unique_ptr<StateStore::HistoryCursor> cursor = store_.ReadHistory(
            page->after() + 1,
            page->caller().admin ? std::nullopt
                                 : std::optional<uint32_t>(page->caller().uid));
        (*answer)(std::move(*page).MergeHistory(*cursor));
      });
  if (!queued) {
    (*answer)(absl::UnavailableError(
        "too many accounting queries are in progress; ask again shortly"));
  }
}

v1::SchedulerReportResponse Controller::SchedulerReport() const {
  const SchedulerReportSources sources{
      .state = core_.state,
      .fair_share = core_.lifecycle.fair_share(),
      .weights = options_.priority_weights,
      .statistics = core_.statistics,
      .started_ms = started_ms_};
  return gantry::SchedulerReport(sources, clock_.NowMs());
}

}  // namespace gantry
