#!/usr/bin/env bash
# The MPI backend under --launcher srun, where a Slurm cluster answers (sinfo): a confirmed hang, a
# completed program, and a SIGINT during a hang, each leaving no rank process, no Slurm step and
# nothing in /dev/shm. Exit 77 (skipped) without srun or a responding slurmctld (CI has neither).
# A one-node cluster for this test: docs/REPLAY.md, "Slurm".
set -u
collmc=$1
src=$2
if ! command -v srun >/dev/null || ! timeout 5 sinfo >/dev/null 2>&1; then
  echo "skipped: no Slurm cluster answers here (srun/sinfo)"
  exit 77
fi
launch=(--launcher srun --launcher-arg=--mpi=pmix --launcher-arg=--overcommit)
rc=0
leftovers() {  # $1: collmc's pid
  local procs shm
  procs=$(pgrep -af "collmc-replay-$1-" || true)
  shm=$(ls /dev/shm 2>/dev/null | grep "^collmc-replay-$1-" || true)
  if [ -n "$procs$shm" ]; then
    echo "FAIL: left behind: $procs $shm"
    rc=1
  fi
}
"$collmc" replay "${launch[@]}" "$src/tests/calibration-mpi/mpi_win_cross_order.cmc" > out.$$ 2>&1 &
pid=$!
wait $pid || { echo "FAIL: the hang was not confirmed"; rc=1; }
cat out.$$
grep -q "CONFIRMED" out.$$ && grep -q "launcher: srun" out.$$ || { echo "FAIL: expected CONFIRMED under srun"; rc=1; }
leftovers $pid
"$collmc" replay "${launch[@]}" "$src/examples/mpi_correct_program.cmc" > out.$$ 2>&1 &
pid=$!
wait $pid || { echo "FAIL: the correct program did not complete"; rc=1; }
grep -q "COMPLETED" out.$$ || { cat out.$$; echo "FAIL: expected COMPLETED under srun"; rc=1; }
leftovers $pid
"$collmc" replay "${launch[@]}" --confirm-after 0 --hang-after 60 \
  "$src/tests/calibration-mpi/mpi_win_cross_order.cmc" > out.$$ 2>&1 &
pid=$!
sleep 4
kill -INT $pid
start=$(date +%s%N)
wait $pid
code=$?
ms=$((($(date +%s%N) - start) / 1000000))
cat out.$$
[ $code = 130 ] && grep -q INTERRUPTED out.$$ || { echo "FAIL: SIGINT gave exit $code"; rc=1; }
[ $ms -lt 2500 ] || { echo "FAIL: SIGINT took $ms ms"; rc=1; }
echo "SIGINT: exit $code after $ms ms"
leftovers $pid
sleep 1
if [ -n "$(squeue -h -u "$(id -un)" -t R -n collmc-mpi-rank 2>/dev/null)" ]; then
  echo "FAIL: a Slurm step of collmc-mpi-rank still runs"
  rc=1
fi
rm -f out.$$
[ $rc = 0 ] && echo "srun: hang confirmed, program completed, SIGINT clean; nothing left"
exit $rc
