#!/usr/bin/python3
"""lttng_ctf_gen.py - write a CTF trace of trainscope:* events with babeltrace2's
own CTF writer (sink.ctf.fs), for testing src/ingest/ctf.c without LTTng.

Usage: lttng_ctf_gen.py SCENARIO OUTDIR

SCENARIO has one event per line, tab-separated:
    TS_NS <tab> VPID <tab> VTID <tab> EVENT <tab> key=value <tab> ...
EVENT is a trainscope tracepoint name (push, pop, complete, ...); its fields
and their types mirror src/capture/lttng/lttng_tp.h (fields left out are 0 or "").
Any other EVENT (e.g. "other:thing") becomes an event of that full name with
one string field per key=value given, as another provider's would.
In values, '^' stands for the args unit separator (0x1f) and '~' for the
record separator (0x1e). Lines starting with '#' are comments. The EVENT
"discarded" with count=N (VPID and VTID ignored) is not an event: it ends the
packet there and says the tracer discarded N events before the next packet
ends, as LTTng's ring buffer in discard mode does when it is full. The clock is
1 GHz, so TS_NS is the event's clock value, as LTTng's monotonic clock gives.
Needs python3-bt2 (Debian's /usr/bin/python3).
"""
import sys

import bt2

S, S8, S32, S64, U64, D = "s", "s8", "s32", "s64", "u64", "d"
SCHEMA = {  # mirror of src/capture/lttng/lttng_tp.h
    "push": [("cat", S), ("name", S)],
    "pop": [],
    "range_begin": [("id", U64), ("cat", S), ("name", S)],
    "range_end": [("id", U64)],
    "instant": [("cat", S), ("name", S)],
    "counter": [("name", S), ("value", D)],
    "complete": [("phase", S8), ("cat", S), ("name", S), ("ts_ns", S64), ("dur_ns", S64), ("pid", S64),
                 ("tid", S64), ("value", D), ("flow_id", U64), ("flow_phase", S8), ("args", S)],
    "memcpy": [("name", S), ("bytes", U64), ("ts_ns", S64), ("dur_ns", S64), ("device", S64),
               ("stream", S64), ("correlation", S64)],
    "collective": [("api", S), ("coll", S), ("comm", S), ("seq", S64), ("in_nelems", S64),
                   ("out_nelems", S64), ("dtype", S), ("nranks", S32), ("rank", S32), ("peer", S32),
                   ("ts_ns", S64), ("dur_ns", S64)],
    "alloc": [("ptr", U64), ("bytes", U64), ("device", S32)],
    "free": [("ptr", U64), ("bytes", U64), ("device", S32)],
    "flow": [("id", U64), ("phase", S8), ("cat", S)],
    "thread_name": [("name", S)],
    "rank": [("rank", S32), ("world_size", S32)],
}


def field_class(tc, kind):
    if kind == S:
        return tc.create_string_field_class()
    if kind == D:
        return tc.create_double_precision_real_field_class()
    if kind == U64:
        return tc.create_unsigned_integer_field_class(64)
    return tc.create_signed_integer_field_class(int(kind[1:]))


def value(kind, text):
    if kind == S:
        return text.replace("^", "\x1f").replace("~", "\x1e")
    if kind == D:
        return float(text)
    if kind == S8 and len(text) == 1 and not text.isdigit():
        return ord(text)   # phase=X, flow_phase=f
    return int(text, 0)


def read_scenario(path):
    events = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cols = line.split("\t")
            fields = dict(c.split("=", 1) for c in cols[4:])
            events.append((int(cols[0]), int(cols[1]), int(cols[2]), cols[3], fields))
    return events


class Iter(bt2._UserMessageIterator):
    def __init__(self, config, port):
        self._msgs = iter(port.user_data)

    def __next__(self):
        return next(self._msgs)(self)


@bt2.plugin_component_class
class Source(bt2._UserSourceComponent, message_iterator_class=Iter):
    def __init__(self, config, params, events):
        tc = self._create_trace_class()
        cc = self._create_clock_class(frequency=1000000000, name="monotonic")
        ctx = tc.create_structure_field_class()
        ctx.append_member("vpid", tc.create_signed_integer_field_class(32))
        ctx.append_member("vtid", tc.create_signed_integer_field_class(32))
        sc = tc.create_stream_class(default_clock_class=cc, event_common_context_field_class=ctx,
                                    supports_packets=True, packets_have_beginning_default_clock_snapshot=True,
                                    packets_have_end_default_clock_snapshot=True,
                                    supports_discarded_events=True,
                                    discarded_events_have_default_clock_snapshots=True)
        real = [e for e in events if e[3] != "discarded"]
        classes, schema = {}, dict(SCHEMA)
        for _, _, _, name, fields in real:
            if name not in schema:   # another provider's event: string fields
                schema[name] = [(k, S) for k in fields]
        for name, fields in schema.items():
            payload = tc.create_structure_field_class()
            for fname, kind in fields:
                payload.append_member(fname, field_class(tc, kind))
            full = name if name not in SCHEMA else "trainscope:" + name
            classes[name] = sc.create_event_class(name=full, payload_field_class=payload)
        stream = tc().create_stream(sc)
        # Packets: the events between "discarded" markers. A packet ends at its
        # last event; the next begins there, and a discarded-events message
        # spans from one packet's end to the next one's, as CTF encodes it.
        packets, cur, counts = [], [], []
        for e in events:
            if e[3] == "discarded":
                packets.append(cur)
                counts.append(int(e[4]["count"]))
                cur = []
            else:
                cur.append(e)
        packets.append(cur)
        ends, t = [], real[0][0]
        for p in packets:
            t = p[-1][0] if p else t
            ends.append(t)
        msgs = [lambda it: it._create_stream_beginning_message(stream)]
        box = {}
        for k, p in enumerate(packets):
            begin = real[0][0] if k == 0 else ends[k - 1]
            if k > 0:
                def discarded(it, b=ends[k - 1], e=ends[k], n=counts[k - 1]):
                    m = it._create_discarded_events_message(stream, n, b, e)
                    return m
                msgs.append(discarded)

            def packet_begin(it, begin=begin):
                box["packet"] = stream.create_packet()
                return it._create_packet_beginning_message(box["packet"], begin)
            msgs.append(packet_begin)
            for ts, vpid, vtid, name, fields in p:
                def make(it, ts=ts, vpid=vpid, vtid=vtid, name=name, fields=fields):
                    msg = it._create_event_message(classes[name], box["packet"], ts)
                    msg.event.common_context_field["vpid"] = vpid
                    msg.event.common_context_field["vtid"] = vtid
                    for fname, kind in schema[name]:
                        default = "" if kind == S else "0"
                        msg.event.payload_field[fname] = value(kind, fields.get(fname, default))
                    return msg
                msgs.append(make)
            msgs.append(lambda it, end=ends[k]: it._create_packet_end_message(box["packet"], end))
        msgs.append(lambda it: it._create_stream_end_message(stream))
        self._add_output_port("out", msgs)


def main():
    events = read_scenario(sys.argv[1])
    graph = bt2.Graph()
    src = graph.add_component(Source, "src", obj=events)
    sink_cls = bt2.find_plugin("ctf").sink_component_classes["fs"]
    sink = graph.add_component(sink_cls, "sink", params={"path": sys.argv[2]})
    graph.connect_ports(src.output_ports["out"], sink.input_ports["in"])
    graph.run()


if __name__ == "__main__":
    main()
