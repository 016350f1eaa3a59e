#pragma once
// Atomic file replacement, shared by the writers of records/ (Ember records, safetensors): the content goes to a
// hidden temporary file in the target's directory, is fsynced, then renamed over the target, and the directory is
// synced. On any failure the temporary is removed and the target keeps its old contents.
#include <filesystem>
#include <functional>

namespace ember::record_detail {

// Calls `fill(fd)` with the temporary file open for writing; `fill` writes through the descriptor (throwing on
// failure). Errors are RecordIoErrors naming `path` with `label` ("record", "safetensors").
void write_file_atomically(const std::filesystem::path& path, const char* label,
                           const std::function<void(int fd)>& fill);

// write(2) until all `n` bytes are written (EINTR retried); false on failure with errno set.
bool write_all(int fd, const char* p, std::size_t n);

}  // namespace ember::record_detail
