#!/usr/bin/env bash
# Regenerates the pictures of README.md and docs/SCREENSHOT.md from the tool itself, so that they
# cannot drift from what collmc draws: the wait-for graphs (--svg) and the HTML review pages (--html),
# rendered by headless Chromium (scripts/setup.sh installs it). Look at every PNG before committing it.
#
# Usage: scripts/make-readme-images.sh [COLLMC [OUT_DIR]]   (defaults: build/cli/collmc, docs/images)
# Run from the checkout: scenario paths stay relative, so no machine path gets into a picture.
set -euo pipefail
cd "$(dirname "$0")/.."
collmc=$(realpath "${1:-build/cli/collmc}")
out=$(realpath "${2:-docs/images}")
command -v chromium >/dev/null || { echo "error: chromium is not installed (apt-get install -y chromium)" >&2; exit 2; }
[[ -x $collmc ]] || { echo "error: no collmc at $collmc (build it: ./scripts/setup.sh)" >&2; exit 2; }
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# check exits 1 for a deadlock: that is the verdict, not a failure.
check() { "$collmc" check "$@" >/dev/null || [[ $? == 1 ]]; }

# shot PAGE PNG WIDTH HEIGHT: a screenshot of the window (not the whole document).
shot() {
  chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" --hide-scrollbars --virtual-time-budget=2000 \
    --screenshot="$2" --window-size="$3,$4" "file://$1" 2>/dev/null
  echo "wrote $2 (${3}x$4)"
}

# svg_shot SVG PNG: the graph at its own size (Graphviz writes it in points: 4/3 px each), on white.
svg_shot() {
  local w h
  w=$(grep -o '<svg width="[0-9.]*pt"' "$1" | grep -o '[0-9.]*' | head -1)
  h=$(grep -o 'height="[0-9.]*pt"' "$1" | grep -o '[0-9.]*' | head -1)
  w=$(awk -v x="$w" 'BEGIN { printf "%d", x * 4 / 3 + 17 }')
  h=$(awk -v x="$h" 'BEGIN { printf "%d", x * 4 / 3 + 17 }')
  printf '<!DOCTYPE html><html><body style="margin:8px;background:#fff">%s</body></html>\n' \
    "$(sed -n '/<svg/,$p' "$1")" >"$1.html"
  shot "$1.html" "$2" "$w" "$h"
}

# The README's graph: the Megatron example.
check examples/megatron_hsdp_per_rank.cmc --svg "$work/megatron.svg" --html "$work/megatron.html"
svg_shot "$work/megatron.svg" "$out/megatron_wait_for.png"
# The README's walkthrough (W = 16), as the README writes it.
G="gen megatron --world 16 --tp 2 --cp 2 --ep 4 --dist-opt-instances 2 --late-segments all"
(cd "$work" && "$collmc" $G --order per-rank -o hang.cmc && { "$collmc" check hang.cmc --svg hang.svg >/dev/null || [[ $? == 1 ]]; })
svg_shot "$work/hang.svg" "$out/megatron_w16_walkthrough.png"
# The three-comm ring: its graph and its review page.
check examples/nccl_three_comm_ring.cmc --svg "$work/ring.svg" --html "$work/ring.html"
svg_shot "$work/ring.svg" "$out/three_ring_wait_for.png"
shot "$work/ring.html" "$out/report_three_ring.png" 1400 1000
# The review page of the W = 8 Megatron example: first screen, and the whole page.
shot "$work/megatron.html" "$out/report_megatron_w8.png" 1400 1000
shot "$work/megatron.html" "$out/report_megatron_w8_full.png" 1400 2600
# A W = 64 deadlock (the size that once crashed, issue 24).
(cd "$work" && "$collmc" gen megatron --world 64 --tp 2 --cp 2 --ep 4 --dist-opt-instances 2 \
  --late-segments all --order per-rank -o m64.cmc &&
  { "$collmc" check m64.cmc --html m64.html >/dev/null || [[ $? == 1 ]]; })
shot "$work/m64.html" "$out/report_megatron_w64.png" 1400 1000
shot "$work/m64.html" "$out/report_megatron_w64_full.png" 1400 3000
