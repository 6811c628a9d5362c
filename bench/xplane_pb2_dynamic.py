"""xplane_pb2_dynamic.py - tensorflow/tsl's xplane.proto (the messages and
fields trainscope reads) built at run time with the protobuf Python module's
descriptor pool, so Python can decode an XSpace without TensorFlow or protoc.
Used by bench/readers.py (the Python peer) and test/e2e/xplane_capture.sh
(the independent decoder)."""
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

F = descriptor_pb2.FieldDescriptorProto


def _msg(fd, name, fields, maps=()):
    m = fd.message_type.add(name=name)
    for num, fname, ftype, label, tname in fields:
        f = m.field.add(name=fname, number=num, type=ftype, label=label)
        if tname:
            f.type_name = tname
    for num, fname, vtype in maps:
        entry = m.nested_type.add(name=fname.title().replace("_", "") + "Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
        entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=F.LABEL_OPTIONAL, type_name=vtype)
        m.field.add(name=fname, number=num, type=F.TYPE_MESSAGE, label=F.LABEL_REPEATED,
                    type_name=f".xp.{name}.{entry.name}")
    return m


def classes():
    fd = descriptor_pb2.FileDescriptorProto(name="xplane_dyn.proto", package="xp", syntax="proto3")
    O, R = F.LABEL_OPTIONAL, F.LABEL_REPEATED
    _msg(fd, "XSpace", [(1, "planes", F.TYPE_MESSAGE, R, ".xp.XPlane")])
    _msg(fd, "XPlane", [(1, "id", F.TYPE_INT64, O, None), (2, "name", F.TYPE_STRING, O, None),
                        (3, "lines", F.TYPE_MESSAGE, R, ".xp.XLine")],
         maps=[(4, "event_metadata", ".xp.XEventMetadata"), (5, "stat_metadata", ".xp.XStatMetadata")])
    _msg(fd, "XLine", [(1, "id", F.TYPE_INT64, O, None), (2, "name", F.TYPE_STRING, O, None),
                       (11, "display_name", F.TYPE_STRING, O, None), (3, "timestamp_ns", F.TYPE_INT64, O, None),
                       (4, "events", F.TYPE_MESSAGE, R, ".xp.XEvent")])
    _msg(fd, "XEvent", [(1, "metadata_id", F.TYPE_INT64, O, None), (2, "offset_ps", F.TYPE_INT64, O, None),
                        (5, "num_occurrences", F.TYPE_INT64, O, None), (3, "duration_ps", F.TYPE_INT64, O, None),
                        (4, "stats", F.TYPE_MESSAGE, R, ".xp.XStat")])
    _msg(fd, "XEventMetadata", [(1, "id", F.TYPE_INT64, O, None), (2, "name", F.TYPE_STRING, O, None),
                                (4, "display_name", F.TYPE_STRING, O, None)])
    _msg(fd, "XStatMetadata", [(1, "id", F.TYPE_INT64, O, None), (2, "name", F.TYPE_STRING, O, None)])
    _msg(fd, "XStat", [(1, "metadata_id", F.TYPE_INT64, O, None), (2, "double_value", F.TYPE_DOUBLE, O, None),
                       (3, "uint64_value", F.TYPE_UINT64, O, None), (4, "int64_value", F.TYPE_INT64, O, None),
                       (5, "str_value", F.TYPE_STRING, O, None), (6, "bytes_value", F.TYPE_BYTES, O, None),
                       (7, "ref_value", F.TYPE_UINT64, O, None)])
    pool = descriptor_pool.DescriptorPool()
    pool.Add(fd)
    get = getattr(message_factory, "GetMessageClass", None)
    if get:
        return get(pool.FindMessageTypeByName("xp.XSpace"))
    return message_factory.MessageFactory(pool).GetPrototype(pool.FindMessageTypeByName("xp.XSpace"))
