#!/usr/bin/env bash
# engine/ is the core that records/ builds on (DESIGN.md: "records depends on engine types only"), so no file under
# engine/ may include anything from records/. Usage: engine_without_records.sh <path to engine/>.
set -u
engine_dir="${1:?usage: $0 <engine dir>}"
if [ ! -d "$engine_dir" ]; then
  echo "engine_without_records: $engine_dir is not a directory" >&2
  exit 2
fi
if found=$(grep -rn '#include "records/' "$engine_dir"); then
  echo "engine/ must not include records/ headers; found:" >&2
  echo "$found" >&2
  exit 1
fi
exit 0
