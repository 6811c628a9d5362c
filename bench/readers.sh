#!/bin/sh
# readers.sh - each non-JSON reader's whole-process time against the obvious
# Python reader of the same file (bench/readers.py says how), on the shared
# samples and 10x larger files made from them (kept under /tmp).
# Usage: sh bench/readers.sh [--repeat N] [--only nsys|snapshot|xplane|chakra]
set -e
cd "$(dirname "$0")/.."
make -j2 all >/dev/null
: "${TS_DATA:=$(cd .. && pwd)/shared/data}"; export TS_DATA
exec /usr/bin/python3 bench/readers.py "$@"
