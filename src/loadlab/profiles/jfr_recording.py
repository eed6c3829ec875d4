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
Stack traces (tens of thousands in a recording sampled every millisecond)
stay bytes until an event read asks for one (_LazyPool), so reading GC or
thread events costs nothing for them. The metadata's declarations are read
once per process (the harness reads each recording twice).

read_jfr_stack_counts is the fast path of the harness's CPU stacks
(jfr.read_jfr_stacks): no dict per event or frame. Each sample is read only
as far as its startTime and stackTrace key, the keys are counted, and each
distinct stack is folded once from its bytes: numpy finds where every
stack ends (every value is a compressed integer or a byte, each ending at a
byte below 128), one findall splits a stack into its frames' bytes, and a
frame's name is looked up by those bytes. tests/test_profiles_jfr_fast.py
checks its tables equal jfr_stacks' on the events of read_jfr_recording and
of `jfr print --json`.

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
from collections import Counter
from collections.abc import Callable, Iterable
from datetime import datetime, timezone

import numpy as np

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
_SIGN_BIT_64 = 1 << 63


# The metadata's declaration bytes -> (types by id, types by name, java.lang.String's id), of the last few read.
_METADATA: dict[bytes, tuple[dict, dict, int]] = {}
_METADATA_KEPT = 8


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
            count = self.varint()
            start = self.position
            text = self.data[start:start + count]
            if text.isascii():  # every char below 128 is one byte: the metadata's names, read without a loop
                self.position = start + count
                return text.decode("ascii")
            return "".join(chr(self.varint()) for _ in range(count))
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
        # Pools kept undecoded (_lazy types: stack traces): type id -> [(position of the first key, count, end of
        # the checkpoint when the pool is its last, else None)] in the order the checkpoint chain is walked
        # (newest first), and, once some reader asks for them, key -> (first byte, byte after) of each value.
        self.lazy_regions: dict[int, list[tuple[int, int, int | None]]] = {}
        self._pool_spans: dict[int, dict[int, tuple[int, int]]] = {}
        self._read_constant_pools(start + constant_pool_offset)

    # -- metadata ----------------------------------------------------------
    def _read_metadata(self, position: int) -> None:
        cursor = _Input(self.data, position)
        end = position + cursor.varint()
        if cursor.varint() != METADATA_TYPE_ID:
            raise JfrFormatError(f"no metadata event at byte {position}")
        cursor.varint()  # start
        cursor.varint()  # duration
        cursor.varint()  # metadata id
        # The declarations (everything after the metadata id) are the same bytes in every chunk a JVM of one
        # build and settings writes, and the harness reads each recording twice (runtime events, then
        # samples): they are read once per process. The _Type objects are never changed after this.
        declarations = self.data[cursor.position:end]
        known = _METADATA.get(declarations)
        if known is None:
            self._read_declarations(cursor)
            if len(_METADATA) >= _METADATA_KEPT:
                _METADATA.pop(next(iter(_METADATA)))
            _METADATA[declarations] = (self.types, self.by_name, self.string_type_id)
        else:
            self.types, self.by_name, self.string_type_id = known

    def _read_declarations(self, cursor: _Input) -> None:
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
        self._array_patterns: dict[tuple[int, int], re.Pattern] = {}
        self._skippers: dict[int, object] = {}
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

    def _skip_array(self, type_id: int, data: bytes, position: int, count: int) -> int:
        """The position after `count` consecutive values of an interned type: one regular-expression match."""
        pattern = self._array_patterns.get((type_id, count))
        if pattern is None:
            element = _element_pattern(self.types[type_id])
            pattern = self._array_patterns[(type_id, count)] = re.compile(b"(?:" + element + b"){%d}" % count)
        match = pattern.match(data, position)
        if match is None:
            raise JfrFormatError(f"an array of {self.types[type_id].name} cut short at byte {position}")
        return match.end()

    def _skipper(self, type_id: int):
        """skip(data, p) -> the position after one value of a lazily kept type, which it does not decode."""
        skip = self._skippers.get(type_id)
        if skip is None:
            namespace = {"_skip_array": self._skip_array}
            exec(compile(_skipper_source(self.types[type_id]), f"<jfr skipper of {self.types[type_id].name}>",
                         "exec"), namespace)
            skip = self._skippers[type_id] = namespace[f"skip_{type_id}"]
        return skip

    def pool_spans(self, type_id: int) -> dict[int, tuple[int, int]]:
        """key -> (first byte, byte after) of each value of a lazily kept pool, found on first call."""
        spans = self._pool_spans.get(type_id)
        if spans is None:
            spans = self._pool_spans[type_id] = {}
            data, skip = self.data, self._skipper(type_id)
            for offset, count, _end in self.lazy_regions.get(type_id, ()):
                for _ in range(count):
                    key, offset = _varint(data, offset)
                    end = skip(data, offset)
                    if key not in spans:  # walking the chain backwards, the newest value of a key is met first
                        spans[key] = (offset, end)
                    offset = end
        return spans

    def _decode_lazily(self, type_id: int, position: int):
        """One value of a lazily kept pool, decoded and linked (its references replaced by the objects)."""
        value, _ = self.decoders[type_id](self.data, position)
        # Its frames may be interned only now, after _link: walk every array, not only arrays of new values.
        self._walk(value, every_array=True)
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
            checkpoint_end = position + cursor.varint()
            if cursor.varint() != CONSTANT_POOL_TYPE_ID:
                raise JfrFormatError(f"no constant-pool event at byte {position}")
            cursor.varint()  # start
            cursor.varint()  # duration
            delta = _signed(cursor.varint(), 64)
            cursor.byte()  # flush
            pool_count = cursor.varint()
            for pool_index in range(pool_count):
                type_id = cursor.varint()
                count = cursor.varint()
                offset = cursor.position
                declared = self.types.get(type_id)
                if declared is not None and _lazy(declared, self.types):
                    # Stack traces: tens of thousands, each tens of frames, and a reader of GC events needs
                    # none of them, a reader of folded stacks none as dicts. Only where they lie is noted;
                    # _LazyPool decodes one when an event's field asks for it, stack_counts folds them.
                    last = pool_index == pool_count - 1
                    self.lazy_regions.setdefault(type_id, []).append((offset, count, checkpoint_end if last else None))
                    if type_id not in self.pools:
                        self.pools[type_id] = _LazyPool(self, type_id)
                    if last:
                        break  # the JDK writes stack traces in checkpoints of their own: nothing to step over
                    skip = self._skipper(type_id)
                    for _ in range(count):
                        _key, offset = _varint(data, offset)
                        offset = skip(data, offset)
                    cursor.position = offset
                    continue
                decode = self.decoders[type_id]
                pool = self.pools.setdefault(type_id, {})
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

    def _walk(self, root, every_array: bool = False) -> None:
        visited, target = self._visited, self._target
        interned = set() if every_array else self._interned_ids
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

    # -- folded stacks straight from the bytes ---------------------------------
    def stack_counts(self, event_type: str, window_unix_s: tuple[float, float] | None,
                     frame_name: Callable[[dict], str], truncated_frame: str) -> tuple[dict[str, int], int] | None:
        """({folded stack, root first: events}, deepest stack in frames) of one event type's stack traces.

        What jfr.jfr_stacks gives on this chunk's events, without a dict per event or per frame: each event
        of the type is read only as far as its startTime and stackTrace key; the keys are counted; each
        distinct stack is folded once from its bytes, whose frames are found by one regular expression and
        named through a cache keyed by each frame's bytes. window_unix_s keeps events whose startTime, in
        Unix seconds, lies inside [start, end]. frame_name(frame) names one frame given as `jfr print
        --json` shapes it. None when the type's layout is not the one this path reads (the caller then
        takes the general path).
        """
        declared = self.by_name.get(event_type)
        if declared is None:
            return {}, 0
        indexes = {field.name: index for index, field in enumerate(declared.fields)}
        stack_index, start_index = indexes.get("stackTrace"), indexes.get("startTime")
        if stack_index is None or (window_unix_s is not None and start_index is None):
            return {}, 0  # no stack traces, or no startTime to place an event inside the window
        stack_field = declared.fields[stack_index]
        stack_type = self.types.get(stack_field.type_id)
        if stack_field.kind != _POOL or stack_field.array or stack_type is None or not _lazy(stack_type, self.types):
            return None
        frames_field = stack_type.fields[-1]
        if frames_field.name != "frames" or not frames_field.array:
            return None
        if start_index is not None and declared.fields[start_index].time != ("instant", "TICKS"):
            return None
        wanted = [stack_index] if start_index is None else [start_index, stack_index]
        pick = self._picker(declared, wanted)
        if pick is None:
            return None

        # Each event read as far as its last field wanted: (startTime ticks, stack key) or (stack key,).
        data = self.data
        wanted_id = declared.type_id
        picked = []
        position = self.start + HEADER_BYTES
        end = self.start + self.size
        while position < end:
            size = data[position]  # most events' size and type fit in one byte each
            if size < 128:
                after = position + 1
            else:
                size, after = _varint(data, position)
            if size <= 0:
                raise JfrFormatError(f"an event of size {size} at byte {position}")
            type_id = data[after]
            if type_id >= 128:
                type_id, after = _varint(data, after)
            else:
                after += 1
            if type_id == wanted_id:
                picked.append(pick(data, after))
            position += size

        if start_index is None:
            counted = Counter(fields[0] for fields in picked)
        elif window_unix_s is None:
            counted = Counter(fields[1] for fields in picked)
        else:
            # The same arithmetic as _time and then jfr.py's parse of the printed instant: nanoseconds since the
            # epoch (the JDK's double divisor, truncated), divided by 1e9, compared with the window's floats.
            low, high = window_unix_s
            start_nanos, start_ticks, ticks_per_ns = self.start_nanos, self.start_ticks, self.ticks_per_ns
            counted = Counter()
            for ticks, key in picked:
                if ticks & _SIGN_BIT_64:
                    ticks -= 1 << 64
                    if ticks == _LONG_MIN:
                        continue  # no startTime: jfr.py's NaT, never inside a window
                seconds = (start_nanos + int((ticks - start_ticks) / ticks_per_ns)) / 1e9
                if low <= seconds <= high:
                    counted[key] += 1
        return self._fold(stack_type, counted, frame_name, truncated_frame)

    def _fold(self, stack_type: _Type, counted: Counter, frame_name: Callable[[dict], str],
              truncated_frame: str) -> tuple[dict[str, int], int]:
        """({folded stack: events}, deepest) from {stack-trace key: events}: each distinct stack folded once.

        One pass over the pool's bytes. Where each stack ends is found without decoding its frames: in the
        JDK's layout (key, truncated byte, frame count, then four integers a frame) every value is one
        compressed integer or byte, each ending at a byte below 128, so numpy lists those ends once and a
        stack of n frames ends 3 + 4n ends after it starts. A counted stack is then split into its frames'
        bytes by one findall. Any other layout, or a 9-byte integer whose last byte is 128 or more, is
        stepped over by one regular-expression match per stack instead.
        """
        data = self.data
        frame_type = self.types[stack_type.fields[-1].type_id]
        frame_type_id = frame_type.type_id
        leading = [(field.name, field.kind) for field in stack_type.fields[:-1]]
        jdk_layout = leading == [("truncated", _BOOLEAN)] and all(
            field.kind in (_VARINT, _POOL) and not field.array for field in frame_type.fields)
        frame_values = len(frame_type.fields)
        find_frames = re.compile(_element_pattern(frame_type)).findall
        # Where _value_ends vouched for the bytes (every run of bytes >= 128 is at most 8 long and ends at one
        # below 128), a value is simply such a run and its end: a ~20% cheaper pattern, possessive since a
        # run is never given back.
        find_plain_frames = re.compile(_PLAIN_VALUE_PATTERN * frame_values).findall
        names = _FrameNames(lambda encoded: frame_name(self._frame_of(frame_type_id, encoded)))
        name_of = names.__getitem__  # a frame's bytes (method, line, bytecode index, type) -> its name
        folded_counts: dict[str, int] = {}
        remaining = dict(counted)  # a key's newest value is met first and stands: each key is folded once
        deepest = 0
        for position, count, region_end in self.lazy_regions.get(stack_type.type_id, ()):
            ends = _value_ends(data, position, region_end) if jdk_layout and region_end is not None and count else None
            index = 0  # in ends: the current stack's key
            for _ in range(count):
                if not remaining:
                    break
                key, position = _varint(data, position)
                if ends is not None:
                    truncated = data[position] != 0
                    depth, frames_start = _varint(data, position + 1)
                    if int(ends[index + 2]) != frames_start:  # key, flag and count must be one value each
                        raise JfrFormatError(f"a stack trace at byte {position} is not laid out as the JDK's")
                    index += 3 + frame_values * depth
                    end = int(ends[index - 1])
                else:
                    truncated = False
                    for name, kind in leading:
                        if kind in (_BOOLEAN, _BYTE):
                            truncated = truncated or (name == "truncated" and data[position] != 0)
                            position += 1
                        else:
                            _, position = _varint(data, position)
                    depth, frames_start = _varint(data, position)
                    end = self._skip_array(frame_type_id, data, frames_start, depth)
                events = remaining.pop(key, None)
                if events is not None:
                    frames = (find_frames if ends is None else find_plain_frames)(data, frames_start, end)
                    if len(frames) != depth:
                        raise JfrFormatError(f"a stack trace of {depth} frames at byte {frames_start} does not "
                                             "read as that many frames")
                    if depth > deepest:
                        deepest = depth
                    # Recorded leaf first; folded root first.
                    folded = ";".join(map(name_of, reversed(frames)))
                    if truncated:
                        folded = f"{truncated_frame};{folded}" if depth else truncated_frame
                    folded_counts[folded] = folded_counts.get(folded, 0) + events
                position = end
        return folded_counts, deepest

    def _frame_of(self, type_id: int, encoded: bytes) -> dict:
        """One frame, from its bytes, as `jfr print --json` shapes it (method resolved through the pools)."""
        value, _ = self.decoders[type_id](encoded, 0)
        return {name: self._target(item) if type(item) is tuple else item for name, item in value.items()}

    def _picker(self, declared: _Type, wanted: list[int]):
        """pick(data, p) -> the raw integers of the wanted fields (by index) of one event, or None when a field
        before them is of a kind this does not step over (an array or an inline value)."""
        last = max(wanted)
        lines = ["def pick(data, p):"]
        for index, field in enumerate(declared.fields[:last + 1]):
            if field.array or field.kind == _STRUCT:
                return None
            if index in wanted:
                lines += _varint_source(f"v{index}", "    ")
            elif field.kind in (_VARINT, _POOL):
                lines += _skip_varint_source("    ")
            elif field.kind in (_BOOLEAN, _BYTE):
                lines.append("    p += 1")
            elif field.kind == _FLOAT:
                lines.append("    p += 4")
            elif field.kind == _DOUBLE:
                lines.append("    p += 8")
            else:  # a string
                lines.append("    _, p = _read_string(data, p, -1)")
        lines.append("    return (" + ", ".join(f"v{index}" for index in wanted) + ",)")
        namespace = {"_read_string": _read_string}
        exec(compile("\n".join(lines), f"<jfr picker of {declared.name}>", "exec"), namespace)
        return namespace["pick"]


class _LazyPool(dict):
    """A constant pool whose values are decoded when first asked for (by .get or [key]), then kept.

    Event decoders look their references up with .get, so an event that
    names a stack trace decodes that one; the thousands no event read asks
    for stay bytes.
    """

    def __init__(self, chunk: "_Chunk", type_id: int):
        super().__init__()
        self._chunk = chunk
        self._type_id = type_id

    @functools.cached_property
    def _spans(self) -> dict[int, tuple[int, int]]:
        return self._chunk.pool_spans(self._type_id)

    def __missing__(self, key: int):
        span = self._spans[key]  # KeyError when the pool has no such key, as a dict's
        value = self[key] = self._chunk._decode_lazily(self._type_id, span[0])
        return value

    def get(self, key, default=None):
        if key in self._spans:
            return self[key]
        return default

    def __contains__(self, key) -> bool:
        return key in self._spans

    def __len__(self) -> int:
        return len(self._spans)

    def __iter__(self):
        return iter(self._spans)

    def keys(self):
        return self._spans.keys()

    def items(self):
        return ((key, self[key]) for key in self._spans)

    def values(self):
        return (self[key] for key in self._spans)


class _FrameNames(dict):
    """A frame's bytes -> its folded name, named by `name(bytes)` the first time it is asked for."""

    def __init__(self, name):
        super().__init__()
        self._name = name

    def __missing__(self, encoded: bytes) -> str:
        value = self[encoded] = self._name(encoded)
        return value


class _Decoders(dict):
    """type id -> decode(data, p) -> (value, next p), compiled on first use."""

    def __init__(self, compile_decoder):
        super().__init__()
        self._compile_decoder = compile_decoder

    def __missing__(self, type_id: int):
        decoder = self[type_id] = self._compile_decoder(type_id)
        return decoder


def _value_ends(data: bytes, start: int, end: int) -> np.ndarray | None:
    """The position after each one-byte-or-compressed-integer value in data[start:end], or None when that cannot
    be told from the bytes alone (a 9-byte integer whose last byte is 128 or more)."""
    terminators = np.flatnonzero(np.frombuffer(data, dtype=np.uint8, count=end - start, offset=start) < 128)
    # A gap of more than 9 bytes between two ends is a 9-byte integer whose last byte is >= 128.
    if not terminators.size or int(np.diff(terminators, prepend=-1).max()) > 9:
        return None
    return terminators + (start + 1)


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
_PLAIN_VALUE_PATTERN = rb"[\x80-\xff]*+[\x00-\x7f]"  # one value where no 9-byte integer ends in a byte >= 128


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


def _lazy(declared: _Type, types: dict[int, _Type]) -> bool:
    """Whether a pool of this type is kept as bytes until asked for: a stack trace's shape, flat fields
    (integers, booleans) and arrays of interned values (frames), nothing that names another pool itself."""
    if declared.simple or not declared.fields:
        return False
    arrays = 0
    for field in declared.fields:
        if field.array:
            element = types.get(field.type_id)
            if field.kind != _STRUCT or element is None or not _internable(element):
                return False
            arrays += 1
        elif field.time is not None or field.kind not in (_VARINT, _BOOLEAN, _BYTE):
            return False
    return arrays > 0


def _skip_varint_source(indent: str) -> list[str]:
    """Lines that step p over one compressed integer without decoding it (at most 9 bytes, the ninth whole)."""
    return [f"{indent}q = p + 8",
            f"{indent}while p < q and data[p] >= 128: p += 1",
            f"{indent}p += 1"]


def _skipper_source(declared: _Type) -> str:
    """Python source of skip_<id>(data, p) -> the position after one value of a _lazy type."""
    lines = [f"def skip_{declared.type_id}(data, p):"]
    for field in declared.fields:
        if field.array:
            lines += _varint_source("n", "    ")
            lines.append(f"    p = _skip_array({field.type_id}, data, p, n)")
        elif field.kind in (_BOOLEAN, _BYTE):
            lines.append("    p += 1")
        else:
            lines += _skip_varint_source("    ")
    return "\n".join(lines + ["    return p"])


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


def read_jfr_stack_counts(path_or_bytes: PathLike | bytes, frame_name: Callable[[dict], str],
                          event_type: str = "jdk.ExecutionSample",
                          window_unix_s: tuple[float, float] | None = None,
                          truncated_frame: str = "[truncated]") -> tuple[dict[str, int], int] | None:
    """({folded stack, root first: number of events}, deepest stack in frames) of one event type, straight from
    the recording's bytes (plain or gzip): the fast path under jfr.read_jfr_stacks.

    No dict is built per event or per frame: events are read as far as
    their startTime (ticks) and stackTrace key, keys are counted, and each
    distinct stack is folded once (_Chunk.stack_counts). `window_unix_s`
    (start, end), Unix seconds, keeps the events whose startTime lies
    inside it, ends included. frame_name(frame) names a frame given in
    `jfr print --json`'s shape; a stack JFR cut at its depth limit gets
    `truncated_frame` as its root. None when a chunk's layout is not the
    one this path reads (jfr.read_jfr_stacks then reads the events).
    """
    data = _recording_bytes(path_or_bytes)
    counts: dict[str, int] = {}
    deepest = 0
    position = 0
    enabled = gc.isenabled()
    gc.disable()  # as in read_jfr_recording: nothing built here is garbage until the end
    try:
        while position < len(data):
            chunk = _Chunk(data, position)
            result = chunk.stack_counts(event_type, window_unix_s, frame_name, truncated_frame)
            if result is None:
                return None
            chunk_counts, chunk_deepest = result
            for folded, count in chunk_counts.items():
                counts[folded] = counts.get(folded, 0) + count
            deepest = max(deepest, chunk_deepest)
            position += chunk.size
    finally:
        if enabled:
            gc.enable()
    return counts, deepest


def _recording_bytes(path_or_bytes: PathLike | bytes) -> bytes:
    data = path_or_bytes if isinstance(path_or_bytes, (bytes, bytearray, memoryview)) else read_bytes(path_or_bytes)
    data = bytes(data)
    if not data.startswith(MAGIC):
        raise JfrFormatError("not a JFR recording: it does not start with FLR\\0")
    return data


def read_jfr_recording(path_or_bytes: PathLike | bytes, event_types: Iterable[str] | None = None) -> list[dict]:
    """The events of a .jfr recording (plain or gzip), in file order, shaped as `jfr print --json` gives them.

    `event_types` keeps only those types ("jdk.ExecutionSample", ...); the
    others are skipped by their size without being decoded. Stack traces are
    whole (up to the depth the recorder kept), unlike `jfr print`, which cuts
    them to 5 frames unless given --stack-depth.
    """
    data = _recording_bytes(path_or_bytes)
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
