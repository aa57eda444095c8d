// gantry-plant-record: writes a job record, given in protobuf text format
// on stdin, straight into a stopped gantryd's state (DIR is --state-dir),
// bypassing every check of the controller: how a record stored by a
// version that did not check its fields looks to the current one. For
// tests/integration/test_hostile_input.py.
//
//   gantry-plant-record DIR < job.txtpb
//
// The record's id must be set; the store's next job id moves past it.
#include <iostream>
#include <iterator>
#include <string>

#include <google/protobuf/text_format.h>

#include "daemon/rocksdb_store.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: gantry-plant-record STATE_DIR < job.txtpb\n";
    return 2;
  }
  const std::string text(std::istreambuf_iterator<char>(std::cin), {});
  gantry::v1::JobRecord job;
  if (!google::protobuf::TextFormat::ParseFromString(text, &job) ||
      job.id() == 0) {
    std::cerr << "gantry-plant-record: stdin is not a JobRecord with an id\n";
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
  gantry::StateStore::Batch batch;
  batch.jobs.push_back(job);
  if (snapshot->next_job_id <= job.id()) batch.next_job_id = job.id() + 1;
  if (absl::Status status = (*store)->Commit(batch, /*sync=*/true);
      !status.ok()) {
    std::cerr << "gantry-plant-record: " << status << "\n";
    return 1;
  }
  return 0;
}
