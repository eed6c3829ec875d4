"""JDK Flight Recorder events read straight from the binary .jfr recording.

`jfr print --json` (jfr.py) costs a JVM and a JSON text ~150 times larger
than the recording; reading the recording costs neither. read_jfr_recording
returns the events of the types asked for in the shape `jfr print --json`
gives them, so every table function in jfr.py reads either source:
{"type": "jdk.X", "values": {...}}, with timestamps as ISO-8601 instants,
timespans as ISO-8601 durations, constant-pool references resolved and
"simple" types (one field, such as jdk.types.Symbol) replaced by their value.
tests/test_profiles_jfr_recording.py checks every field of every event, and
the tables, against `jfr print` on one real recording. Objects from the
constant pools are shared, not copied: events that recorded the same stack
hold the same stack-trace dict, and equal frames are one dict.

Speed (benchmarks/bench_profiles.py): each type's decoder is Python source
generated from the metadata and compiled when first needed; a stack trace's
frames are split by one regular expression per block of frames and looked
up by their bytes; events of types not asked for are skipped by their size.

The format (JDK 11 and later, version 2.x) as the JDK's own reader
(jdk.jfr.internal.consumer: ChunkHeader, ChunkParser, MetadataReader,
RecordingInput) reads it:

- A file is chunks. A chunk is a 68-byte header (magic "FLR\\0", major and
  minor version, then big-endian 64-bit chunk size, offsets of the last
  constant-pool event and of the metadata event, start nanoseconds since the
  epoch, duration, start ticks, ticks per second; then 32 bits of features,
  bit 0 = integers are compressed), followed by events.
- Every event is its size, its type id, then its fields in the order the
  metadata declares them. Compressed integers are little-endian base-128
  groups of 7 bits, the ninth byte holding 8 bits.
- Event type 0 is the metadata: a string table, then a tree of elements
  (name, attributes, children) whose "class" elements declare each type: id,
  name, superType, simpleType, and "field" children (name, class = the
  field's type id, constantPool, dimension) with their annotations.
- Event type 1 is a constant-pool checkpoint: start, duration, the offset to
  the previous checkpoint (0 ends the chain), a flush byte, then per pool
  the type id, a count, and (key, value) pairs. Values may refer to other
  pools, so references are resolved after every pool of the chunk is read.
- A field is a constant-pool key when its declaration says so, an array
  (count, then elements) when its dimension is 1, a primitive, a string
  (a tag byte: 0 null, 1 empty, 2 pool reference, 3 UTF-8, 4 chars, 5
  Latin-1, then a length) or an inline value of a declared type.
"""

from __future__ import annotations

import functools
import gc
import re
import struct
from collections.abc import Iterable
from datetime import datetime, timezone

from ._sources import PathLike, read_bytes

MAGIC = b"FLR\0"
HEADER_BYTES = 68
METADATA_TYPE_ID = 0
CONSTANT_POOL_TYPE_ID = 1
FEATURE_COMPRESSED_INTEGERS = 1

# Field kinds of the decoder (how the bytes of a field are read).
_VARINT, _BOOLEAN, _BYTE, _FLOAT, _DOUBLE, _STRING, _POOL, _STRUCT = range(8)
_PRIMITIVES = {
    "boolean": _BOOLEAN, "byte": _BYTE, "char": _VARINT, "short": _VARINT, "int": _VARINT, "long": _VARINT,
    "float": _FLOAT, "double": _DOUBLE, "java.lang.String": _STRING,
}

# Units of jdk.jfr.Timespan and jdk.jfr.Timestamp, as the annotation's value names them.
_TIMESPAN_NS = {"NANOSECONDS": 1, "MICROSECONDS": 1_000, "MILLISECONDS": 1_000_000, "SECONDS": 1_000_000_000}
_TIMESTAMP = "jdk.jfr.Timestamp"
_TIMESPAN = "jdk.jfr.Timespan"
_LONG_MIN = -(1 << 63)


class JfrFormatError(ValueError):
    """The bytes are not a JFR recording this reader understands."""


class _Field:
    __slots__ = ("name", "type_id", "kind", "array", "time")

    def __init__(self, name, type_id, kind, array, time):
        self.name = name
        self.type_id = type_id
        self.kind = kind
        self.array = array
        self.time = time  # None, ("instant", unit) or ("span", unit)


class _Type:
    __slots__ = ("type_id", "name", "simple", "fields")

    def __init__(self, type_id, name, simple):
        self.type_id = type_id
        self.name = name
        self.simple = simple
        self.fields: list[_Field] = []


def _signed(value: int, bits: int) -> int:
    if value >= 1 << (bits - 1):
        return value - (1 << bits)
    return value


class _Input:
    """A cursor over one chunk's bytes (compressed integers)."""

    __slots__ = ("data", "position")

    def __init__(self, data: bytes, position: int):
        self.data = data
        self.position = position

    def varint(self) -> int:
        value, self.position = _varint(self.data, self.position)
        return value

    def byte(self) -> int:
        value = self.data[self.position]
        self.position += 1
        return value

    def raw(self, count: int) -> bytes:
        start = self.position
        self.position = start + count
        return self.data[start:start + count]

    def string(self, string_pool_type: int):
        tag = self.byte()
        if tag == 0:
            return None
        if tag == 1:
            return ""
        if tag == 2:
            return (string_pool_type, self.varint())  # a reference, resolved with the pools
        if tag == 3:
            return self.raw(self.varint()).decode("utf-8", errors="replace")
        if tag == 4:
            return "".join(chr(self.varint()) for _ in range(self.varint()))
        if tag == 5:
            return self.raw(self.varint()).decode("latin-1")
        raise JfrFormatError(f"unknown string encoding {tag} at byte {self.position - 1}")


class _Element:
    __slots__ = ("name", "attributes", "children")

    def __init__(self, name, attributes, children):
        self.name = name
        self.attributes = attributes
        self.children = children


def _read_element(cursor: _Input, strings: list) -> _Element:
    name = strings[cursor.varint()]
    attributes = {}
    for _ in range(cursor.varint()):
        key = strings[cursor.varint()]
        attributes[key] = strings[cursor.varint()]
    children = [_read_element(cursor, strings) for _ in range(cursor.varint())]
    return _Element(name, attributes, children)


class _Chunk:
    """One chunk: its header, its types, its resolved constant pools and an event decoder."""

    def __init__(self, data: bytes, start: int):
        if data[start:start + 4] != MAGIC:
            raise JfrFormatError(f"no JFR chunk at byte {start} (magic {data[start:start + 4]!r})")
        major, _minor = struct.unpack_from(">HH", data, start + 4)
        if major != 2:
            raise JfrFormatError(f"JFR format version {major}.x: this reader reads 2.x (JDK 11 and later)")
        (self.size, constant_pool_offset, metadata_offset, self.start_nanos, _duration_nanos, self.start_ticks,
         self.ticks_per_second) = struct.unpack_from(">qqqqqqq", data, start + 8)
        (features,) = struct.unpack_from(">i", data, start + 64)
        if not features & FEATURE_COMPRESSED_INTEGERS:
            raise JfrFormatError("a recording with uncompressed integers: this reader reads compressed ones (JDK 11+)")
        if self.size <= 0 or start + self.size > len(data):
            raise JfrFormatError(f"chunk at byte {start} claims {self.size} bytes; the file ends first "
                                 "(a recording still being written, or cut short)")
        self.data = data
        self.start = start
        # The JDK converts ticks with a double divisor and truncates; so does this, to print the same instants.
        self.ticks_per_ns = self.ticks_per_second / 1e9
        self.types: dict[int, _Type] = {}
        self.by_name: dict[str, _Type] = {}
        self._read_metadata(start + metadata_offset)
        self.pools: dict[int, dict[int, object]] = {}
        self._read_constant_pools(start + constant_pool_offset)

    # -- metadata ----------------------------------------------------------
    def _read_metadata(self, position: int) -> None:
        cursor = _Input(self.data, position)
        cursor.varint()  # size
        if cursor.varint() != METADATA_TYPE_ID:
            raise JfrFormatError(f"no metadata event at byte {position}")
        cursor.varint()  # start
        cursor.varint()  # duration
        cursor.varint()  # metadata id
        strings = []
        for _ in range(cursor.varint()):
            text = cursor.string(-1)
            if isinstance(text, tuple):
                raise JfrFormatError("the metadata's string table refers to a constant pool")
            strings.append(text)
        root = _read_element(cursor, strings)
        classes = [c for e in root.children if e.name == "metadata" for c in e.children if c.name == "class"]
        annotation_names: dict[str, str] = {c.attributes["id"]: c.attributes["name"] for c in classes}
        for element in classes:
            attributes = element.attributes
            declared = _Type(int(attributes["id"]), attributes["name"], attributes.get("simpleType") == "true")
            self.types[declared.type_id] = declared
            self.by_name[declared.name] = declared
        for element in classes:
            declared = self.types[int(element.attributes["id"])]
            for child in element.children:
                if child.name != "field":
                    continue
                attributes = child.attributes
                type_id = int(attributes["class"])
                type_name = self.types[type_id].name if type_id in self.types else ""
                if attributes.get("constantPool") == "true":
                    kind = _POOL
                else:
                    kind = _PRIMITIVES.get(type_name, _STRUCT)
                time = None
                for annotation in child.children:
                    if annotation.name != "annotation":
                        continue
                    annotation_name = annotation_names.get(annotation.attributes.get("class"))
                    if annotation_name == _TIMESTAMP:
                        time = ("instant", annotation.attributes.get("value", "TICKS"))
                    elif annotation_name == _TIMESPAN:
                        time = ("span", annotation.attributes.get("value", "TICKS"))
                declared.fields.append(_Field(attributes["name"], type_id, kind, attributes.get("dimension") == "1", time))
        string_type = self.by_name.get("java.lang.String")
        self.string_type_id = string_type.type_id if string_type else -1

    # -- values ------------------------------------------------------------
    # Each type gets a decoder generated from its declaration (Python source compiled once per chunk, varints
    # read inline): a generic field-by-field interpreter spent ~90% of its time dispatching. A reference to a
    # constant pool is a tuple (type id, key), resolved later. A type whose fields are all integers, booleans
    # and references (a stack frame) is interned: equal frames are one dict, so each is resolved once.
    def _compile_decoders(self) -> None:
        # Compiled when first needed: a chunk declares hundreds of event types and a reader wants a few.
        self.decoders = _Decoders(self._compile_decoder)
        self._caches: dict[int, dict] = {}
        self._bytes_caches: dict[int, dict[bytes, dict]] = {}
        self._patterns: dict[int, tuple] = {}
        self._namespace = {"_read_string": _read_string, "_unpack_from": struct.unpack_from,
                           "decoders": self.decoders, "_time": self._time, "_STRING_TYPE": self.string_type_id,
                           "_split_array": self._split_array, "_intern_bytes": self._intern_bytes}
        for declared in self.types.values():
            self._namespace[f"_time_{declared.type_id}"] = [field.time for field in declared.fields]
            if _internable(declared):
                self._namespace[f"_cache_{declared.type_id}"] = self._caches[declared.type_id] = {}
                self._namespace[f"_bytes_cache_{declared.type_id}"] = self._bytes_caches[declared.type_id] = {}

    def _compile_decoder(self, type_id: int):
        declared = self.types.get(type_id)
        if declared is None:
            raise JfrFormatError(f"a value of type id {type_id}, which the metadata does not declare")
        if declared.name != "java.lang.String" and (declared.name in _PRIMITIVES or not declared.fields):
            raise JfrFormatError(f"a value of type {declared.name}, which has no fields to read")
        exec(compile(_decoder_source(declared, self.types), f"<jfr decoder of {declared.name}>", "exec"),
             self._namespace)
        return self._namespace[f"decode_{type_id}"]

    def _compile_event_decoder(self, type_id: int):
        declared = self.types[type_id]
        exec(compile(_decoder_source(declared, self.types, event=True), f"<jfr decoder of event {declared.name}>",
                     "exec"), self._namespace)
        # References left after reading: strings that name the string pool, inline values of other types.
        walk = any(field.kind in (_STRING, _STRUCT) or (field.array and field.kind == _POOL) for field in declared.fields)
        return self._namespace[f"decode_event_{type_id}"], walk

    def _split_array(self, type_id: int, data: bytes, position: int, count: int) -> tuple[list[bytes], int]:
        """The bytes of each of `count` consecutive values of an interned type, and the position after them.

        Patterns of 16, 4 and 1 values (one group each) take the array in a few matches: one pattern per
        length would cost more to compile than it saves.
        """
        patterns = self._patterns.get(type_id)
        if patterns is None:
            patterns = self._patterns[type_id] = _block_patterns(_element_pattern(self.types[type_id]))
        parts: list[bytes] = []
        for size, pattern in patterns:
            while count >= size:
                match = pattern.match(data, position)
                if match is None:
                    raise JfrFormatError(f"an array of {self.types[type_id].name} cut short at byte {position}")
                parts.extend(match.groups())
                position = match.end()
                count -= size
        return parts, position

    def _intern_bytes(self, type_id: int, encoded: bytes) -> dict:
        value, _ = self.decoders[type_id](encoded, 0)
        self._bytes_caches[type_id][encoded] = value
        return value

    def _time(self, value: int, time: tuple[str, str]):
        kind, unit = time
        if value == _LONG_MIN:
            return None  # JFR's "no value"
        if kind == "instant":
            if unit == "TICKS":
                return _instant(self.start_nanos + int((value - self.start_ticks) / self.ticks_per_ns))
            if unit == "MILLISECONDS_SINCE_EPOCH":
                return _instant(value * 1_000_000)
            return value
        if unit == "TICKS":
            return _duration(int(value / self.ticks_per_ns))
        if unit in _TIMESPAN_NS:
            return _duration(value * _TIMESPAN_NS[unit])
        return value

    # -- constant pools ----------------------------------------------------
    def _read_constant_pools(self, position: int) -> None:
        self._compile_decoders()
        data = self.data
        seen = set()
        while True:
            if position in seen:
                raise JfrFormatError(f"constant-pool chain loops at byte {position}")
            seen.add(position)
            cursor = _Input(data, position)
            cursor.varint()  # size
            if cursor.varint() != CONSTANT_POOL_TYPE_ID:
                raise JfrFormatError(f"no constant-pool event at byte {position}")
            cursor.varint()  # start
            cursor.varint()  # duration
            delta = _signed(cursor.varint(), 64)
            cursor.byte()  # flush
            for _ in range(cursor.varint()):
                type_id = cursor.varint()
                decode = self.decoders[type_id]
                pool = self.pools.setdefault(type_id, {})
                count = cursor.varint()
                offset = cursor.position
                for _ in range(count):
                    key, offset = _varint(data, offset)
                    value, offset = decode(data, offset)
                    # Walking backwards, the newest value of a key is met first; it stands.
                    if key not in pool:
                        pool[key] = value
                cursor.position = offset
            if delta == 0:
                self._link()
                return
            position += delta

    def _link(self) -> None:
        """Replace every reference inside the pools by the object it names, in place (objects are shared).

        Every pool entry, and every interned value (stack frames), is walked once; an array of interned
        values (a stack trace's frames) needs no walk of its own, which is what keeps this cheap.
        """
        self._visited: set[int] = set()
        self._interned_ids = {id(value) for cache in self._caches.values() for value in cache.values()}
        for cache in self._caches.values():
            for value in cache.values():
                self._walk(value)
        for type_id, pool in self.pools.items():
            if not self._holds_references(type_id):
                continue  # a stack trace: a flag and interned frames, walked above
            for key, value in pool.items():
                if type(value) is tuple:  # a simple type whose one field names another pool's entry
                    pool[key] = self._target(value)
                elif type(value) is dict or type(value) is list:
                    self._walk(value)
        for type_id in self.types:
            self._namespace[f"_pool_{type_id}"] = self.pools.get(type_id, {})
        self.event_decoders = _Decoders(self._compile_event_decoder)

    def _holds_references(self, type_id: int, seen: frozenset = frozenset()) -> bool:
        """Whether a value of this type can hold a reference outside interned values (which are walked apart)."""
        declared = self.types.get(type_id)
        if declared is None or type_id in seen:
            return True
        for field in declared.fields:
            if field.kind in (_POOL, _STRING):
                return True
            if field.kind == _STRUCT:
                inner = self.types.get(field.type_id)
                if inner is None or (not _internable(inner) and self._holds_references(field.type_id, seen | {type_id})):
                    return True
        return False

    def _target(self, reference: tuple):
        value = reference
        for _ in range(64):  # a chain of simple types naming each other, never a cycle in practice
            value = self.pools.get(value[0], {}).get(value[1])
            if type(value) is not tuple:
                return value
        return None

    def _walk(self, root) -> None:
        visited, interned, target = self._visited, self._interned_ids, self._target
        stack = [root]
        while stack:
            value = stack.pop()
            if id(value) in visited:
                continue
            visited.add(id(value))
            if type(value) is dict:
                items = value.items()
            else:
                if value and id(value[0]) in interned:
                    continue  # arrays hold one type: all interned, and walked already
                items = enumerate(value)
            for name, item in items:
                kind = type(item)
                if kind is tuple:
                    item = value[name] = target(item)
                    kind = type(item)
                if (kind is dict or kind is list) and id(item) not in visited:
                    stack.append(item)

    # -- events ------------------------------------------------------------
    def events(self, wanted: set[str] | None) -> Iterable[dict]:
        data = self.data
        position = self.start + HEADER_BYTES
        end = self.start + self.size
        wanted_ids = {type_id: declared for type_id, declared in self.types.items()
                      if wanted is None or declared.name in wanted}
        wanted_ids.pop(METADATA_TYPE_ID, None)
        wanted_ids.pop(CONSTANT_POOL_TYPE_ID, None)
        decoders = self.event_decoders
        walk = self._walk
        while position < end:
            size, after_size = _varint(data, position)
            if size <= 0:
                raise JfrFormatError(f"an event of size {size} at byte {position}")
            type_id, offset = _varint(data, after_size)
            declared = wanted_ids.get(type_id)
            if declared is not None:
                decode, needs_walk = decoders[type_id]
                values, _ = decode(data, offset)
                if needs_walk:
                    walk(values)
                yield {"type": declared.name, "values": values}
            position += size


class _Decoders(dict):
    """type id -> decode(data, p) -> (value, next p), compiled on first use."""

    def __init__(self, compile_decoder):
        super().__init__()
        self._compile_decoder = compile_decoder

    def __missing__(self, type_id: int):
        decoder = self[type_id] = self._compile_decoder(type_id)
        return decoder


def _varint(data: bytes, position: int) -> tuple[int, int]:
    """(value, next position) of the compressed integer at position."""
    byte = data[position]
    if byte < 0x80:
        return byte, position + 1
    result = byte & 0x7F
    shift = 7
    position += 1
    while shift < 56:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7
    return result | data[position] << 56, position + 1


def _read_string(data: bytes, position: int, string_type_id: int):
    cursor = _Input(data, position)
    value = cursor.string(string_type_id)
    return value, cursor.position


_MASKS = {"short": (0xFFFF, 0x8000), "int": (0xFFFFFFFF, 0x80000000),
          "long": (0xFFFFFFFFFFFFFFFF, 0x8000000000000000), "char": (0xFFFF, None)}


def _varint_source(target: str, indent: str) -> list[str]:
    return [
        f"{indent}b = data[p]; p += 1",
        f"{indent}if b < 128:",
        f"{indent}    {target} = b",
        f"{indent}else:",
        f"{indent}    {target} = b & 127; s = 7",
        f"{indent}    while True:",
        f"{indent}        b = data[p]; p += 1",
        f"{indent}        if s == 56:",
        f"{indent}            {target} |= b << 56; break",
        f"{indent}        {target} |= (b & 127) << s",
        f"{indent}        if b < 128: break",
        f"{indent}        s += 7",
    ]


# One compressed integer: up to 8 bytes with the high bit set and one without, or 8 with it and any ninth.
_VARINT_PATTERN = rb"(?:[\x80-\xff]{0,7}[\x00-\x7f]|[\x80-\xff]{8}[\x00-\xff])"
_BYTE_PATTERN = rb"[\x00-\xff]"


def _element_pattern(declared: _Type) -> bytes:
    """The bytes of one encoded value of an interned type, as a regular expression."""
    return b"".join(_BYTE_PATTERN if field.kind in (_BOOLEAN, _BYTE) else _VARINT_PATTERN for field in declared.fields)


_BLOCK_SIZES = (16, 4, 1)


@functools.lru_cache(maxsize=64)
def _block_patterns(element: bytes) -> tuple[tuple[int, re.Pattern], ...]:
    """(size, pattern of `size` consecutive values, one group each), largest first."""
    return tuple((size, re.compile((b"(" + element + b")") * size)) for size in _BLOCK_SIZES)


def _internable(declared: _Type) -> bool:
    """Values of this type are interned: flat (integers, booleans, references) and not a simple type."""
    return bool(declared.fields) and not (declared.simple and len(declared.fields) == 1) and all(
        not field.array and field.time is None and field.kind in (_POOL, _VARINT, _BOOLEAN, _BYTE)
        for field in declared.fields)


def _field_source(field: _Field, target: str, indent: str, types: dict[int, _Type], index: int,
                  type_id: int, raw_references: bool = False, pools_linked: bool = False) -> list[str]:
    type_name = types[field.type_id].name if field.type_id in types else ""
    if field.kind == _POOL:
        lines = _varint_source(target, indent)
        if raw_references:
            return lines
        if pools_linked:  # an event's field, read after every pool is linked: the object itself
            return lines + [f"{indent}{target} = _pool_{field.type_id}.get({target})"]
        return lines + [f"{indent}{target} = ({field.type_id}, {target})"]
    if field.kind == _VARINT:
        lines = _varint_source(target, indent)
        mask, sign = _MASKS.get(type_name, (None, None))
        if mask is not None:
            lines.append(f"{indent}{target} &= {mask}")
        if sign is not None:
            lines.append(f"{indent}if {target} & {sign}: {target} -= {sign << 1}")
        if field.time is not None:
            lines.append(f"{indent}{target} = _time({target}, _time_{type_id}[{index}])")
        return lines
    if field.kind == _BOOLEAN:
        return [f"{indent}{target} = data[p] != 0; p += 1"]
    if field.kind == _BYTE:
        return [f"{indent}{target} = data[p]; p += 1", f"{indent}if {target} >= 128: {target} -= 256"]
    if field.kind == _FLOAT:
        return [f"{indent}{target} = _unpack_from('>f', data, p)[0]; p += 4"]
    if field.kind == _DOUBLE:
        return [f"{indent}{target} = _unpack_from('>d', data, p)[0]; p += 8"]
    if field.kind == _STRING:
        return [f"{indent}{target}, p = _read_string(data, p, _STRING_TYPE)"]
    inner = types.get(field.type_id)
    if inner is not None and _internable(inner):
        # Inlined: a stack trace's frames would otherwise cost a call each.
        return _struct_source(inner, types, indent, f"{target}_", target)
    return [f"{indent}{target}, p = decoders[{field.type_id}](data, p)"]


def _struct_source(declared: _Type, types: dict[int, _Type], indent: str, prefix: str, result: str,
                   pools_linked: bool = False) -> list[str]:
    """Lines that read one value of `declared` at data[p] into `result`, advancing p."""
    type_id = declared.type_id
    internable = _internable(declared)
    lines, names = [], []
    for index, field in enumerate(declared.fields):
        target = f"{prefix}{index}"
        names.append(target)
        element = types.get(field.type_id)
        if field.array and field.kind == _STRUCT and element is not None and _internable(element):
            # An array of interned values (a stack trace's frames): one regular-expression match finds the bytes
            # of all of them, and each element's bytes are the key of its interned value, so a frame met before
            # costs a dictionary look-up instead of four integers decoded in Python.
            lines += _varint_source(f"{target}_n", indent)
            lines += [f"{indent}{target}_parts, p = _split_array({element.type_id}, data, p, {target}_n)",
                      f"{indent}{target} = list(map(_bytes_cache_{element.type_id}.get, {target}_parts))",
                      f"{indent}if None in {target}:",
                      f"{indent}    {target} = [_intern_bytes({element.type_id}, k) if v is None else v "
                      f"for k, v in zip({target}_parts, {target})]"]
        elif field.array:
            lines += _varint_source(f"{target}_n", indent)
            lines.append(f"{indent}{target} = []")
            lines.append(f"{indent}for _ in range({target}_n):")
            lines += _field_source(field, f"{target}_item", indent + "    ", types, index, type_id)
            lines.append(f"{indent}    {target}.append({target}_item)")
        else:
            lines += _field_source(field, target, indent, types, index, type_id, raw_references=internable,
                                   pools_linked=pools_linked)
    if declared.simple and len(declared.fields) == 1:
        return lines + [f"{indent}{result} = {names[0]}"]
    if not internable:
        items = ", ".join(f"{field.name!r}: {name}" for field, name in zip(declared.fields, names))
        return lines + [f"{indent}{result} = {{{items}}}"]
    # The key holds the raw integers (cheaper to hash than reference tuples); the value wraps references.
    items = ", ".join(f"{field.name!r}: ({field.type_id}, {name})" if field.kind == _POOL else f"{field.name!r}: {name}"
                      for field, name in zip(declared.fields, names))
    key = "(" + ", ".join(names) + ",)"
    return lines + [
        f"{indent}{prefix}key = {key}",
        f"{indent}{result} = _cache_{type_id}.get({prefix}key)",
        f"{indent}if {result} is None:",
        f"{indent}    {result} = _cache_{type_id}[{prefix}key] = {{{items}}}",
    ]


def _decoder_source(declared: _Type, types: dict[int, _Type], event: bool = False) -> str:
    """Python source of decode_<id>(data, p) -> (value, next p) for one declared type (decode_event_<id> for an
    event's fields, whose references are looked up in the linked pools as they are read)."""
    lines = [f"def decode_{'event_' if event else ''}{declared.type_id}(data, p):"]
    if declared.name == "java.lang.String":
        return "\n".join(lines + ["    return _read_string(data, p, _STRING_TYPE)"])
    lines += _struct_source(declared, types, "    ", "v", "value", pools_linked=event)
    return "\n".join(lines + ["    return value, p"])


def _instant(nanos: int) -> str:
    """nanoseconds since the epoch as ISO-8601 UTC text with all nine digits, as `jfr print --json` writes them."""
    seconds, fraction = divmod(nanos, 1_000_000_000)
    text = _SECONDS_TEXT.get(seconds)
    if text is None:
        if len(_SECONDS_TEXT) > 100_000:
            _SECONDS_TEXT.clear()
        text = _SECONDS_TEXT[seconds] = datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.")
    return f"{text}{fraction:09d}Z"


_SECONDS_TEXT: dict[int, str] = {}  # events come thousands to a second


def _duration(nanos: int) -> str:
    """nanoseconds as java.time.Duration prints them ("PT0.003696475S", "PT1M2.5S", "PT0S")."""
    if nanos == 0:
        return "PT0S"
    sign = "-" if nanos < 0 else ""
    magnitude = abs(nanos)
    seconds, fraction = divmod(magnitude, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    text = "PT"
    if hours:
        text += f"{sign}{hours}H"
    if minutes:
        text += f"{sign}{minutes}M"
    if seconds or fraction or not (hours or minutes):
        digits = f"{fraction:09d}".rstrip("0")
        text += f"{sign}{seconds}" + (f".{digits}" if digits else "") + "S"
    return text


def read_jfr_recording(path_or_bytes: PathLike | bytes, event_types: Iterable[str] | None = None) -> list[dict]:
    """The events of a .jfr recording (plain or gzip), in file order, shaped as `jfr print --json` gives them.

    `event_types` keeps only those types ("jdk.ExecutionSample", ...); the
    others are skipped by their size without being decoded. Stack traces are
    whole (up to the depth the recorder kept), unlike `jfr print`, which cuts
    them to 5 frames unless given --stack-depth.
    """
    data = path_or_bytes if isinstance(path_or_bytes, (bytes, bytearray, memoryview)) else read_bytes(path_or_bytes)
    data = bytes(data)
    if not data.startswith(MAGIC):
        raise JfrFormatError("not a JFR recording: it does not start with FLR\\0")
    wanted = set(event_types) if event_types is not None else None
    events: list[dict] = []
    position = 0
    # Hundreds of thousands of small dicts and tuples, none of them garbage while they are built: the cyclic
    # collector would scan them again and again (as for jfr.parse_jfr_json), so it waits until the end.
    enabled = gc.isenabled()
    gc.disable()
    try:
        while position < len(data):
            chunk = _Chunk(data, position)
            events.extend(chunk.events(wanted))
            position += chunk.size
    finally:
        if enabled:
            gc.enable()
    return events
