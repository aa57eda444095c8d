// Reading sbatch options: option words from the command line and the
// directive lines of a batch script, each looked up in the option table
// (job_option_table.h) and handed to its handler. What the options are and
// what each does is job_option_table.cc's.
#include "common/job_options.h"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "common/directive_lexer.h"
#include "common/edit_distance.h"
#include "common/job_option_table.h"
#include "common/option_values.h"
#include "common/text.h"

namespace gantry {
namespace {

using job_options_internal::AllOptions;
using job_options_internal::Arg;
using job_options_internal::FindLong;
using job_options_internal::FindShort;
using job_options_internal::OptionSpec;
using job_options_internal::OptionUse;

}  // namespace

bool OptionTakesNextWord(std::string_view word) {
  const OptionSpec* spec = nullptr;
  if (word.size() > 2 && word.substr(0, 2) == "--") {
    if (word.find('=') != std::string_view::npos) return false;
    spec = FindLong(word.substr(2));
  } else if (word.size() == 2 && word[0] == '-') {
    spec = FindShort(word[1]);
  }
  return spec != nullptr && spec->arg == Arg::kRequired;
}

namespace {

absl::Status UnknownLong(std::string_view source, std::string_view name) {
  constexpr std::size_t kMaxDistance = 2;
  const OptionSpec* best = nullptr;
  std::size_t best_distance = kMaxDistance + 1;
  for (const OptionSpec& spec : AllOptions()) {
    // Nothing is like an empty name ("--=").
    if (name.empty()) break;
    const std::size_t distance =
        EditDistance(name, spec.long_name, kMaxDistance);
    if (distance < best_distance) {
      best = &spec;
      best_distance = distance;
    }
  }
  std::string message = Concat(source, ": unknown option --",
                               EscapeForMessage(name, kMaxQuotedOptionChars));
  if (best != nullptr) {
    message += Concat(" (did you mean --", best->long_name, "?)");
  }
  return absl::InvalidArgumentError(message);
}

}  // namespace

absl::Status ApplyJobOptions(const std::vector<std::string>& words,
                             std::string_view source, JobRequest& request) {
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string_view word = words[i];
    if (word.size() < 2 || word[0] != '-' || word == "--") {
      return absl::InvalidArgumentError(
          Concat(source, ": unexpected argument ",
                 QuoteForMessage(word, kMaxQuotedOptionChars),
                 " (expected an option such as --nodes=2)"));
    }
    const OptionSpec* spec = nullptr;
    std::optional<std::string_view> value;
    if (word[1] == '-') {
      const std::string_view body = word.substr(2);
      const std::size_t equals = body.find('=');
      const std::string_view name = body.substr(0, equals);
      spec = FindLong(name);
      if (spec == nullptr) return UnknownLong(source, name);
      if (equals != std::string_view::npos) value = body.substr(equals + 1);
      if (spec->arg == Arg::kNone && value.has_value()) {
        return absl::InvalidArgumentError(
            Concat(source, ": --", spec->long_name, " takes no value (got ",
                   QuoteForMessage(*value, kMaxQuotedOptionChars), ")"));
      }
    } else {
      // "-nodes=2" would otherwise read as -n "odes=2": say what was meant.
      const std::string_view rest = word.substr(1);
      const std::string_view long_name = rest.substr(0, rest.find('='));
      if (long_name.size() > 1 && FindLong(long_name) != nullptr) {
        return absl::InvalidArgumentError(
            Concat(source, ": unknown option ",
                   EscapeForMessage(word, kMaxQuotedOptionChars),
                   " (long options take two dashes: --", long_name, ")"));
      }
      spec = FindShort(word[1]);
      if (spec == nullptr) {
        return absl::InvalidArgumentError(
            Concat(source, ": unknown option -",
                   EscapeForMessage(word.substr(1, 1), kMaxQuotedOptionChars)));
      }
      // getopt semantics: everything after the letter is the value ("-N2").
      if (word.size() > 2) {
        value = word.substr(2);
        if (spec->arg == Arg::kNone) {
          return absl::InvalidArgumentError(
              Concat(source, ": -", std::string(1, spec->short_name),
                     " takes no value (got ",
                     QuoteForMessage(*value, kMaxQuotedOptionChars), ")"));
        }
      }
    }
    if (spec->arg == Arg::kRequired && !value.has_value()) {
      if (i + 1 >= words.size()) {
        return absl::InvalidArgumentError(
            Concat(source, ": missing value for --", spec->long_name));
      }
      value = words[++i];
    }
    if (spec->arg != Arg::kNone && value.has_value() && value->empty()) {
      return absl::InvalidArgumentError(
          Concat(source, ": empty value for --", spec->long_name));
    }
    absl::Status status = spec->apply(OptionUse{*spec, source, value}, request);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

absl::Status ApplyScriptDirectives(std::string_view script,
                                   JobRequest& request) {
  absl::StatusOr<std::vector<DirectiveLine>> lines =
      ExtractDirectiveLines(script);
  if (!lines.ok()) return lines.status();
  for (const DirectiveLine& line : *lines) {
    // Each line stands alone, as in sbatch: "-J" at the end of one line
    // does not take its value from the next.
    absl::Status status = ApplyJobOptions(
        line.words, Concat(line.keyword, " line ", line.line_number), request);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace gantry
