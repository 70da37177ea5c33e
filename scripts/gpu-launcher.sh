#!/usr/bin/env bash
# On a GPU machine (two GPUs): replays the NCCL calibration set with `--launcher local` (forked
# ranks, shared block) and with `--launcher mpirun` (collmc-nccl-rank started by mpirun, coordinated
# through collmc's TCP store), compares the two outcome columns, and records the confirm times (from
# the last rank blocking to the verdict, and to every rank process gone). Then interrupts a replay
# with SIGINT and checks that it ends within 2 s with nothing left. Under 7 minutes: each calibrate
# run is stopped by SIGINT after 175 s (collmc then reports INTERRUPTED and stops cleanly), so a slow
# machine yields a subset, named in the summary.
# Usage: scripts/gpu-launcher.sh BIN_DIR CALIBRATION_DIR OUT_DIR
#   BIN_DIR holds collmc and collmc-nccl-rank (built together: docs/REPLAY.md).
set -uo pipefail
bin=${1:?directory with collmc and collmc-nccl-rank}
calibration=${2:?calibration directory}
out=${3:?output directory}
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
collmc="$bin/collmc"
summary="$out/summary.txt"
: > "$summary"
say() { echo "$@" | tee -a "$summary"; }
nvidia-smi -L | tee "$out/gpus.txt"
say "== mpirun: $(mpirun --version 2>&1 | head -1)"
status=0
for launcher in local mpirun; do
  say "== calibrate --launcher $launcher"
  start=$(date +%s.%N)
  timeout -s INT 175 "$collmc" replay --calibrate "$calibration" --launcher "$launcher" \
    --table "$out/table-$launcher.md" 2> "$out/log-$launcher.txt"
  rc=$?
  end=$(date +%s.%N)
  say "   exit $rc, $(awk "BEGIN { printf \"%.1f\", $end - $start }") s, $(grep -c . "$out/log-$launcher.txt") scenario lines"
  tail -1 "$out/table-$launcher.md" | tee -a "$summary"
  [ "$rc" = 0 ] || status=1
done
say "== outcomes: local vs mpirun (scenario | model | hardware outcome)"
cut -d'|' -f2-4 "$out/table-local.md" | grep -v -- '---' | sort > "$out/outcomes-local.txt"
cut -d'|' -f2-4 "$out/table-mpirun.md" | grep -v -- '---' | sort > "$out/outcomes-mpirun.txt"
if diff "$out/outcomes-local.txt" "$out/outcomes-mpirun.txt" > "$out/outcomes.diff"; then
  say "   the same outcomes ($(grep -c CONFIRMED "$out/outcomes-local.txt") CONFIRMED rows)"
else
  say "   DIFFERENT (see outcomes.diff; a row missing on one side is a run cut by the time limit):"
  tee -a "$summary" < "$out/outcomes.diff"
  status=1
fi
say "== confirm times (seconds: from the last rank blocking to the verdict / from the verdict to all processes gone)"
for launcher in local mpirun; do
  # The table's last column: "D / E" for hangs.
  awk -F'|' -v l="$launcher" 'NF > 8 && $8 ~ /[0-9] *\// { split($8, t, "/"); d = t[1] + 0; e = t[2] + 0; n++;
      if (n == 1 || d < dmin) dmin = d; if (d > dmax) dmax = d; if (n == 1 || e < emin) emin = e; if (e > emax) emax = e;
      if (d + e > worst) { worst = d + e; which = $2 } }
    END { if (n) printf "   %s: %d hangs; declared %.2f to %.2f s after the last block; all gone %.2f to %.2f s later; slowest total %.2f s (%s)\n", l, n, dmin, dmax, emin, emax, worst, which }' \
    "$out/table-$launcher.md" | tee -a "$summary"
done
say "== SIGINT during a hang that would otherwise wait 60 s (--confirm-after 0 --hang-after 60)"
for launcher in local mpirun; do
  "$collmc" replay "$calibration/reg_cross_order.cmc" --launcher "$launcher" --confirm-after 0 --hang-after 60 \
    > "$out/interrupt-$launcher.txt" 2>&1 &
  pid=$!
  sleep 12
  t0=$(date +%s.%N)
  kill -INT $pid
  wait $pid
  rc=$?
  t1=$(date +%s.%N)
  left=$(pgrep -f "collmc-replay-$pid-|collmc-nccl-rank" || true)
  shm=$(ls /dev/shm | grep "^collmc-replay-$pid-" || true)
  apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c . || true)
  say "   $launcher: exit $rc after $(awk "BEGIN { printf \"%.2f\", $t1 - $t0 }") s; $(grep -o 'INTERRUPTED' "$out/interrupt-$launcher.txt" | head -1); processes left: ${left:-none}; /dev/shm left: ${shm:-none}; GPU compute processes: $apps"
  [ "$rc" = 130 ] && [ -z "$left" ] && [ -z "$shm" ] && [ "$apps" = 0 ] || status=1
done
say "== leftovers"
sleep 1
left=$(pgrep -x collmc; pgrep -f collmc-nccl-rank || true)
apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c . || true)
say "   collmc/rank processes left: ${left:-none}; GPU compute processes: $apps; /dev/shm: $(ls /dev/shm | grep -c collmc-replay) collmc entries"
[ -z "$left" ] && [ "$apps" = 0 ] || status=1
say "== status $status"
exit $status
