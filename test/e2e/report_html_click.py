"""report_html_click.py - click a report's table headers in headless chromium
and read the rows back (used by report_html.sh).

Drives the browser over the DevTools protocol on --remote-debugging-pipe
(messages are JSON separated by NUL bytes on the child's fds 3 and 4), so no
network port and no package beyond the standard library.

    python3 report_html_click.py PAGE.html PROFILE_DIR TABLE_ID COLUMN

Clicks column COLUMN (0-based) of table TABLE_ID twice and checks that the
first click sorts its numbers from high to low and the second from low to
high, the rows moving whole (each row keeps its other cells). Exit 0 = so.
"""
import json
import os
import subprocess
import sys
import time

page, profile, table, col = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
to_child_r, to_child_w = os.pipe()
from_child_r, from_child_w = os.pipe()


def child_fds():   # in the child: its input at fd 3, its output at fd 4, both kept across exec
    for src, dst in ((to_child_r, 3), (from_child_w, 4)):
        if src == dst:
            os.set_inheritable(dst, True)   # os.pipe's fds close on exec
        else:
            os.dup2(src, dst)


proc = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                         "--disable-background-networking", "--disable-component-update",
                         "--remote-debugging-pipe", "--user-data-dir=" + profile, "file://" + page],
                        close_fds=False, preexec_fn=child_fds,   # (pass_fds would close 3 and 4 after the dup2)
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
os.close(to_child_r)
os.close(from_child_w)
out = os.fdopen(to_child_w, "wb")
inp = os.fdopen(from_child_r, "rb")
buf = b""
next_id = 0


def call(method, session=None, **params):
    global buf, next_id
    next_id += 1
    msg = {"id": next_id, "method": method, "params": params}
    if session:
        msg["sessionId"] = session
    out.write(json.dumps(msg).encode() + b"\0")
    out.flush()
    while True:
        while b"\0" not in buf:
            chunk = os.read(inp.fileno(), 65536)
            if not chunk:
                sys.exit("chromium closed the pipe")
            buf += chunk
        raw, buf = buf.split(b"\0", 1)
        reply = json.loads(raw)
        if reply.get("id") == next_id:
            if "error" in reply:
                sys.exit("%s: %s" % (method, reply["error"]))
            return reply["result"]


def evaluate(session, expr):
    r = call("Runtime.evaluate", session, expression=expr, returnByValue=True)
    if "exceptionDetails" in r:
        sys.exit("page: %s" % r["exceptionDetails"])
    return r["result"].get("value")


try:
    deadline = time.time() + 60
    target = None
    while not target and time.time() < deadline:
        target = next((t for t in call("Target.getTargets")["targetInfos"] if t["type"] == "page"), None)
    session = call("Target.attachToTarget", targetId=target["targetId"], flatten=True)["sessionId"]
    while evaluate(session, "location.protocol + document.readyState") != "file:complete":
        if time.time() > deadline:
            sys.exit("the page did not load")
        time.sleep(0.1)
    rows = ("[].map.call(document.getElementById(%s).tBodies[0].rows, function(r) {"
            "return [].map.call(r.cells, function(c) { return c.textContent; }); })" % json.dumps(table))
    before = evaluate(session, rows)
    click = "document.getElementById(%s).tHead.rows[0].cells[%d].click()" % (json.dumps(table), col)
    evaluate(session, click)
    first = evaluate(session, rows)
    evaluate(session, click)
    second = evaluate(session, rows)
finally:
    proc.kill()
    proc.wait()


def key(r):
    return float(r[col].replace(",", ""))


assert len(before) >= 2, ("too few rows to sort", before)
assert sorted(map(tuple, first)) == sorted(map(tuple, before)), "rows changed while sorting"
assert [key(r) for r in first] == sorted((key(r) for r in before), reverse=True), ("first click", first)
assert [key(r) for r in second] == sorted(key(r) for r in before), ("second click", second)
assert first != before or second != before, "nothing moved"
print("%s column %d: %d rows sorted high to low, then low to high, in chromium" % (table, col, len(before)))
