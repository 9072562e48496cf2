#!/usr/bin/env python3
"""The nodes of an ONNX model (name, op type, integer attributes), read straight from the
protobuf wire format: enough for bench/performance.py to tell a 3x3 convolution from a 1x1 one
by its kernel_shape, without the onnx Python package (not installed on the benchmark machine).

    bench/onnx_nodes.py MODEL.onnx        # prints one line per node
"""
import sys


def _varint(data, pos):
    result, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def _fields(data):
    """(field number, wire type, value) of one message; value is an int or a memoryview."""
    pos, end = 0, len(data)
    while pos < end:
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos:pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos:pos + length], pos + length
        elif wire == 5:
            value, pos = data[pos:pos + 4], pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
        yield number, wire, value


def _signed(value):
    return value - (1 << 64) if value >= 1 << 63 else value


def _attribute(data):
    name, ints, i = "", [], None
    for number, wire, value in _fields(data):
        if number == 1:
            name = bytes(value).decode()
        elif number == 3:
            i = _signed(value)
        elif number == 8 and wire == 0:
            ints.append(_signed(value))
        elif number == 8 and wire == 2:  # packed
            pos = 0
            while pos < len(value):
                v, pos = _varint(value, pos)
                ints.append(_signed(v))
    return name, (ints if ints else i)


def nodes(path):
    """[{"name", "op_type", "attrs": {name: int or [ints]}}] of the model's main graph."""
    with open(path, "rb") as f:
        data = memoryview(f.read())
    result = []
    for number, _, graph in _fields(data):
        if number != 7:  # ModelProto.graph
            continue
        for field, _, node in _fields(graph):
            if field != 1:  # GraphProto.node
                continue
            entry = {"name": "", "op_type": "", "attrs": {}}
            for n, _, value in _fields(node):
                if n == 3:
                    entry["name"] = bytes(value).decode()
                elif n == 4:
                    entry["op_type"] = bytes(value).decode()
                elif n == 5:
                    key, attr = _attribute(value)
                    if attr is not None:
                        entry["attrs"][key] = attr
            result.append(entry)
    return result


if __name__ == "__main__":
    for node in nodes(sys.argv[1]):
        print(node["name"], node["op_type"], node["attrs"])
