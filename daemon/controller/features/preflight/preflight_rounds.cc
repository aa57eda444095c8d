#include "daemon/controller/features/preflight/preflight_rounds.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace gantry {

std::optional<PreflightOptions::Mode> ParsePreflightMode(
    const std::string& text) {
  if (text == "off") return PreflightOptions::Mode::kOff;
  if (text == "multinode") return PreflightOptions::Mode::kMultiNode;
  if (text == "all") return PreflightOptions::Mode::kAll;
  return std::nullopt;
}

bool PreflightWanted(const PreflightOptions& options, const v1::JobSpec& spec,
                     int nodes) {
  if (spec.has_preflight()) return spec.preflight();
  switch (options.mode) {
    case PreflightOptions::Mode::kOff:
      return false;
    case PreflightOptions::Mode::kMultiNode:
      return nodes >= 2;
    case PreflightOptions::Mode::kAll:
      return true;
  }
  return false;
}

uint32_t PreflightRounds::PortOf(const std::string& node) const {
  auto it = ports_.find(node);
  return it == ports_.end() ? 0 : it->second;
}

std::string PreflightRounds::NewToken() {
  return absl::StrFormat("%016x%016x", random_(), random_());
}

PreflightRounds::Round& PreflightRounds::Begin(uint64_t job_id, Round round) {
  return rounds_[job_id] = std::move(round);
}

PreflightRounds::Round* PreflightRounds::Find(uint64_t job_id,
                                              uint32_t attempt) {
  auto it = rounds_.find(job_id);
  if (it == rounds_.end() || it->second.attempt != attempt) return nullptr;
  return &it->second;
}

std::vector<uint64_t> PreflightRounds::Overdue(int64_t now_ms) const {
  std::vector<uint64_t> jobs;
  for (const auto& [job_id, round] : rounds_) {
    if (now_ms >= round.deadline_ms) jobs.push_back(job_id);
  }
  return jobs;
}

bool PreflightRounds::Answer(Round& round, const std::string& node,
                             const v1::PreflightResult& result) {
  if (std::find(round.nodes.begin(), round.nodes.end(), node) ==
      round.nodes.end()) {
    return false;
  }
  round.answers[node] = result;
  return round.answers.size() == round.nodes.size();
}

}  // namespace gantry
