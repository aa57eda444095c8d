#include "common/dataset_spec.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "common/request_limits.h"
#include "common/split_view.h"
#include "common/text.h"

namespace gantry {
namespace {

constexpr size_t kMaxQuoted = 80;

}  // namespace

absl::Status CheckDatasetName(std::string_view name) {
  if (name.empty()) {
    return absl::InvalidArgumentError("the dataset name is empty");
  }
  if (name.size() > kMaxDatasetNameBytes) {
    return absl::InvalidArgumentError(
        Concat("the dataset name is ", name.size(), " bytes; the limit is ",
               kMaxDatasetNameBytes));
  }
  const bool identifier =
      !absl::ascii_isdigit(static_cast<unsigned char>(name[0])) &&
      std::all_of(name.begin(), name.end(), [](char c) {
        return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
      });
  if (!identifier) {
    return absl::InvalidArgumentError(Concat(
        "the dataset name ", QuoteForMessage(name, kMaxQuoted),
        " must be letters, digits and underscores, not starting with a digit "
        "(it names the variable GANTRY_DATASET_<NAME>)"));
  }
  return absl::OkStatus();
}

absl::Status CheckDatasetPath(std::string_view path) {
  if (path.size() > limits::kMaxPathBytes) {
    return absl::InvalidArgumentError(
        Concat("the dataset path is ", path.size(), " bytes; the limit is ",
               limits::kMaxPathBytes));
  }
  for (char c : path) {
    if (absl::ascii_iscntrl(static_cast<unsigned char>(c))) {
      return absl::InvalidArgumentError(
          "the dataset path must not contain control characters");
    }
  }
  const std::string quoted = QuoteForMessage(path, kMaxQuoted);
  if (path.empty() || path[0] != '/') {
    return absl::InvalidArgumentError(
        Concat("the dataset path ", quoted, " must be absolute"));
  }
  if (path == "/") {
    return absl::InvalidArgumentError(
        "the dataset path must be a directory below /, not / itself");
  }
  if (path.back() == '/') {
    return absl::InvalidArgumentError(
        Concat("the dataset path ", quoted, " must not end with a slash"));
  }
  for (std::string_view part : SplitView(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == "..") {
      return absl::InvalidArgumentError(Concat(
          "the dataset path ", quoted,
          " must be in normal form (no empty, \".\" or \"..\" components)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<DatasetDeclaration> ParseDatasetOption(std::string_view value) {
  const size_t colon = value.find(':');
  if (colon == std::string_view::npos) {
    return absl::InvalidArgumentError(
        "expected NAME:PATH, such as imagenet:/shared/imagenet");
  }
  std::string_view head = value.substr(0, colon);
  DatasetDeclaration declaration;
  declaration.path = std::string(value.substr(colon + 1));
  if (const size_t comma = head.find(','); comma != std::string_view::npos) {
    const std::string_view option = head.substr(comma + 1);
    head = head.substr(0, comma);
    if (option == "version=content") {
      declaration.version_by_content = true;
    } else if (option != "version=metadata") {
      return absl::InvalidArgumentError(Concat(
          "dataset ", head, ": unknown option '", option,
          "' (NAME,version=content:PATH or NAME,version=metadata:PATH)"));
    }
  }
  declaration.name = std::string(head);
  if (absl::Status status = CheckDatasetName(declaration.name); !status.ok()) {
    return status;
  }
  if (declaration.path.empty()) {
    return absl::InvalidArgumentError(
        Concat("dataset ", declaration.name, " has no path"));
  }
  return declaration;
}

absl::Status CheckDatasetList(const std::vector<DatasetDeclaration>& datasets) {
  if (datasets.size() > kMaxDatasetsPerJob) {
    return absl::InvalidArgumentError(
        Concat("the job declares ", datasets.size(), " datasets; the limit is ",
               kMaxDatasetsPerJob));
  }
  for (size_t i = 0; i < datasets.size(); ++i) {
    const DatasetDeclaration& dataset = datasets[i];
    if (absl::Status status = CheckDatasetName(dataset.name); !status.ok()) {
      return absl::InvalidArgumentError(
          Concat("--dataset: ", status.message()));
    }
    if (absl::Status status = CheckDatasetPath(dataset.path); !status.ok()) {
      return absl::InvalidArgumentError(
          Concat("--dataset ", dataset.name, ": ", status.message()));
    }
    for (size_t j = 0; j < i; ++j) {
      if (datasets[j].name == dataset.name) {
        return absl::InvalidArgumentError(
            Concat("--dataset: the name ", dataset.name, " is declared twice"));
      }
    }
  }
  return absl::OkStatus();
}

std::string DatasetVariableName(std::string_view name) {
  return Concat(kDatasetVariablePrefix, name);
}

}  // namespace gantry
