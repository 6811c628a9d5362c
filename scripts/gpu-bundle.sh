#!/bin/sh
# gpu-bundle.sh BUILD OUT - fill OUT with what `trainscope record` and the
# analyses need on a machine that cannot install packages (a lent GPU machine
# with its own PyTorch): `make gpu-bundle` runs it.
#
#   OUT/trainscope              the CLI, linked with DT_RPATH $ORIGIN (BUILD/trainscope-origin)
#   OUT/libtrainscope-*.so      the capture runtime and collectors (RUNPATH $ORIGIN already);
#                               not the LTTng backend (LTTng is not on such machines)
#   OUT/lib*.so.*               every shared library these need beyond the C library's own
#                               (zlib, zstd, isa-l, CUPTI), those the CLI opens on first use
#                               (babeltrace2 and its glib, sqlite3) and theirs, so that the
#                               folder runs with no LD_LIBRARY_PATH
#   OUT/python/                 sitecustomize.py and the modules --torch and --python load
#   OUT/gpu-check.sh            scripts/gpu-check.sh
# Not for: installing (copy the folder anywhere; nothing in it names this
# machine's paths, which the last step checks).
set -e
BUILD=$1 OUT=$2
[ -x "$BUILD/trainscope-origin" ] || { echo "gpu-bundle.sh: $BUILD/trainscope-origin missing (run make gpu-bundle)"; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT/python"
cp "$BUILD/trainscope-origin" "$OUT/trainscope"
for lib in "$BUILD"/libtrainscope-*.so; do
    case $lib in *-lttng.so) continue ;; esac
    cp "$lib" "$OUT/"
done
cp python/sitecustomize.py python/trainscope_trace.py python/trainscope_torch.py python/trainscope_precision.py "$OUT/python/"
cp scripts/gpu-check.sh "$OUT/"

# The libraries trainscope opens on first use (core/dynlib.h: no ldd line
# names them) go beside it too; their own dependencies are found through the
# CLI's DT_RPATH $ORIGIN as theirs are.
lazy="libbabeltrace2.so.0 libsqlite3.so.0"
for name in $lazy; do
    path=$(ldconfig -p | awk -v n="$name" '$1 == n && /x86-64/ {print $NF; exit}')
    [ -n "$path" ] || { echo "gpu-bundle.sh: $name not found (ldconfig -p)"; exit 2; }
    cp -L "$path" "$OUT/$name"
done

# The C library's own parts are the target's; everything else goes beside.
base='^(linux-vdso|libc|libm|libpthread|libdl|librt|libutil|libresolv|libgcc_s|ld-linux-x86-64|libtrainscope-[a-z]*)\.so'
for f in "$OUT"/trainscope "$OUT"/libtrainscope-*.so $(for name in $lazy; do echo "$OUT/$name"; done); do
    ldd "$f" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
done | sort -u | while read -r name path; do
    echo "$name" | grep -Eq "$base" || cp -L "$path" "$OUT/$name"
done

# Check: with no LD_LIBRARY_PATH, everything resolves inside OUT or to the base set.
bad=$(for f in "$OUT"/trainscope "$OUT"/libtrainscope-*.so; do
          env -u LD_LIBRARY_PATH ldd "$f" | awk '$2 == "=>" {print $1, $3}'
      done | sort -u | while read -r name path; do
          echo "$name" | grep -Eq "$base" && continue
          case $path in "$OUT"/*|"$(cd "$OUT" && pwd)"/*) ;; *) echo "$name => $path" ;; esac
      done)
if [ -n "$bad" ]; then echo "gpu-bundle.sh: resolved outside $OUT:"; echo "$bad"; exit 1; fi
# and what those opened on first use need is in OUT (the CLI's $ORIGIN)
missing=$(for name in $lazy; do ldd "$OUT/$name" | awk '$2 == "=>" {print $1}'; done | sort -u | while read -r dep; do
              echo "$dep" | grep -Eq "$base" || [ -e "$OUT/$dep" ] || echo "$dep"
          done)
if [ -n "$missing" ]; then echo "gpu-bundle.sh: not in $OUT:"; echo "$missing"; exit 1; fi
echo "gpu-bundle: $(ls "$OUT" | wc -l) files in $OUT ($(du -sh "$OUT" | cut -f1))"
