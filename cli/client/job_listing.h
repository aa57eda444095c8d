// The job records of a listing (gantry queue, sacct, scontrol show job),
// gathered from all its pages into one protobuf arena.
//
// 50,000 jobs are about 100 MB of message objects once parsed (a record
// and its spec are 1 KB of fields before their strings). Allocated one by
// one, the parse was half of `gantry queue`'s time: a malloc per message
// and string, and a page fault per 4 KiB of fresh memory (23,000 of them).
// The arena takes its memory in 2 MiB blocks advised for transparent huge
// pages, and each page's records move into the listing by pointer.
//
// Not thread-safe; the records live as long as the listing.
#pragma once

#include <google/protobuf/arena.h>
#include <google/protobuf/repeated_ptr_field.h>

#include "gantry/v1/types.pb.h"

namespace gantry::cli {

using JobRecords = google::protobuf::RepeatedPtrField<v1::JobRecord>;

class JobListing {
 public:
  JobListing();
  JobListing(const JobListing&) = delete;
  JobListing& operator=(const JobListing&) = delete;

  JobRecords& jobs() { return *jobs_; }
  // Where a page is parsed before its records join the listing.
  google::protobuf::Arena& arena() { return arena_; }
  // Moves every record of `page` (a message on this listing's arena) to
  // the end of jobs(), without copying.
  void TakeAll(JobRecords& page);

 private:
  google::protobuf::Arena arena_;
  JobRecords* jobs_;
};

}  // namespace gantry::cli
