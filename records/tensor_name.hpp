#pragma once
// Tensor names read from files (Ember records, safetensors headers) end up in terminals, logs, load reports and
// Python strings. A name that is not valid UTF-8, or that carries control characters (an ANSI escape sequence, a
// carriage return that overwrites the line before it), is refused when the file is read; and every message that
// quotes bytes from a file goes through escape_file_text, so that even the refusal prints nothing raw.
#include <string>
#include <string_view>

namespace ember {

// Why `name` cannot be a tensor name (empty string when it can): empty, not well-formed UTF-8 (overlong forms,
// surrogates, code points above U+10FFFF, truncated sequences), or holding a C0/C1 control character or DEL.
std::string tensor_name_problem(std::string_view name);

// `text` made safe to print: printable ASCII and well-formed non-control UTF-8 as they are; backslash as "\\";
// every other byte as "\xNN". Never longer than 4x the input (plus nothing).
std::string escape_file_text(std::string_view text);

// escape_file_text(text) in single quotes, cut after `max_bytes` input bytes ("..." marks the cut).
std::string quote_file_text(std::string_view text, std::size_t max_bytes = 200);

}  // namespace ember
