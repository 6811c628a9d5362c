#!/bin/sh
# memory.sh - build and run the memory benchmark (predicted vs measured peak,
# analysis time of three real dumps, scaling on synthetic graphs).
set -e
cd "$(dirname "$0")/.."
make -s build/libtrainscope.a build/bench/memory
TS_DATA=${TS_DATA:-../shared/data} build/bench/memory .
