#pragma once
// NumPy's .npy files (format versions 1-3, little-endian, C order) for `ember run`: what a Python user saves with
// numpy.save and reads back with numpy.load. Every size is bounded before it is allocated or read: the header (at
// most 64 KiB), the rank, each dim, the element count (no overflow) and the payload, which must be exactly the
// bytes the file has left.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <vector>

namespace ember::tools {

struct NpyArray {
  int32_t dtype = 0;            // ember_dtype (ember.h): F32 F64 F16 I32 I64 U8 BOOL I16
  std::vector<int64_t> shape;   // rank 0 is a scalar
  std::vector<std::byte> data;  // row-major, little-endian
};

inline constexpr std::size_t kNpyMaxBytes = std::size_t{1} << 31;  // 2 GiB of elements
inline constexpr std::size_t kNpyMaxRank = 16;

// Bytes of one element of an ember_dtype (0 for an unknown one).
std::size_t npy_item_size(int32_t dtype);
// Reads `path`; ember::Error naming the file and the problem (not .npy, big-endian, Fortran order, a dtype Ember has
// no type for, sizes that disagree with the file).
NpyArray read_npy(const std::filesystem::path& path, std::size_t max_bytes = kNpyMaxBytes);
// Writes a version 1.0 file; ember::Error when it cannot.
void write_npy(const std::filesystem::path& path, const NpyArray& a);

}  // namespace ember::tools
