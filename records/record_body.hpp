#pragma once
// Internal to the recorders: the body of a record file (everything after the preamble, see recorder.hpp) through
// cereal. Kept apart from the container (record_file.cpp) so that cereal and rapidjson are parsed by one
// translation unit only, and so that the bounds checks on what cereal reads live next to the cereal code.
#include <cstdint>
#include <istream>
#include <ostream>
#include <string>

#include "records/recorder.hpp"

namespace ember::record_detail {

// Writes the body of `record`, whose dtypes already follow `precision` (convert_record). Throws RecordFormatError
// for a record the format cannot hold (rank > 8, over-long names, inconsistent bytes) before writing anything, and
// RecordIoError when the stream fails.
void write_body(std::ostream& out, const Record& record, RecorderKind kind, StoredPrecision precision,
                const std::string& file);

// Reads a body of `length` bytes from `in` (positioned at its first byte; its checksum already verified) into
// `info` (header fields and entries) and, when `record` is not null, the record with its payloads. Every size is
// checked against `length` before anything proportional to it is allocated; violations throw RecordFormatError.
void read_body(std::istream& in, uint64_t length, RecorderKind kind, const std::string& file, RecordFileInfo& info,
               Record* record);

}  // namespace ember::record_detail
