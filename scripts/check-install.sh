#!/usr/bin/env bash
# cmake --install of a build to a fresh prefix, then the installed collmc run from another directory:
# --version, a command's help, a check, an MPI replay through the installed collmc-mpi-rank (where
# MPI was built) and collmc record through the installed recorder (where it was built).
# Usage: scripts/check-install.sh BUILD_DIR
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:?usage: scripts/check-install.sh BUILD_DIR}" && pwd)
prefix=$(mktemp -d /tmp/collmc-prefix.XXXXXX)
elsewhere=$(mktemp -d /tmp/collmc-elsewhere.XXXXXX)
trap 'rm -rf "$prefix" "$elsewhere"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
(cd "$prefix" && find . -type f | sort)
collmc=$prefix/bin/collmc
fail() {
  echo "FAIL: $*"
  exit 1
}
expect_exit() {  # expect_exit CODE COMMAND...
  local want=$1 rc=0
  shift
  "$@" || rc=$?
  [ "$rc" -eq "$want" ] || fail "$* exited $rc, expected $want"
}
cd "$elsewhere"
"$collmc" --version
expect_exit 0 "$collmc" check --help >/dev/null
[ -f "$prefix/share/bash-completion/completions/collmc" ] || fail "no bash completion installed"
cp "$src/examples/reg_cross_order.cmc" "$src/examples/nonblocking_fix.cmc" .
expect_exit 1 "$collmc" check reg_cross_order.cmc --quiet
expect_exit 0 "$collmc" check nonblocking_fix.cmc --quiet
if [ -x "$prefix/bin/collmc-mpi-rank" ] && command -v mpirun >/dev/null; then
  cp "$src/examples/mpi_barrier_reduce_reversed.cmc" .
  expect_exit 0 "$collmc" replay mpi_barrier_reduce_reversed.cmc --backend mpi --hang-after 2
else
  echo "note: no collmc-mpi-rank or no mpirun: the installed MPI replay is not run"
fi
if ls "$prefix"/lib*/collmc/libcollmc_record.so >/dev/null 2>&1 ||
  ls "$prefix"/lib/*/collmc/libcollmc_record.so >/dev/null 2>&1; then
  expect_exit 0 "$collmc" record -o traces -- true
else
  echo "note: the recorder was not built (no NCCL headers): collmc record is not run"
fi
# The Python package (python/), installed beside the recorders: the CLI and the API through the installed collmc,
# and the torch shim that the installed collmc record puts on PYTHONPATH.
pkg=$(find "$prefix" -path '*/collmc/python/collmc/__init__.py' | head -1)
[ -n "$pkg" ] || fail "the Python package is not installed"
pydir=$(dirname "$(dirname "$pkg")")
[ -f "$pydir/collmc/record/_boot/sitecustomize.py" ] || fail "the torch shim is not installed"
expect_exit 1 env -u COLLMC PYTHONPATH="$pydir" /usr/bin/python3 -m collmc check reg_cross_order.cmc --quiet
env -u COLLMC PYTHONPATH="$pydir" /usr/bin/python3 -c "
import collmc, sys
r = collmc.check('reg_cross_order.cmc')
assert r.verdict == 'deadlock' and [h.rank for h in r.cycle] == [0, 1], r
assert collmc.find_collmc() == sys.argv[1], collmc.find_collmc()
" "$collmc" || fail "the installed Python package does not check through the installed collmc"
echo "the installed collmc works from $elsewhere"
