#include "agent/datasets/crc32c.h"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace gantry::agent {
namespace {

constexpr uint32_t kReversedPolynomial = 0x82F63B78;

constexpr std::array<uint32_t, 256> MakeTable() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t crc = i;
    for (int bit = 0; bit < 8; ++bit) {
      crc = (crc >> 1) ^ ((crc & 1) ? kReversedPolynomial : 0);
    }
    table[i] = crc;
  }
  return table;
}

constexpr std::array<uint32_t, 256> kTable = MakeTable();

uint32_t TableCrc(uint32_t crc, const unsigned char* bytes, size_t size) {
  for (size_t i = 0; i < size; ++i) {
    crc = kTable[(crc ^ bytes[i]) & 0xFF] ^ (crc >> 8);
  }
  return crc;
}

#if defined(__x86_64__)
// Built for SSE 4.2 on its own, so the rest of the binary keeps the
// baseline instruction set; called only where the CPU says it has it.
__attribute__((target("sse4.2"))) uint32_t InstructionCrc(
    uint32_t crc, const unsigned char* bytes, size_t size) {
  uint64_t wide = crc;
  while (size >= 8) {
    uint64_t word = 0;
    std::memcpy(&word, bytes, sizeof(word));
    wide = _mm_crc32_u64(wide, word);
    bytes += 8;
    size -= 8;
  }
  crc = static_cast<uint32_t>(wide);
  while (size > 0) {
    crc = _mm_crc32_u8(crc, *bytes);
    ++bytes;
    --size;
  }
  return crc;
}

bool CpuHasCrcInstruction() {
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
}
#endif

}  // namespace

uint32_t Crc32c(uint32_t crc, const void* data, size_t size) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  crc = ~crc;
#if defined(__x86_64__)
  if (CpuHasCrcInstruction()) return ~InstructionCrc(crc, bytes, size);
#endif
  return ~TableCrc(crc, bytes, size);
}

uint32_t Crc32cByTable(uint32_t crc, const void* data, size_t size) {
  return ~TableCrc(~crc, static_cast<const unsigned char*>(data), size);
}

}  // namespace gantry::agent
