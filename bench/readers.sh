#!/bin/sh
# readers.sh - each reader's whole-process time (of the JSON ones, TF1
# timelines and dPRO folders) against the obvious Python reader of the same
# file (bench/readers.py says how), on the shared samples (synthetic files
# where there is none) and 10x larger files made from them (under /tmp).
# Usage: sh bench/readers.sh [--repeat N] [--only nsys|snapshot|xplane|chakra|ctf|tf1|dpro] [--by-order]
# (--by-order: also each side's median right after the other side and after itself)
set -e
cd "$(dirname "$0")/.."
make -j2 all >/dev/null
: "${TS_DATA:=$(cd .. && pwd)/shared/data}"; export TS_DATA
exec /usr/bin/python3 bench/readers.py "$@"
