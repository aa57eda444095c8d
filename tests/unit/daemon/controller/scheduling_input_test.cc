// The controller's translation of job records into the scheduler's input
// (daemon/controller/scheduling_input.h): what the scheduler is told of a
// job's --dataset-locality.
#include "daemon/controller/scheduling_input.h"

#include <catch2/catch.hpp>

namespace gantry {
namespace {

TEST_CASE("a job's dataset locality reaches the scheduler",
          "[controller][scheduling_input]") {
  v1::JobRecord record;
  record.set_id(7);
  record.mutable_spec()->set_nodes(2);
  CHECK(PendingJobOf(record, nullptr).dataset_locality ==
        DatasetLocality::kTopology);
  record.mutable_spec()->set_dataset_locality(v1::DATASET_LOCALITY_CACHE);
  const PendingJob pending = PendingJobOf(record, nullptr);
  CHECK(pending.dataset_locality == DatasetLocality::kCache);
  CHECK(pending.id == JobId(7));
  CHECK(pending.nodes == 2);
}

}  // namespace
}  // namespace gantry
