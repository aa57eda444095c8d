// sacct's page, its loop part: the request checked and the page filled
// from the live state and the records retired but not yet written. The
// history thread then merges the history into it (AccountingPage::
// MergeHistory), so the loop's part is bounded by the live state.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/controller/core/cluster_state.h"
#include "daemon/controller/core/commit_pipeline.h"
#include "daemon/controller/views/accounting_page.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

// INVALID_ARGUMENT for a bad page token, an outsized filter or a time
// window that ends before it starts.
absl::StatusOr<AccountingPage> LiveAccountingPage(
    const v1::AccountingRequest& request, const Caller& caller, int64_t now_ms,
    const std::string& cluster_name, const ClusterState& state,
    const CommitPipeline& commits);

}  // namespace gantry
