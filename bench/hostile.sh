#!/bin/sh
# hostile.sh - robustness to hostile input, measured (issue 26): every
# command on classes of bad input (truncations, byte flips, oversize numbers
# and nesting, remapped ranks, directories with unreadable entries, special
# files, out-of-range options, mismatched fx dumps, outputs that cannot be
# written) under the sanitizer build with a timeout and a memory limit; one
# line per class: inputs, runs, clear errors, warnings, crashes, hangs,
# silent wrong answers, partial files. The runner is bench/hostile.py (its
# header defines each count). Not a test: `make hostile` builds and runs it.
#   sh bench/hostile.sh [--full] [--only CLASS] [--timeout S]
cd "$(dirname "$0")/.." || exit 2
exec /usr/bin/python3 bench/hostile.py "$@"
