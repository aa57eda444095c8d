#include "cli/client/job_listing.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace gantry::cli {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Arena blocks are kHugePage long (the arena asks for no larger one with
// the options below) and aligned to it, so that the kernel can back each
// with one huge page instead of 512 faults of 4 KiB.
void* AllocateBlock(size_t size) {
  void* block = std::aligned_alloc(
      kHugePage, (size + kHugePage - 1) / kHugePage * kHugePage);
  if (block == nullptr) throw std::bad_alloc();
  // Only advice: where huge pages are off, the block is ordinary memory.
  madvise(block, size, MADV_HUGEPAGE);
  return block;
}

void FreeBlock(void* block, size_t) { std::free(block); }

google::protobuf::ArenaOptions ListingArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = kHugePage;
  options.max_block_size = kHugePage;
  options.block_alloc = AllocateBlock;
  options.block_dealloc = FreeBlock;
  return options;
}

}  // namespace

JobListing::JobListing()
    : arena_(ListingArenaOptions()),
      jobs_(google::protobuf::Arena::Create<JobRecords>(&arena_, &arena_)) {}

void JobListing::TakeAll(JobRecords& page) {
  std::vector<v1::JobRecord*> moved(page.size());
  // Both fields are on this arena: the records change hands by pointer.
  page.UnsafeArenaExtractSubrange(0, page.size(), moved.data());
  for (v1::JobRecord* job : moved) jobs_->UnsafeArenaAddAllocated(job);
}

}  // namespace gantry::cli
