// The safetensors parser fuzzer (libFuzzer; built in the clang + ASan/UBSan build of run_fuzz.sh, run by the
// safetensors_fuzz test): every input is parsed as a safetensors file. A malformed one must fail with a RecordError
// and nothing else; a valid one must describe tensors that lie inside the input, and survive a round trip through
// the writer unchanged. Seeds: tests/fuzz/safetensors_corpus (gen_corpus.py), whose hostile files are also gtest
// cases (tests/records_safetensors_test.cpp).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <span>

#include "records/safetensors.hpp"

namespace {

[[noreturn]] void broken(const char* rule) {
  // A broken rule is a crash for libFuzzer, which saves the input.
  std::fprintf(stderr, "safetensors_fuzz: %s\n", rule);
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ember;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  SafetensorsHeader h;
  try {
    h = parse_safetensors(bytes, "<fuzz>");
  } catch (const RecordError&) {
    return 0;  // refused, as it should be for anything malformed
  }
  // Accepted: every tensor inside the buffer, its bytes matching shape x dtype; rebuilt and written, it reads back
  // the same.
  Record r;
  for (const auto& e : h.entries) {
    if (e.begin > e.end || h.buffer_start + e.end > size) broken("an accepted tensor lies outside the input");
    const auto raw = bytes.subspan(h.buffer_start + e.begin, e.end - e.begin);
    if (e.stored_dtype == "BF16") continue;  // widened on reading: not written back as BF16
    const ParamKind kind = dtype_is_float(e.dtype) ? ParamKind::Float
                           : e.dtype == DType::Bool ? ParamKind::Bool
                                                    : ParamKind::Int;
    r.params.emplace(e.name, ParamRecord{0, kind, ParamRole::Trainable,
                                         TensorData(std::vector<std::byte>(raw.begin(), raw.end()), e.shape, e.dtype)});
  }
  const auto again = safetensors_bytes(r, h.metadata);
  SafetensorsHeader h2;
  try {
    h2 = parse_safetensors(again, "<fuzz round trip>");
  } catch (const RecordError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    broken("the writer wrote a file the reader refuses");
  }
  if (h2.entries.size() != r.params.size() || h2.metadata != h.metadata) broken("the round trip changed the header");
  for (const auto& e : h2.entries) {
    const auto& want = r.params.at(e.name).data;
    if (!(e.shape == want.shape) || e.dtype != want.dtype || e.end - e.begin != want.bytes.size() ||
        (!want.bytes.empty() && std::memcmp(again.data() + h2.buffer_start + e.begin, want.bytes.data(),
                                            want.bytes.size()) != 0))
      broken("the round trip changed a tensor");
  }
  return 0;
}
