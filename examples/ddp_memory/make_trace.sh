#!/bin/sh
# make_trace.sh - record train.py's 2 ranks (steps 2 to 4) with torch's
# profiler and allocator events: rank-0.json.gz, rank-1.json.gz here.
#   sh examples/ddp_memory/make_trace.sh [path/to/trainscope]
set -e
here=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$(dirname "${1:-build/trainscope}")" && pwd)/$(basename "${1:-build/trainscope}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
port=$(/usr/bin/python3 -c "import socket; s=socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])")
cat >"$tmp/launch.sh" <<P
#!/bin/sh
for r in 0 1; do /usr/bin/python3 "$here/train.py" \$r 2 $port & done
wait
P
"$BIN" record --torch --steps 2:5 --memory -o "$tmp/t" -- sh "$tmp/launch.sh"
for r in 0 1; do gzip -9 -n -c "$tmp"/t/rank-$r.*.json >"$here/rank-$r.json.gz"; done
