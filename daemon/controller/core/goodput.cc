#include "daemon/controller/core/goodput.h"

#include <algorithm>

namespace gantry {
namespace {

using Segment = GoodputKind;

// Appends intervals from a cursor that only moves forward: a boundary at
// or before the cursor adds nothing, so boundaries out of order shorten a
// segment instead of overlapping. A pre-flight window, when set, takes its
// part of whatever segment runs across it.
class TimelineBuilder {
 public:
  TimelineBuilder(int64_t begin_ms, int64_t limit_ms)
      : cursor_(begin_ms), limit_(limit_ms) {}

  void SetPreflight(int64_t begin_ms, int64_t end_ms) {
    preflight_begin_ = begin_ms;
    preflight_end_ = end_ms;
  }

  void Advance(Segment segment, int64_t until_ms) {
    until_ms = std::min(until_ms, limit_);
    const bool preflight =
        preflight_begin_ > 0 && preflight_begin_ < preflight_end_;
    while (cursor_ < until_ms) {
      if (preflight && cursor_ >= preflight_begin_ &&
          cursor_ < preflight_end_) {
        Add(Segment::kPreflight, std::min(preflight_end_, until_ms));
      } else if (preflight && cursor_ < preflight_begin_ &&
                 preflight_begin_ < until_ms) {
        Add(segment, preflight_begin_);
      } else {
        Add(segment, until_ms);
      }
    }
  }

  std::vector<GoodputInterval> Take() { return std::move(intervals_); }

 private:
  void Add(Segment segment, int64_t end_ms) {
    if (!intervals_.empty() && intervals_.back().segment == segment &&
        intervals_.back().end_ms == cursor_) {
      intervals_.back().end_ms = end_ms;
    } else {
      intervals_.push_back({segment, cursor_, end_ms});
    }
    cursor_ = end_ms;
  }

  int64_t cursor_;
  const int64_t limit_;
  int64_t preflight_begin_ = 0;
  int64_t preflight_end_ = 0;
  std::vector<GoodputInterval> intervals_;
};

// A job that says it will report progress (a checkpoint directory, a hang
// timeout) or has: before its first report an attempt is starting. Others
// give no sign of their start-up, so their running time is productive.
bool ReportsProgress(const v1::JobRecord& job) {
  if (!job.spec().checkpoint_dir().empty() ||
      job.spec().hang_timeout_seconds() > 0 ||
      job.latest_checkpoint().time_ms() > 0) {
    return true;
  }
  return std::any_of(job.attempts().begin(), job.attempts().end(),
                     [](const v1::AttemptRecord& attempt) {
                       return attempt.first_progress_ms() > 0;
                     });
}

bool Ended(const v1::JobRecord& job) {
  return job.end_time_ms() > 0 && job.state() != v1::PENDING &&
         job.state() != v1::RUNNING;
}

}  // namespace

int64_t GoodputTotals::Total() const {
  int64_t total = 0;
  for (int64_t value : ms) total += value;
  return total;
}

double GoodputTotals::Ettr() const {
  const int64_t after_queue = Total() - (*this)[Segment::kQueued];
  if (after_queue <= 0) return 0.0;
  return static_cast<double>((*this)[Segment::kProductive]) /
         static_cast<double>(after_queue);
}

GoodputTotals& GoodputTotals::operator+=(const GoodputTotals& other) {
  for (size_t i = 0; i < kGoodputKinds; ++i) ms[i] += other.ms[i];
  return *this;
}

bool AttemptEndedByFailure(const v1::AttemptRecord& attempt) {
  if (attempt.end_time_ms() <= 0) return false;
  if (attempt.fault_time_ms() > 0) return true;
  const std::string& reason = attempt.end_reason();
  return reason == "NonZeroExitCode" || reason == "Signal" ||
         reason == "OutOfMemory" || reason == "NodeFail" || reason == "Hang";
}

std::vector<GoodputInterval> GoodputTimeline(const v1::JobRecord& job,
                                             int64_t now_ms) {
  if (job.submit_time_ms() <= 0) return {};
  const int64_t limit = Ended(job) ? job.end_time_ms() : now_ms;
  TimelineBuilder timeline(job.submit_time_ms(), limit);
  const bool reports_progress = ReportsProgress(job);
  bool after_failure = false;
  const int count = job.attempts_size();
  for (int i = 0; i < count; ++i) {
    const v1::AttemptRecord& attempt = job.attempts(i);
    const int64_t start = attempt.start_time_ms();
    if (start <= 0) continue;
    int64_t end = attempt.end_time_ms();
    if (end <= 0) {
      // Still running, or (a record cut short) ended before the next.
      end = i + 1 < count ? job.attempts(i + 1).start_time_ms() : limit;
    }
    timeline.Advance(after_failure ? Segment::kRecovering : Segment::kQueued,
                     start);
    // A pre-flight still running lasts, so far, to the attempt's end.
    timeline.SetPreflight(
        attempt.preflight_start_ms(),
        attempt.preflight_end_ms() > 0 ? attempt.preflight_end_ms() : end);
    const int64_t running =
        attempt.ranks_running_ms() > 0 ? attempt.ranks_running_ms() : start;
    timeline.Advance(after_failure ? Segment::kRecovering : Segment::kStarting,
                     running);
    const bool failed = AttemptEndedByFailure(attempt);
    const int64_t fault =
        failed && attempt.fault_time_ms() > 0 ? attempt.fault_time_ms() : end;
    // A job that reports nothing makes progress once every rank runs; an
    // attempt whose ranks never all ran (it died staging its datasets, or
    // launching) never got going: starting, not lost work.
    const int64_t progress = reports_progress ? attempt.first_progress_ms()
                                              : attempt.ranks_running_ms();
    if (progress > 0) {
      timeline.Advance(Segment::kStarting, progress);
      if (failed) {
        timeline.Advance(Segment::kProductive, attempt.last_checkpoint_ms());
        timeline.Advance(Segment::kLost, fault);
      } else {
        timeline.Advance(Segment::kProductive, end);
      }
    } else {
      timeline.Advance(Segment::kStarting, fault);  // never got going
    }
    timeline.Advance(failed ? Segment::kDetecting : Segment::kStarting, end);
    timeline.SetPreflight(0, 0);
    after_failure = failed;
  }
  // Waiting for the next attempt, or ended while waiting.
  timeline.Advance(after_failure ? Segment::kRecovering : Segment::kQueued,
                   limit);
  return timeline.Take();
}

GoodputTotals SumTimeline(const std::vector<GoodputInterval>& timeline,
                          int64_t from_ms, int64_t to_ms) {
  GoodputTotals totals;
  for (const GoodputInterval& interval : timeline) {
    const int64_t begin = std::max(interval.begin_ms, from_ms);
    const int64_t end = std::min(interval.end_ms, to_ms);
    if (end > begin) totals[interval.segment] += end - begin;
  }
  return totals;
}

v1::GoodputSplit ToProto(const GoodputTotals& totals) {
  v1::GoodputSplit split;
  split.set_queued_ms(totals[Segment::kQueued]);
  split.set_starting_ms(totals[Segment::kStarting]);
  split.set_productive_ms(totals[Segment::kProductive]);
  split.set_lost_ms(totals[Segment::kLost]);
  split.set_detecting_ms(totals[Segment::kDetecting]);
  split.set_recovering_ms(totals[Segment::kRecovering]);
  split.set_preflight_ms(totals[Segment::kPreflight]);
  split.set_ettr(totals.Ettr());
  return split;
}

GoodputTotals FromProto(const v1::GoodputSplit& split) {
  GoodputTotals totals;
  totals[Segment::kQueued] = split.queued_ms();
  totals[Segment::kStarting] = split.starting_ms();
  totals[Segment::kProductive] = split.productive_ms();
  totals[Segment::kLost] = split.lost_ms();
  totals[Segment::kDetecting] = split.detecting_ms();
  totals[Segment::kRecovering] = split.recovering_ms();
  totals[Segment::kPreflight] = split.preflight_ms();
  return totals;
}

}  // namespace gantry
