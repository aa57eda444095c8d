#include "common/dataset_spec.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "common/job_options.h"
#include "common/job_request.h"
#include "tests/unit/support/status_message.h"

namespace gantry {
namespace dataset_spec_test {

using testing::Message;

TEST_CASE("dataset option splits NAME:PATH at the first colon",
          "[dataset_spec]") {
  absl::StatusOr<DatasetDeclaration> parsed =
      ParseDatasetOption("imagenet:/shared/data:v2");
  REQUIRE(parsed.ok());
  CHECK(parsed->name == "imagenet");
  CHECK(parsed->path == "/shared/data:v2");
  CHECK(DatasetVariableName(parsed->name) == "GANTRY_DATASET_imagenet");
}

TEST_CASE("dataset option: version by content or by metadata after the name",
          "[dataset_spec]") {
  absl::StatusOr<DatasetDeclaration> content =
      ParseDatasetOption("train,version=content:/shared/a,b:c");
  REQUIRE(content.ok());
  CHECK(content->name == "train");
  CHECK(content->path == "/shared/a,b:c");
  CHECK(content->version_by_content);
  absl::StatusOr<DatasetDeclaration> metadata =
      ParseDatasetOption("train,version=metadata:/shared/a");
  REQUIRE(metadata.ok());
  CHECK_FALSE(metadata->version_by_content);
  CHECK_FALSE(ParseDatasetOption("train:/shared/a")->version_by_content);
  absl::StatusOr<DatasetDeclaration> unknown =
      ParseDatasetOption("train,version=mtime:/shared/a");
  REQUIRE_FALSE(unknown.ok());
  CHECK_THAT(Message(unknown.status()),
             Catch::Contains("unknown option 'version=mtime'"));
  CHECK_FALSE(ParseDatasetOption("tr-ain,version=content:/x").ok());
}

TEST_CASE("dataset option refuses malformed values", "[dataset_spec]") {
  struct Row {
    std::string value;
    std::string message_part;
  };
  const std::vector<Row> rows = {
      {"imagenet", "expected NAME:PATH"},
      {":/shared/x", "name is empty"},
      {"image-net:/x", "letters, digits and underscores"},
      {"1st:/x", "not starting with a digit"},
      {"a b:/x", "letters, digits and underscores"},
      {"name:", "has no path"},
      {std::string(65, 'a') + ":/x", "the limit is 64"},
  };
  for (const Row& row : rows) {
    INFO(row.value);
    absl::StatusOr<DatasetDeclaration> parsed = ParseDatasetOption(row.value);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK_THAT(Message(parsed.status()), Catch::Contains(row.message_part));
  }
}

TEST_CASE("dataset paths must be absolute and in normal form",
          "[dataset_spec]") {
  CHECK(CheckDatasetPath("/shared/imagenet").ok());
  CHECK(CheckDatasetPath("/a").ok());
  const std::vector<std::string> bad = {"",
                                        "relative/x",
                                        "/",
                                        "/shared/",
                                        "/a//b",
                                        "/a/./b",
                                        "/a/../etc",
                                        "/a/..",
                                        "/a\nb",
                                        std::string("/a\0b", 4),
                                        "/" + std::string(5000, 'x')};
  for (const std::string& path : bad) {
    INFO(path);
    CHECK(CheckDatasetPath(path).code() == absl::StatusCode::kInvalidArgument);
  }
}

TEST_CASE("a job's dataset list: bounded, names unique", "[dataset_spec]") {
  std::vector<DatasetDeclaration> list = {{"a", "/x"}, {"b", "/y"}};
  CHECK(CheckDatasetList(list).ok());
  list.push_back({"a", "/z"});
  CHECK_THAT(Message(CheckDatasetList(list)),
             Catch::Contains("declared twice"));
  list.pop_back();
  list.push_back({"c", "/z/../etc"});
  CHECK_THAT(Message(CheckDatasetList(list)), Catch::Contains("--dataset c: "));
  std::vector<DatasetDeclaration> many;
  for (size_t i = 0; i <= kMaxDatasetsPerJob; ++i) {
    many.push_back({"d" + std::to_string(i), "/data/" + std::to_string(i)});
  }
  CHECK_THAT(Message(CheckDatasetList(many)), Catch::Contains("the limit is"));
}

TEST_CASE("the dataset option: several allowed, the command line wins per name",
          "[dataset_spec]") {
  JobRequest request;
  REQUIRE(ApplyScriptDirectives("#!/bin/sh\n"
                                "#SBATCH --dataset=train:/shared/train\n"
                                "#SBATCH --dataset eval:/shared/eval\n",
                                request)
              .ok());
  REQUIRE(ApplyJobOptions({"--dataset=train:/shared/train-v2"}, "command line",
                          request)
              .ok());
  REQUIRE(request.datasets.size() == 2);
  CHECK(request.datasets[0].name == "train");
  CHECK(request.datasets[0].path == "/shared/train-v2");
  CHECK(request.datasets[1].name == "eval");
  CHECK(request.datasets[1].path == "/shared/eval");
}

TEST_CASE("dataset option errors name the option and the line",
          "[dataset_spec]") {
  JobRequest request;
  absl::Status status = ApplyScriptDirectives(
      "#!/bin/sh\n#SBATCH --dataset=bad-name:/x\n", request);
  CHECK_THAT(Message(status),
             Catch::Contains("#SBATCH line 2: invalid value") &&
                 Catch::Contains("--dataset") &&
                 Catch::Contains("letters, digits and underscores"));
  CHECK_FALSE(ApplyJobOptions({"--dataset"}, "command line", request).ok());
  CHECK_THAT(
      Message(ApplyJobOptions({"--dataset=a:/x\x01"}, "command line", request)),
      Catch::Contains("control characters"));
}

}  // namespace dataset_spec_test
}  // namespace gantry
