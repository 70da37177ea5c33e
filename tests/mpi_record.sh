#!/usr/bin/env bash
# MPI programs as they are (issue 18): builds each C program of tests/mpi_programs with mpicc, runs it
# under `collmc record --time-limit` with mpirun (the MPI recorder, handed to every rank), imports the
# traces and checks the scenario, and compares the verdict and the import's summary with what the
# program does. A hung run must be stopped by --hang-after (the time limit is the backstop); the wildcard
# race completes and must still be found. Exit 77 (skipped) only where mpicc or mpirun is missing; CI installs them (scripts/setup.sh).
set -u
collmc=$1
src=$2
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "skipped: no mpicc/mpirun on this machine (apt install openmpi-bin libopenmpi-dev)"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d /tmp/collmc-mpi-record.XXXXXX)
trap 'rm -rf "$work"' EXIT
limit=${COLLMC_MPI_RECORD_LIMIT:-8}
failures=0

# program ranks verdict run(completes|hangs|fails) text-the-import-or-check-must-print
# (fails: the MPI library itself stopped the run with an error; what ran until then is checked)
cases=(
  "coll_order 2 deadlock hangs stopped in"
  "skip_collective 2 deadlock hangs never did"
  "win_cross_order 2 deadlock hangs stopped in"
  "wildcard_race 3 deadlock completes recv world any"
  "exchange_ok 3 safe completes every traced call completed"
  "rma_sync_ok 3 safe completes every traced call completed"
  "rma_epoch_errors 2 usage_error fails two access epochs"
  "rma_race 3 usage_error completes data race"
  "request_never_completed 2 usage_error completes never completed"
  "persistent_ok 2 safe completes every traced call completed"
  "probe_first 2 deadlock hangs probe world"
  "any_tag_race 3 deadlock completes tag=any"
  "bcast_before_recv 2 deadlock completes broadcast world"
  "standard_ok 2 safe completes every traced call completed"
  "bsend_wrong_tag 2 deadlock hangs mode=buffered"
  # ls: compiled with the program's own loads and stores recorded (scripts/mpicc-loads-stores.sh, clang)
  "ls:rma_store_in_flight 2 usage_error completes the program's store"
  "ls:rma_target_load_race 2 usage_error completes the program's load"
  "ls:rma_loads_stores_ok 2 safe completes checked against RMA transfers in flight"
  "rma_store_in_flight 2 safe completes loads and stores were not recorded"
  # omp: OpenMP threads, compiled with clang (LLVM's libomp: the recorder's OMPT tool records their
  # synchronization, and the import orders the threads by it only); gomp: with gcc (libgomp has no OMPT)
  "omp:omp_sections_sendrecv 2 safe completes ordered by their recorded OpenMP synchronization"
  "omp:omp_free_after_barrier 2 safe completes ordered by their recorded OpenMP synchronization"
  "omp:omp_free_unordered 2 usage_error completes already destroyed"
  "gomp:omp_free_after_barrier 2 safe completes no thread synchronization recorded"
  # gcc's build again, with no flag: collmc record preloads the installed LLVM libomp (the program links
  # libgomp), whose OMPT records the threads; libompflag: the runtime named by --openmp-runtime LIB
  "libomp:omp_free_after_barrier 2 safe completes recorded through OMPT by LLVM"
  "libompflag:omp_free_after_barrier 2 safe completes ordered by their recorded OpenMP synchronization"
  # v-collectives: each pair's type signatures matched, the counts differ by rank (safe); wrongtype: odd
  # ranks pass MPI_FLOAT to an MPI_Allgatherv where even ranks pass MPI_INT (MBI's ParamMatching_Data_*v)
  "vcoll_types 3 safe completes dtype=int32 call=Alltoallv"
  "wrongtype:vcoll_types 2 mismatch completes dtype int32 and float32"
  # lsomp: the program's loads and stores recorded too; lsompord: the same program built with -DORDERED
  "lsomp:omp_remote_load_race 2 usage_error completes a data race"
  "lsompord:omp_remote_load_race 2 safe completes checked against RMA transfers in flight"
)
libomp=$(ls /usr/lib/llvm-*/lib/libomp.so.5 2>/dev/null | sort -V | tail -1)
for c in "${cases[@]}"; do
  read -r prog np verdict run text <<<"$c"
  mpicc=(mpicc)
  how=${prog%%:*}
  [ "$how" = "$prog" ] && how=plain
  prog=${prog#*:}
  case $how in
    ls) mpicc=("$src/scripts/mpicc-loads-stores.sh" "$(dirname "$collmc")") ;;
    omp) mpicc=(env OMPI_CC=clang MPICH_CC=clang mpicc -fopenmp) ;;
    gomp | libomp | libompflag) mpicc=(env OMPI_CC=gcc MPICH_CC=gcc mpicc -fopenmp) ;;
    wrongtype) mpicc=(mpicc -DWRONG_TYPE) ;;
    lsomp) mpicc=("$src/scripts/mpicc-loads-stores.sh" "$(dirname "$collmc")" -fopenmp) ;;
    lsompord) mpicc=("$src/scripts/mpicc-loads-stores.sh" "$(dirname "$collmc")" -fopenmp -DORDERED) ;;
  esac
  record_args=()
  case $how in
    gomp) record_args=(--openmp-runtime none) ;;  # gcc's libgomp as it is: no OMPT
    libomp | libompflag)
      [ -n "$libomp" ] || { echo "skip $prog ($how): no LLVM libomp.so.5 on this machine"; continue; }
      [ "$how" = libompflag ] && record_args=(--openmp-runtime "$libomp")
      ;;
  esac
  dir=$work/$prog-$how
  mkdir -p "$dir"
  if ! "${mpicc[@]}" -O1 -o "$dir/$prog" "$src/tests/mpi_programs/$prog.c" 2>"$dir/cc.log"; then
    echo "FAIL $prog: mpicc failed"; cat "$dir/cc.log"; failures=$((failures + 1)); continue
  fi
  "$collmc" record "${record_args[@]}" --out "$dir/traces" --hang-after 1 --time-limit "$limit" -- \
    mpirun --bind-to none -np "$np" "$dir/$prog" >"$dir/record.log" 2>&1
  rc=$?
  # A hung run is stopped by --hang-after (every rank in a call, no trace line for 1 s), not by the limit.
  if [ "$run" = hangs ] && { [ $rc -ne 124 ] || ! grep -q "the run hung and was stopped" "$dir/record.log"; }; then
    echo "FAIL $prog: expected the run to hang and --hang-after to stop it (exit 124), got $rc"; cat "$dir/record.log"
    failures=$((failures + 1)); continue
  fi
  if [ "$run" = fails ] && { [ $rc -eq 0 ] || [ $rc -eq 124 ]; }; then
    echo "FAIL $prog: expected MPI to stop the run with an error, got $rc"; cat "$dir/record.log"
    failures=$((failures + 1)); continue
  fi
  if [ "$run" = completes ] && [ $rc -ne 0 ]; then
    echo "FAIL $prog: expected the run to complete, got $rc"; cat "$dir/record.log"; failures=$((failures + 1)); continue
  fi
  # Without the flag, record chose the runtime itself and says so.
  if [ "$how" = libomp ] && ! grep -q "OpenMP runtime $libomp ($prog links gcc's libgomp" "$dir/record.log"; then
    echo "FAIL $prog: record did not say it preloaded $libomp"; cat "$dir/record.log"; failures=$((failures + 1)); continue
  fi
  if ! "$collmc" trace import "$dir/traces" -o "$dir/$prog.cmc" >"$dir/import.log" 2>&1; then
    echo "FAIL $prog: import failed"; cat "$dir/import.log"; failures=$((failures + 1)); continue
  fi
  # A run that completed is no hang: the scenario must not say `observed hung` (which makes the check exit 4).
  if [ "$run" = completes ] && grep -q '^observed hung' "$dir/$prog.cmc"; then
    echo "FAIL $prog: the run completed but the scenario says it hung"; cat "$dir/import.log" "$dir/$prog.cmc"
    failures=$((failures + 1)); continue
  fi
  "$collmc" check "$dir/$prog.cmc" >"$dir/check.log" 2>&1
  # The verdict line ("FILE: VERDICT ..."), after any warning the scenario's mpi_error statements print.
  first=$(grep -m1 -F "$dir/$prog.cmc: " "$dir/check.log")
  if [[ "$first" != *": $verdict"* ]]; then
    echo "FAIL $prog: expected $verdict, check said: $first"; cat "$dir/import.log" "$dir/$prog.cmc" "$dir/check.log"
    failures=$((failures + 1)); continue
  fi
  if ! grep -q -- "$text" "$dir/import.log" "$dir/$prog.cmc" "$dir/check.log"; then
    echo "FAIL $prog: the import, scenario and check say nothing of '$text'"
    cat "$dir/import.log" "$dir/$prog.cmc" "$dir/check.log"; failures=$((failures + 1)); continue
  fi
  echo "ok   $prog (-np $np, run $run, $how): $first"
done
# Nothing of the runs may outlive them.
if pgrep -f "$work/" >/dev/null; then
  echo "FAIL: processes of the runs are left: $(pgrep -af "$work/")"
  failures=$((failures + 1))
fi
[ $failures -eq 0 ] && echo "all MPI programs found as expected" && exit 0
echo "$failures failure(s)"
exit 1
