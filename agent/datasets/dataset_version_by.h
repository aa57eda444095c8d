// How a job's or a prefetch's dataset is versioned on the node, from its
// DatasetRef (--dataset=NAME,version=content:PATH; dataset_tree.h).
#pragma once

#include "agent/datasets/dataset_tree.h"
#include "gantry/v1/types.pb.h"

namespace gantry::agent {

inline DatasetVersionBy VersionByOf(const v1::DatasetRef& dataset) {
  return dataset.version_by() == v1::DATASET_VERSION_BY_CONTENT
             ? DatasetVersionBy::kContent
             : DatasetVersionBy::kMetadata;
}

}  // namespace gantry::agent
