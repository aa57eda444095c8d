// gantry-plant-record: writes a job or node record, given in protobuf text
// format on stdin, straight into a stopped gantryd's state (DIR is
// --state-dir), bypassing every check of the controller: how a record
// stored by a version that did not check its fields looks to the current
// one. For tests/integration/test_hostile_input.py.
//
//   gantry-plant-record DIR job|node < record.txtpb
//
// A job's id must be set (the store's next job id moves past it); a node's
// name.
#include <iostream>
#include <iterator>
#include <string>

#include <google/protobuf/text_format.h>

#include "daemon/store/rocksdb_store.h"

int main(int argc, char** argv) {
  const std::string kind = argc == 3 ? argv[2] : "";
  if (kind != "job" && kind != "node") {
    std::cerr << "usage: gantry-plant-record STATE_DIR job|node < record\n";
    return 2;
  }
  const std::string text(std::istreambuf_iterator<char>(std::cin), {});
  gantry::StateStore::Batch batch;
  bool parsed;
  if (kind == "job") {
    gantry::v1::JobRecord job;
    parsed = google::protobuf::TextFormat::ParseFromString(text, &job) &&
             job.id() != 0;
    batch.jobs.push_back(job);
  } else {
    gantry::v1::NodeRecord node;
    parsed = google::protobuf::TextFormat::ParseFromString(text, &node) &&
             !node.name().empty();
    batch.nodes.push_back(node);
  }
  if (!parsed) {
    std::cerr << "gantry-plant-record: stdin is not a " << kind
              << " record with its " << (kind == "job" ? "id" : "name") << "\n";
    return 2;
  }
  auto store = gantry::RocksDbStore::Open(std::string(argv[1]) + "/db");
  if (!store.ok()) {
    std::cerr << "gantry-plant-record: " << store.status() << "\n";
    return 1;
  }
  auto snapshot = (*store)->Load();
  if (!snapshot.ok()) {
    std::cerr << "gantry-plant-record: " << snapshot.status() << "\n";
    return 1;
  }
  if (!batch.jobs.empty() && snapshot->next_job_id <= batch.jobs[0].id()) {
    batch.next_job_id = batch.jobs[0].id() + 1;
  }
  if (absl::Status status = (*store)->Commit(batch, /*sync=*/true);
      !status.ok()) {
    std::cerr << "gantry-plant-record: " << status << "\n";
    return 1;
  }
  return 0;
}
