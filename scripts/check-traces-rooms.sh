#!/usr/bin/env bash
# The rooms of traces/ (docs/ARCHITECTURE.md, "traces/: three rooms"), checked on the sources:
#   record/  (inside the user's program) includes only record/common, its own folder and operations.def;
#   import/  (the shared pipeline) includes no reader's and no recorder's header;
#   read/F/  (the reader of format F) includes import/'s headers and its own folder's, no other reader's;
# and no source file under traces/ is over 1,200 lines. Exit 1 with each breach named.
set -euo pipefail
cd "$(dirname "$0")/../traces"
status=0
breach() {
  echo "traces rooms: $1"
  status=1
}
while IFS= read -r -d '' file; do
  dir=$(dirname "$file")
  lines=$(wc -l <"$file")
  ((lines <= 1200)) || breach "$file has $lines lines (at most 1,200: split it by what its parts do)"
  while IFS= read -r inc; do
    case "$file" in
      record/*)
        case "$inc" in
          collmc/model/operations.h | collmc/model/operations.def) ;;
          *) [[ -f "$dir/$inc" || -f "record/common/$inc" ]] ||
            breach "$file includes \"$inc\": code inside the user's program includes only record/common and operations.def" ;;
        esac
        ;;
      import/* | include/*)
        case "$inc" in
          collmc/*) ;;
          *) [[ -f "import/$inc" ]] || breach "$file includes \"$inc\": import/ knows no reader and no recorder" ;;
        esac
        ;;
      read/*)
        case "$inc" in
          collmc/*) ;;
          *) [[ -f "$dir/$inc" || -f "import/$inc" ]] ||
            breach "$file includes \"$inc\": a reader includes import/'s headers and its own folder's only" ;;
        esac
        ;;
    esac
  done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$file")
done < <(find . -path ./CMakeLists.txt -prune -o -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.c' \) -printf '%P\0')
((status == 0)) && echo "traces rooms: clean"
exit $status
