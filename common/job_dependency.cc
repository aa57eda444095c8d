#include "common/job_dependency.h"

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/text.h"

namespace gantry {
namespace {

using Kind = DependencyTerm::Kind;
using State = DependencyVerdict::State;

constexpr std::size_t kMaxTerms = 1000;
constexpr uint32_t kMaxDelayMinutes = 366 * 24 * 60;

struct KindName {
  Kind kind;
  const char* name;
};
constexpr KindName kKindNames[] = {
    {Kind::kAfter, "after"},         {Kind::kAfterAny, "afterany"},
    {Kind::kAfterOk, "afterok"},     {Kind::kAfterNotOk, "afternotok"},
    {Kind::kSingleton, "singleton"},
};

const char* NameOf(Kind kind) {
  for (const KindName& entry : kKindNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "?";
}

absl::Status InvalidDependency(const std::string& part,
                               const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid dependency \"", part, "\": ", why));
}

// "afterok:12:13" or "after:12+5" into terms.
absl::Status ParseTerm(const std::string& text,
                       std::vector<DependencyTerm>& terms) {
  if (text == "singleton") {
    terms.push_back({Kind::kSingleton, 0, 0, std::nullopt});
    return absl::OkStatus();
  }
  const std::vector<std::string> fields = absl::StrSplit(text, ':');
  const KindName* kind = nullptr;
  for (const KindName& entry : kKindNames) {
    if (fields[0] == entry.name && entry.kind != Kind::kSingleton) {
      kind = &entry;
    }
  }
  if (kind == nullptr) {
    return InvalidDependency(
        text,
        "expected after, afterany, afterok, afternotok (each "
        "followed by :JOBID...) or singleton");
  }
  if (fields.size() < 2) return InvalidDependency(text, "no job id given");
  for (std::size_t i = 1; i < fields.size(); ++i) {
    std::string id_text = fields[i];
    uint32_t delay = 0;
    const std::size_t plus = id_text.find('+');
    if (plus != std::string::npos) {
      const std::string delay_text = id_text.substr(plus + 1);
      if (kind->kind != Kind::kAfter) {
        return InvalidDependency(text,
                                 "a +minutes delay is only allowed with after");
      }
      if (!IsDigits(delay_text) || !absl::SimpleAtoi(delay_text, &delay) ||
          delay > kMaxDelayMinutes) {
        return InvalidDependency(text,
                                 "the delay after '+' must be whole minutes");
      }
      id_text = id_text.substr(0, plus);
    }
    // ID_TASK: one task of an array.
    std::optional<uint32_t> array_task;
    const std::size_t underscore = id_text.find('_');
    if (underscore != std::string::npos) {
      const std::string task_text = id_text.substr(underscore + 1);
      uint32_t task = 0;
      if (!IsDigits(task_text) || !absl::SimpleAtoi(task_text, &task)) {
        return InvalidDependency(text, absl::StrCat("\"", id_text,
                                                    "\" is not a job id or an "
                                                    "array task (ID_TASK)"));
      }
      array_task = task;
      id_text = id_text.substr(0, underscore);
    }
    uint64_t id = 0;
    if (!IsDigits(id_text) || !absl::SimpleAtoi(id_text, &id) || id == 0) {
      return InvalidDependency(
          text, absl::StrCat("\"", id_text, "\" is not a job id"));
    }
    terms.push_back({kind->kind, id, delay, array_task});
  }
  return absl::OkStatus();
}

struct TermVerdict {
  State state = State::kWaiting;
  std::string detail;
  int64_t ready_at_ms = 0;
};

TermVerdict EvaluateTerm(
    const DependencyTerm& term,
    const std::function<std::optional<DependedJob>(uint64_t)>& lookup,
    bool singleton_blocked, int64_t now_ms) {
  using Phase = DependedJob::Phase;
  if (term.kind == Kind::kSingleton) {
    if (!singleton_blocked) return {State::kSatisfied, "", 0};
    return {State::kWaiting,
            "singleton: an earlier job of the same name and user is active", 0};
  }
  const std::string job = absl::StrCat("job ", term.job_id);
  const std::optional<DependedJob> other = lookup(term.job_id);
  // An unknown job cannot end well or start any more.
  const Phase phase = other ? other->phase : Phase::kFailed;
  const bool ended = phase == Phase::kCompleted || phase == Phase::kFailed;
  switch (term.kind) {
    case Kind::kAfter: {
      if (phase == Phase::kPending) {
        return {State::kWaiting, absl::StrCat(job, " has not started"), 0};
      }
      if (term.delay_minutes == 0 || !other || other->start_time_ms == 0) {
        return {State::kSatisfied, "", 0};
      }
      const int64_t ready =
          other->start_time_ms + int64_t{term.delay_minutes} * 60 * 1000;
      if (now_ms >= ready) return {State::kSatisfied, "", 0};
      return {State::kWaiting,
              absl::StrCat(job, " started less than ", term.delay_minutes,
                           " min ago"),
              ready};
    }
    case Kind::kAfterAny:
      if (ended) return {State::kSatisfied, "", 0};
      return {State::kWaiting, absl::StrCat(job, " has not ended"), 0};
    case Kind::kAfterOk:
      if (phase == Phase::kCompleted) return {State::kSatisfied, "", 0};
      if (phase == Phase::kFailed) {
        return {State::kNever,
                absl::StrCat("afterok:", term.job_id, " but ", job,
                             other ? " did not complete" : " does not exist"),
                0};
      }
      return {State::kWaiting, absl::StrCat(job, " has not ended"), 0};
    case Kind::kAfterNotOk:
      if (phase == Phase::kFailed) return {State::kSatisfied, "", 0};
      if (phase == Phase::kCompleted) {
        return {State::kNever,
                absl::StrCat("afternotok:", term.job_id, " but ", job,
                             " completed"),
                0};
      }
      return {State::kWaiting, absl::StrCat(job, " has not ended"), 0};
    case Kind::kSingleton:
      break;
  }
  return {State::kSatisfied, "", 0};
}

}  // namespace

absl::StatusOr<JobDependency> ParseDependency(const std::string& text) {
  JobDependency dependency;
  if (text.empty()) return dependency;
  const bool has_all = text.find(',') != std::string::npos;
  const bool has_any = text.find('?') != std::string::npos;
  if (has_all && has_any) {
    return InvalidDependency(
        text, "use either ',' (all of) or '?' (any of), not both");
  }
  dependency.any_of = has_any;
  const std::vector<std::string> parts =
      absl::StrSplit(text, has_any ? '?' : ',');
  for (const std::string& part : parts) {
    if (part.empty()) return InvalidDependency(text, "an empty term");
    if (absl::Status status = ParseTerm(part, dependency.terms); !status.ok()) {
      return status;
    }
    if (dependency.terms.size() > kMaxTerms) {
      return InvalidDependency(text.substr(0, 40) + "...",
                               absl::StrCat("more than ", kMaxTerms, " jobs"));
    }
  }
  return dependency;
}

namespace {

std::string TermId(const DependencyTerm& term) {
  return term.array_task ? absl::StrCat(term.job_id, "_", *term.array_task)
                         : absl::StrCat(term.job_id);
}

}  // namespace

std::string FormatDependency(const JobDependency& dependency) {
  std::string text;
  const char* separator = dependency.any_of ? "?" : ",";
  const DependencyTerm* previous = nullptr;
  for (const DependencyTerm& term : dependency.terms) {
    // Consecutive ids of one kind share it: afterok:1:2.
    if (previous != nullptr && previous->kind == term.kind &&
        term.kind != Kind::kSingleton) {
      absl::StrAppend(&text, ":", TermId(term));
    } else {
      if (!text.empty()) text += separator;
      text += NameOf(term.kind);
      if (term.kind != Kind::kSingleton)
        absl::StrAppend(&text, ":", TermId(term));
    }
    if (term.delay_minutes > 0) absl::StrAppend(&text, "+", term.delay_minutes);
    previous = &term;
  }
  return text;
}

DependencyVerdict EvaluateDependency(
    const JobDependency& dependency,
    const std::function<std::optional<DependedJob>(uint64_t)>& lookup,
    bool singleton_blocked, int64_t now_ms) {
  if (dependency.empty()) return {State::kSatisfied, "", 0};
  std::size_t satisfied = 0, never = 0;
  DependencyVerdict waiting{State::kWaiting, "", 0};
  std::string never_detail;
  for (const DependencyTerm& term : dependency.terms) {
    TermVerdict verdict = EvaluateTerm(term, lookup, singleton_blocked, now_ms);
    if (verdict.state == State::kSatisfied) {
      ++satisfied;
    } else if (verdict.state == State::kNever) {
      ++never;
      if (never_detail.empty()) never_detail = verdict.detail;
    } else {
      if (waiting.detail.empty()) waiting.detail = verdict.detail;
      if (verdict.ready_at_ms > 0 &&
          (waiting.ready_at_ms == 0 ||
           verdict.ready_at_ms < waiting.ready_at_ms)) {
        waiting.ready_at_ms = verdict.ready_at_ms;
      }
    }
  }
  const std::size_t total = dependency.terms.size();
  if (dependency.any_of) {
    if (satisfied > 0) return {State::kSatisfied, "", 0};
    if (never == total) return {State::kNever, never_detail, 0};
    return waiting;
  }
  if (never > 0) return {State::kNever, never_detail, 0};
  if (satisfied == total) return {State::kSatisfied, "", 0};
  return waiting;
}

}  // namespace gantry
