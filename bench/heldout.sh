#!/bin/sh
# heldout.sh - restore the held-out CPU-loopback ground truths on demand.
#
#   sh bench/heldout.sh DIR      (prints each restored set's directory, one a line)
#
# The ten held-out sets examples/workloads/heldout-2026-11-24{,b,...,j} (83 MB of
# real measurements, docs/workloads.md) left the tree to keep the repository
# light (issue 20 item 5); they cannot be regenerated identically, so they are
# taken back from the commit that last held them with `git archive` into
# DIR/examples/workloads/. Needs the repository's history: in a shallow clone
# (or a copy without .git) it says so and exits 2. Not for the committed set
# examples/workloads/ (its traces and results stay in the tree).
set -eu
COMMIT=ec7b0010322842d3af0bd57740942693662b5c7f   # main, 26 Nov 2026: the last commit holding them
[ $# -eq 1 ] || { echo "usage: sh bench/heldout.sh DIR" >&2; exit 2; }
DIR=$1
case $DIR in /*) ;; *) DIR=$PWD/$DIR ;; esac
cd "$(dirname "$0")/.."
if ! git cat-file -e "$COMMIT:examples/workloads/heldout-2026-11-24j" 2>/dev/null; then
    echo "heldout: commit $COMMIT is not in this repository's history (a shallow clone or no .git?):" \
         "fetch it (git fetch --unshallow) to restore examples/workloads/heldout-2026-11-24*" >&2
    exit 2
fi
mkdir -p "$DIR"
sets=$(git ls-tree --name-only "$COMMIT" examples/workloads/ | grep '/heldout-2026-11-24')
# shellcheck disable=SC2086
git archive --format=tar "$COMMIT" $sets | tar -x -C "$DIR"
for s in $sets; do echo "$DIR/$s"; done
