#!/usr/bin/python3
"""link_probe.py - what each shaped link of the testbed carries, measured apart
from any training run (issue 20: `--bandwidth GBPS` scored at the link's
goodput rather than its nominal tc rate).

What it is for: the TCP goodput of the testbed's links at each rate, with the
testbed's own network and qdiscs (testbed.py's Net: tbf at the rate on each
rank's eth0 and bridge port, 100 ms of queue), in three patterns, each
repeated and its median kept:
  carried_mbit   one flow rank 0 -> rank 1, testbed.py's own link check
                 (0.6 s of the rate): what summary.json's link_checks hold
  duplex_mbit    one flow each way at once for --seconds (a 2-rank ring
                 all-reduce sends both ways at once; each direction's ACKs
                 then queue behind the other's data), per direction
  duplex2_mbit   two flows each way at once (gloo's two workers), per
                 direction, all flows of a direction together
Writes one small JSON file (--out). Nothing here reads a training run; the
figures are link properties a user could measure on their own link (iperf).
What it is not for: training runs or scoring (testbed.py and
bench/testbed_accuracy.sh; TS_TESTBED_PROBE=FILE scores with this file).

Needs root and iproute2, as testbed.py; takes the testbed's lock, so it never
runs beside a testbed run; removes its namespaces on every exit.

  /usr/bin/python3 bench/testbed/link_probe.py --out FILE [--rates 50,100,200,400]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import testbed  # noqa: E402  (Net, link_check, preflight, take_lock, remove_stale)

PORT = 5301
SERVER = """
import socket, sys, threading, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1); s.bind((sys.argv[1], %d)); s.listen(8)
k = int(sys.argv[2]); spans = []; lock = threading.Lock()
def take(c):
    n = 0; t0 = None
    while True:
        b = c.recv(1 << 20)
        if not b: break
        if t0 is None: t0 = time.perf_counter()
        n += len(b)
    with lock: spans.append((n, t0, time.perf_counter()))
ts = []
for _ in range(k):
    c, _ = s.accept(); t = threading.Thread(target=take, args=(c,)); t.start(); ts.append(t)
for t in ts: t.join()
print(sum(x[0] for x in spans), max(x[2] for x in spans) - min(x[1] for x in spans))
""" % PORT
CLIENT = """
import socket, sys, threading, time
k, n = int(sys.argv[2]), int(sys.argv[3]); buf = b"x" * 65536
for _ in range(100):
    try:
        ss = [socket.create_connection((sys.argv[1], %d), timeout=5) for _ in range(k)]; break
    except OSError:
        time.sleep(0.05)
def send(s):
    m = n
    while m > 0:
        s.sendall(buf[:min(m, len(buf))]); m -= len(buf)
    s.close()
ts = [threading.Thread(target=send, args=(s,)) for s in ss]
for t in ts: t.start()
for t in ts: t.join()
""" % PORT


def flows(net, rate_mbit, seconds, k, both):
    """k flows rank 0 -> 1 (and 1 -> 0 when both) at once: goodput per direction, Mbit/s."""
    nbytes = int(rate_mbit * 1e6 / 8 * seconds / k)
    pairs = [(0, 1), (1, 0)] if both else [(0, 1)]
    servers = [subprocess.Popen(["ip", "netns", "exec", net.ranks[b], testbed.PY, "-c", SERVER, net.addr(b), str(k)],
                                stdout=subprocess.PIPE, text=True) for _, b in pairs]
    time.sleep(0.3)
    clients = [subprocess.Popen(["ip", "netns", "exec", net.ranks[a], testbed.PY, "-c", CLIENT, net.addr(b), str(k),
                                 str(nbytes)]) for a, b in pairs]
    got = []
    for c, s in zip(clients, servers):
        c.wait(timeout=120)
        out, _ = s.communicate(timeout=120)
        n, secs = out.split()
        got.append(int(n) * 8 / float(secs) / 1e6)
    return statistics.mean(got)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--rates", default="50,100,200,400")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=2.0, help="length of the duplex transfers")
    args = ap.parse_args()
    net, code = None, 1
    try:
        testbed.preflight()
        lock = testbed.take_lock()  # noqa: F841  (held until exit)
        testbed.remove_stale()
        net = testbed.Net(2)
        net.up()
        links = []
        for r in [float(x) for x in args.rates.split(",")]:
            net.shape(r)
            one, d1, d2 = [], [], []
            for _ in range(args.repeat):
                one.append(testbed.link_check(net, r))
                d1.append(flows(net, r, args.seconds, 1, True))
                d2.append(flows(net, r, args.seconds, 2, True))
            row = {"rate_mbit": r, "carried_mbit": round(statistics.median(one), 2),
                   "duplex_mbit": round(statistics.median(d1), 2), "duplex2_mbit": round(statistics.median(d2), 2),
                   "samples": {"carried": [round(x, 2) for x in one], "duplex": [round(x, 2) for x in d1],
                               "duplex2": [round(x, 2) for x in d2]}}
            print("link %g Mbit/s: one flow %.1f (%.0f%%), duplex %.1f (%.0f%%), duplex x2 flows %.1f (%.0f%%) Mbit/s "
                  "per direction" % (r, row["carried_mbit"], 100 * row["carried_mbit"] / r, row["duplex_mbit"],
                                     100 * row["duplex_mbit"] / r, row["duplex2_mbit"], 100 * row["duplex2_mbit"] / r),
                  flush=True)
            links.append(row)
        doc = {"what": "TCP goodput of the testbed's tbf-shaped links (testbed.py's Net and qdiscs), measured apart "
                       "from any training run by bench/testbed/link_probe.py",
               "made": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
               "loadavg": open("/proc/loadavg").read().split()[:3], "repeat": args.repeat,
               "duplex_seconds": args.seconds, "links": links}
        tmp = args.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1)
        os.replace(tmp, args.out)
        code = 0
    except testbed.Fail as e:
        print(str(e), file=sys.stderr)
    except KeyboardInterrupt:
        print("link_probe: interrupted; cleaning up, nothing written", file=sys.stderr)
        code = 130
    finally:
        if net:
            net.down()
    return code


if __name__ == "__main__":
    sys.exit(main())
