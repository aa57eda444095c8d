// One page of sacct's answer (v1::AccountingResponse). The controller's
// loop fills a page from the live state and the records retired but not
// yet written (bounded: the live state is); the history thread then merges
// it, in id order, with the history read from a database snapshot
// (MergeHistory), so the loop never reads the history.
//
// What qualifies: the caller's own jobs unless an admin asks, matching the
// filter, active in the time window. What is shown: no script, arguments
// or environment (accounting says what ran, not with what). Where a page
// ends: a count and a size, so it stays far below any client's receive
// limit whatever the jobs hold; the next page starts after the last job
// looked at.
//
// Not thread-safe: a value, built on one thread and handed to another.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "daemon/controller/core/caller.h"
#include "daemon/store/state_store.h"
#include "gantry/v1/client.pb.h"

namespace gantry {

class AccountingPage {
 public:
  struct Limits {
    uint32_t jobs = 5000;
    size_t bytes = 4 << 20;
    // The history read by one page: past either, the page ends early
    // (with a token) and the next call goes on from there.
    size_t history_records = 5000;
    size_t history_bytes = 64 << 20;
  };

  // Jobs with ids above `after` (the page token), as of `now_ms`.
  AccountingPage(v1::AccountingRequest request, Caller caller, int64_t now_ms,
                 uint64_t after, Limits limits);

  // Whether `record` belongs on the page (see above).
  bool Qualifies(const v1::JobRecord& record) const;
  // `record` as the page shows it: without its script and environment,
  // with its goodput split as of the page's time (sacct's ETTR fields).
  v1::JobRecord RowOf(v1::JobRecord record) const;
  // Adds a qualifying row, in id order; false, adding nothing, once the
  // page is full.
  bool Add(v1::JobRecord row);
  // A job looked at and passed over: the next page starts after it.
  void Pass(uint64_t id);

  // Merges the history read through `cursor` (from after's next id up)
  // with the rows added so far, and returns the page. Errors: the
  // cursor's.
  absl::StatusOr<v1::AccountingResponse> MergeHistory(
      StateStore::HistoryCursor& cursor) &&;

  // Whether the page holds as much as it may (the live part: nothing past
  // its last row can be added without a look at the rows before it).
  bool full() const { return full_; }
  uint64_t after() const { return after_; }
  const v1::AccountingRequest& request() const { return request_; }
  const Caller& caller() const { return caller_; }
  v1::AccountingResponse& response() { return response_; }

 private:
  v1::AccountingRequest request_;
  Caller caller_;
  int64_t now_ms_;
  uint64_t after_;
  Limits limits_;
  v1::AccountingResponse response_;
  size_t bytes_ = 0;
  uint64_t last_seen_;
  bool full_ = false;
};

}  // namespace gantry
