#!/bin/sh
# install-deps.sh - install the Debian packages trainscope builds, tests and
# validates with. Run as root (or with sudo available). Idempotent.
#
#   zlib1g-dev libdeflate-dev libzstd-dev   gzip/zstd trace input (zlib and libdeflate: benchmark peers, gzip writing)
#   libisal-dev                             ISA-L igzip: the streaming gzip decoder of the loader (3x zlib)
#   libbabeltrace2-dev babeltrace2 python3-bt2  reading LTTng CTF traces back (python3-bt2 writes test CTF)
#   liblttng-ust-dev lttng-tools            the LTTng capture backend and its benchmark
#   libopenmpi-dev openmpi-bin              the MPI collector and its real 2-rank test
#                                            and distributed analysis (build/libtrainscope_dist.so, mpirun)
#   python3-torch                           real training runs on CPU (workloads, Python collector tests)
#   clang libclang-rt-14-dev                libFuzzer targets and sanitizer runtimes
#   librsvg2-bin                            rsvg-convert: PNG copies of the SVG plots (memory --png)
#   libsqlite3-dev                          reading Nsight Systems SQLite exports (src/ingest/nsys.c)
#   sqlite3                                 the sqlite3 shell: test/e2e/export_sqlite.sh reads what export --sqlite wrote (through libsqlite3)
#   python3-pandas python3-protobuf         bench/readers.sh's Python peers (nsys via sqlite3 + pandas, XPlane)
#   protobuf-compiler                       protoc: scripts/chakra_totals.py's independent decode (test/e2e/chakra_et.sh)
#   iproute2                                ip and tc: the namespaces testbed (bench/testbed, run as root)
#   chromium                                headless browser: test/e2e/report_html.sh loads the HTML report offline
# The CUDA toolkit (CUPTI and NCCL headers and libraries) is expected under
# /usr/local/cuda, as on these machines; without it the GPU collectors are
# skipped at build time and the rest builds unchanged.
set -e
PKGS="build-essential pkg-config zlib1g-dev libdeflate-dev libisal-dev libzstd-dev zstd libsqlite3-dev
      libbabeltrace2-dev babeltrace2 python3-bt2 liblttng-ust-dev lttng-tools
      libopenmpi-dev openmpi-bin python3 python3-torch clang libclang-rt-14-dev librsvg2-bin
      python3-pandas python3-protobuf iproute2
      protobuf-compiler
      chromium"
PKGS="$PKGS sqlite3"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "installing:$missing"
    $SUDO apt-get update -q
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends $missing
else
    echo "all Debian dependencies present"
fi
