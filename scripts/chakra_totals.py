#!/usr/bin/python3
"""chakra_totals.py - the totals of a Chakra execution trace (.et) counted by
Google's protobuf module (Debian python3-protobuf, protoc from
protobuf-compiler), independently of trainscope's reader: the expected values
of test/unit/test_chakra.c come from here.

Usage: scripts/chakra_totals.py FILE.et
The schema below is the subset of mlcommons/chakra's et_def.proto this needs
(field numbers as published there).
"""
import os, subprocess, sys, tempfile

PROTO = '''syntax = "proto3";
package ChakraProtoMsg;
message AttributeProto {
  string name = 1;
  oneof value { int32 int32_val = 7; int64 int64_val = 9; uint64 uint64_val = 13; bool bool_val = 27; string string_val = 29; }
}
message GlobalMetadata { string version = 1; repeated AttributeProto attr = 2; }
message Node {
  uint64 id = 1; string name = 2; int32 type = 3;
  repeated uint64 ctrl_deps = 4; repeated uint64 data_deps = 5;
  uint64 start_time_micros = 6; uint64 duration_micros = 7;
  repeated AttributeProto attr = 10;
}
'''

def messages(path):
    """The file's length-prefixed messages: GlobalMetadata first, then Nodes."""
    from google.protobuf.internal.decoder import _DecodeVarint32
    data = open(path, 'rb').read()
    pos, msgs = 0, []
    while pos < len(data):
        n, pos = _DecodeVarint32(data, pos)
        msgs.append(data[pos:pos + n])
        pos += n
    return msgs

def main(path):
    tmp = tempfile.mkdtemp()
    with open(os.path.join(tmp, 'et_subset.proto'), 'w') as f:
        f.write(PROTO)
    subprocess.check_call(['protoc', '-I', tmp, '--python_out', tmp, 'et_subset.proto'])
    sys.path.insert(0, tmp)
    import et_subset_pb2 as pb
    msgs = messages(path)
    pb.GlobalMetadata().ParseFromString(msgs[0])
    nodes = []
    for m in msgs[1:]:
        nd = pb.Node()
        nd.ParseFromString(m)
        nodes.append(nd)
    by_id = {n.id: n for n in nodes}
    timed = [n for n in nodes if n.duration_micros > 0]
    attrs = lambda n: {a.name: getattr(a, a.WhichOneof('value')) for a in n.attr if a.WhichOneof('value')}
    comm = [n for n in nodes if n.type == 7]
    # dependency edges between timed nodes, looking through untimed ones (as docs/ingest.md says)
    edges = 0
    for n in timed:
        seen, stack = set(), [d for d in n.data_deps if d in by_id]
        while stack:
            d = stack.pop()
            if d in seen:
                continue
            seen.add(d)
            if by_id[d].duration_micros > 0:
                edges += 1
            else:
                stack += [e for e in by_id[d].data_deps if e in by_id]
    # longest data-dependency chain (a lower bound of any schedule's span)
    finish = {}
    def chain(n):
        if n.id in finish:
            return finish[n.id]
        finish[n.id] = 0  # guards a cycle
        finish[n.id] = max([chain(by_id[d]) for d in n.data_deps if d in by_id] or [0]) + n.duration_micros
        return finish[n.id]
    sys.setrecursionlimit(100000)
    longest = max((chain(n) for n in nodes), default=0)
    lanes, cats = {}, {}
    for n in timed:
        a = attrs(n)
        cat = 'collective' if n.type == 7 else 'cpu_op' if a.get('is_cpu_op', True) else 'kernel'
        c = cats.setdefault(cat, [0, 0])
        c[0] += 1
        c[1] += n.duration_micros
        a = attrs(n)
        cpu = a.get('is_cpu_op', not 5 <= n.type <= 7)
        key = (cpu, a.get('tid', 0))
        lanes[key] = lanes.get(key, 0) + n.duration_micros
    # the replay docs/ingest.md describes (ASTRA-sim's order): ready nodes in
    # file order, each on its lane once free, after its data dependencies
    # ended and its control dependencies on earlier nodes started
    import heapq
    row = {n.id: i for i, n in enumerate(nodes)}
    lane_of = lambda n: (attrs(n).get('is_cpu_op', not 5 <= n.type <= 7), attrs(n).get('tid', 0))
    kids = [[] for _ in nodes]
    indeg = [0] * len(nodes)
    ctrl = {'followed': 0, 'later': 0, 'absent': 0}
    for i, n in enumerate(nodes):
        for d in n.data_deps:
            if d in row:
                indeg[i] += 1
                kids[row[d]].append((i, 'end'))
        for d in n.ctrl_deps:
            k = 'absent' if d not in row else 'later' if row[d] >= i else 'followed'
            ctrl[k] += 1
            if k == 'followed':
                indeg[i] += 1
                kids[row[d]].append((i, 'start'))
    ready, lanes_free, heap = [0] * len(nodes), {}, [i for i in range(len(nodes)) if indeg[i] == 0]
    heapq.heapify(heap)
    t0, t1 = None, 0
    while heap:
        i = heapq.heappop(heap)
        n = nodes[i]
        start = max(ready[i], lanes_free.get(lane_of(n), 0))
        end = start + n.duration_micros
        if n.duration_micros > 0:
            lanes_free[lane_of(n)] = end
            t0 = start if t0 is None else min(t0, start)
            t1 = max(t1, end)
        for k, when in kids[i]:
            ready[k] = max(ready[k], end if when == 'end' else start)
            indeg[k] -= 1
            if indeg[k] == 0:
                heapq.heappush(heap, k)
    print('nodes', len(nodes))
    print('timed', len(timed))
    print('untimed', len(nodes) - len(timed))
    print('runtime_us_total', sum(n.duration_micros for n in nodes))
    print('comm_nodes', len(comm))
    print('comm_bytes_total', sum(attrs(n).get('comm_size', 0) for n in comm))
    print('dep_edges', edges)
    print('longest_chain_us', longest)
    print('busiest_lane_us', max(lanes.values(), default=0))
    print('replay_span_us', t1 - t0 if t0 is not None else 0)
    for k in ('followed', 'later', 'absent'):
        print('ctrl_' + k, ctrl[k])
    print('lanes', len(lanes))
    for cat in sorted(cats):
        print('category', cat, cats[cat][0], cats[cat][1])

if __name__ == '__main__':
    main(sys.argv[1])
