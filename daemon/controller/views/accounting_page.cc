#include "daemon/controller/views/accounting_page.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "daemon/controller/core/goodput.h"
#include "daemon/controller/core/job_filter.h"

namespace gantry {

AccountingPage::AccountingPage(v1::AccountingRequest request, Caller caller,
                               int64_t now_ms, uint64_t after, Limits limits)
    : request_(std::move(request)),
      caller_(std::move(caller)),
      now_ms_(now_ms),
      after_(after),
      limits_(limits),
      last_seen_(after) {}

bool AccountingPage::Qualifies(const v1::JobRecord& record) const {
  return caller_.MayManage(record.uid()) &&
         MatchesFilter(request_.filter(), record) &&
         ActiveInWindow(record, request_.start_ms(), request_.end_ms(),
                        now_ms_);
}

v1::JobRecord AccountingPage::RowOf(v1::JobRecord record) const {
  ClearSubmittedPayload(*record.mutable_spec());
  *record.mutable_goodput() =
      ToProto(SumTimeline(GoodputTimeline(record, now_ms_)));
  return record;
}

bool AccountingPage::Add(v1::JobRecord row) {
  if (full_ || response_.jobs_size() >= static_cast<int>(limits_.jobs) ||
      bytes_ >= limits_.bytes) {
    full_ = true;
    return false;
  }
  bytes_ += row.ByteSizeLong();
  last_seen_ = row.id();
  *response_.add_jobs() = std::move(row);
  return true;
}

void AccountingPage::Pass(uint64_t id) {
  if (!full_) last_seen_ = id;
}

absl::StatusOr<v1::AccountingResponse> AccountingPage::MergeHistory(
    StateStore::HistoryCursor& cursor) && {
  // The live rows, ahead of the history's in id order where theirs are
  // lower. A full live part reaches only up to its last row.
  google::protobuf::RepeatedPtrField<v1::JobRecord> live;
  live.Swap(response_.mutable_jobs());
  const bool live_cut = full_;
  const uint64_t horizon = live_cut && !live.empty()
                               ? live.Get(live.size() - 1).id()
                               : std::numeric_limits<uint64_t>::max();
  full_ = false;
  bytes_ = 0;
  last_seen_ = after_;
  auto next_live = live.begin();
  // False once the page is full.
  auto add_live_below = [&](uint64_t bound) {
    for (; next_live != live.end() && next_live->id() < bound; ++next_live) {
      if (!Add(std::move(*next_live))) return false;
    }
    return true;
  };
  size_t read_records = 0;
  size_t read_bytes = 0;
  bool history_cut = false;
  uint64_t cut_at = horizon;
  while (true) {
    absl::StatusOr<std::optional<StateStore::HistoryCursor::Entry>> entry =
        cursor.Next();
    if (!entry.ok()) return entry.status();
    if (!entry->has_value() || (*entry)->id > horizon) break;
    if (read_records >= limits_.history_records ||
        read_bytes >= limits_.history_bytes) {
      history_cut = true;
      cut_at = (*entry)->id;
      break;
    }
    ++read_records;
    read_bytes += (*entry)->bytes;
    if (!add_live_below((*entry)->id)) break;
    // Also in the live part (a batch being written landed in the store
    // while it was read): the live copy is the newer, listed once.
    if (next_live != live.end() && next_live->id() == (*entry)->id) continue;
    std::optional<v1::JobRecord>& record = (*entry)->record;
    if (record && Qualifies(*record)) {
      if (!Add(RowOf(std::move(*record)))) break;
    } else {
      Pass((*entry)->id);
    }
  }
  if (!full_) {
    add_live_below(history_cut ? cut_at : std::numeric_limits<uint64_t>::max());
  }
  if (full_ || history_cut || live_cut) {
    response_.set_next_page_token(absl::StrCat(last_seen_));
  }
  return std::move(response_);
}

}  // namespace gantry
