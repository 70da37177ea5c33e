#!/usr/bin/env bash
# Makes a buildable NCCL source tree from a clone of NVIDIA/nccl at a tag, without what the build does
# not need (docs, bindings, contrib: about 8 MB left), so it can travel to a GPU machine that reaches
# no network. The tree records where it came from in COLLMC_SOURCE.txt.
# Usage: scripts/nccl-source.sh NCCL_GIT_DIR TAG DEST_DIR
#   git clone https://github.com/NVIDIA/nccl /tmp/nccl-git
#   scripts/nccl-source.sh /tmp/nccl-git v2.30.7-1 .carry/nccl-src
set -euo pipefail
git_dir=${1:?a clone of NVIDIA/nccl}
tag=${2:?a tag, e.g. v2.30.7-1}
dest=${3:?destination directory}
commit=$(git -C "$git_dir" rev-parse "$tag^{commit}")
rm -rf "$dest"
mkdir -p "$dest"
git -C "$git_dir" archive "$tag" | tar -x -C "$dest" --exclude=docs --exclude=bindings --exclude=contrib
echo "NVIDIA/nccl $tag ($commit)" >"$dest/COLLMC_SOURCE.txt"
echo "$dest: NVIDIA/nccl $tag ($commit), $(du -sh "$dest" | cut -f1)"
