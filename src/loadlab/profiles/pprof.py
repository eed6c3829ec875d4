"""pprof profiles (gzip-compressed profile.proto) into folded stacks.

Decoding: the `protobuf` package's runtime with a descriptor built in code
from the field numbers of google/pprof's proto/profile.proto (below). Why
not a hand-written wire decoder: a CPU profile is mostly packed varints
(location ids), which pure Python decodes at a few MB/s while protobuf's C
(upb) parser does hundreds of MB/s; and the descriptor is twenty lines, with
no protoc, no generated file to keep in step, and unknown fields (newer
profile.proto additions) skipped by the runtime as the spec requires.

Frames: a sample's location_id[0] is the leaf; a location with several
lines holds inlined calls, line[0] the innermost and the last line the
caller they were inlined into. Folded stacks are root first, so both lists
are reversed; every line becomes one frame, as `go tool pprof -traces`
shows them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache

import pandas as pd
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from ._sources import PathLike, maybe_gunzip, read_bytes
from .folded import EMPTY_STACK_FRAME, clean_frame
from .schema import stacks_frame, thread_counts_frame

_PACKAGE = "loadlab.pprof"

# (message, [(field name, number, type, repeated, message type)]) straight
# from profile.proto; proto3, so repeated scalars are packed on the wire
# (the parser accepts unpacked too).
_T = descriptor_pb2.FieldDescriptorProto
_MESSAGES = {
    "Profile": [
        ("sample_type", 1, _T.TYPE_MESSAGE, True, "ValueType"),
        ("sample", 2, _T.TYPE_MESSAGE, True, "Sample"),
        ("mapping", 3, _T.TYPE_MESSAGE, True, "Mapping"),
        ("location", 4, _T.TYPE_MESSAGE, True, "Location"),
        ("function", 5, _T.TYPE_MESSAGE, True, "Function"),
        ("string_table", 6, _T.TYPE_STRING, True, None),
        ("drop_frames", 7, _T.TYPE_INT64, False, None),
        ("keep_frames", 8, _T.TYPE_INT64, False, None),
        ("time_nanos", 9, _T.TYPE_INT64, False, None),
        ("duration_nanos", 10, _T.TYPE_INT64, False, None),
        ("period_type", 11, _T.TYPE_MESSAGE, False, "ValueType"),
        ("period", 12, _T.TYPE_INT64, False, None),
        ("comment", 13, _T.TYPE_INT64, True, None),
        ("default_sample_type", 14, _T.TYPE_INT64, False, None),
    ],
    "ValueType": [
        ("type", 1, _T.TYPE_INT64, False, None),
        ("unit", 2, _T.TYPE_INT64, False, None),
    ],
    "Sample": [
        ("location_id", 1, _T.TYPE_UINT64, True, None),
        ("value", 2, _T.TYPE_INT64, True, None),
        ("label", 3, _T.TYPE_MESSAGE, True, "Label"),
    ],
    "Label": [
        ("key", 1, _T.TYPE_INT64, False, None),
        ("str", 2, _T.TYPE_INT64, False, None),
        ("num", 3, _T.TYPE_INT64, False, None),
        ("num_unit", 4, _T.TYPE_INT64, False, None),
    ],
    "Mapping": [
        ("id", 1, _T.TYPE_UINT64, False, None),
        ("memory_start", 2, _T.TYPE_UINT64, False, None),
        ("memory_limit", 3, _T.TYPE_UINT64, False, None),
        ("file_offset", 4, _T.TYPE_UINT64, False, None),
        ("filename", 5, _T.TYPE_INT64, False, None),
        ("build_id", 6, _T.TYPE_INT64, False, None),
        ("has_functions", 7, _T.TYPE_BOOL, False, None),
        ("has_filenames", 8, _T.TYPE_BOOL, False, None),
        ("has_line_numbers", 9, _T.TYPE_BOOL, False, None),
        ("has_inline_frames", 10, _T.TYPE_BOOL, False, None),
    ],
    "Location": [
        ("id", 1, _T.TYPE_UINT64, False, None),
        ("mapping_id", 2, _T.TYPE_UINT64, False, None),
        ("address", 3, _T.TYPE_UINT64, False, None),
        ("line", 4, _T.TYPE_MESSAGE, True, "Line"),
        ("is_folded", 5, _T.TYPE_BOOL, False, None),
    ],
    "Line": [
        ("function_id", 1, _T.TYPE_UINT64, False, None),
        ("line", 2, _T.TYPE_INT64, False, None),
        ("column", 3, _T.TYPE_INT64, False, None),
    ],
    "Function": [
        ("id", 1, _T.TYPE_UINT64, False, None),
        ("name", 2, _T.TYPE_INT64, False, None),
        ("system_name", 3, _T.TYPE_INT64, False, None),
        ("filename", 4, _T.TYPE_INT64, False, None),
        ("start_line", 5, _T.TYPE_INT64, False, None),
    ],
}


@cache
def _profile_class():
    """The Profile message class, built once from _MESSAGES in a private pool."""
    file_proto = descriptor_pb2.FileDescriptorProto(
        name="loadlab/profiles/profile.proto", package=_PACKAGE, syntax="proto3"
    )
    for message_name, fields in _MESSAGES.items():
        message = file_proto.message_type.add(name=message_name)
        for name, number, field_type, repeated, type_name in fields:
            field = message.field.add(
                name=name,
                number=number,
                type=field_type,
                label=_T.LABEL_REPEATED if repeated else _T.LABEL_OPTIONAL,
            )
            if type_name:
                field.type_name = f".{_PACKAGE}.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(file_proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.Profile"))


def parse_pprof(data: bytes):
    """The Profile message from profile.proto bytes (gzip or not).

    Fields keep profile.proto's names (`profile.sample[0].location_id`, ...);
    strings are indices into `profile.string_table`.
    """
    profile = _profile_class()()
    profile.ParseFromString(maybe_gunzip(data))
    return profile


def read_pprof(path: PathLike):
    """parse_pprof on a file (as written by runtime/pprof or /debug/pprof/*)."""
    return parse_pprof(read_bytes(path))


@dataclass(frozen=True)
class SampleType:
    """One entry of profile.sample_type, e.g. ("samples", "count") or ("cpu", "nanoseconds")."""

    type: str
    unit: str


def sample_types(profile) -> list[SampleType]:
    """The profile's value types, in the order of every sample's `value` list."""
    strings = profile.string_table
    return [SampleType(strings[value.type], strings[value.unit]) for value in profile.sample_type]


def _value_index(profile, sample_type: str | None) -> int:
    types = sample_types(profile)
    if not types:
        raise ValueError("the profile has no sample types")
    names = [value.type for value in types]
    if sample_type is not None:
        if sample_type not in names:
            raise ValueError(f"sample_type={sample_type!r} is not in this profile; it has {names}")
        return names.index(sample_type)
    # pprof's own default: default_sample_type when set, else the last type.
    # We prefer a "count" type when present (Go CPU: samples/count), because
    # folded stacks traditionally hold sample counts.
    for index, value in enumerate(types):
        if value.unit == "count":
            return index
    if profile.default_sample_type:
        default = profile.string_table[profile.default_sample_type]
        if default in names:
            return names.index(default)
    return len(types) - 1


def _location_frames(profile) -> dict[int, str]:
    """location id -> its frames root first joined by ";" (inlined calls expanded)."""
    strings = profile.string_table
    function_names = {function.id: clean_frame(strings[function.name]) for function in profile.function}
    frames: dict[int, str] = {}
    for location in profile.location:
        if location.line:
            names = [function_names.get(line.function_id, "[unknown]") for line in reversed(location.line)]
        else:
            # An unsymbolized location: show the address, as pprof does.
            names = [f"0x{location.address:x}"]
        frames[location.id] = ";".join(names)
    return frames


def pprof_stacks(profile, sample_type: str | None = None) -> pd.DataFrame:
    """Folded stacks (schema.py) from a parsed profile.

    `count` is the chosen sample type's value summed per stack: by default
    the first type whose unit is "count" (Go CPU profiles: samples; goroutine
    profiles: goroutines), else profile.default_sample_type, else the last.
    Pass e.g. sample_type="cpu" for nanoseconds or "inuse_space" for bytes.
    Labels are ignored (samples differing only by label are summed). A
    sample with no locations gets the single frame "[no stack]", so the
    total equals pprof's.
    """
    index = _value_index(profile, sample_type)
    # First sum by the tuple of location ids (cheap, done in C by tuple()),
    # then build each distinct stack's text once.
    by_locations: dict[tuple[int, ...], int] = {}
    get = by_locations.get
    for sample in profile.sample:
        key = tuple(sample.location_id)
        by_locations[key] = get(key, 0) + sample.value[index]
    frames = _location_frames(profile)
    counts: dict[str, int] = {}
    for key, value in by_locations.items():
        stack = ";".join([frames[location_id] for location_id in reversed(key)]) or EMPTY_STACK_FRAME
        counts[stack] = counts.get(stack, 0) + value
    return stacks_frame(counts)


def read_pprof_stacks(path: PathLike, sample_type: str | None = None) -> pd.DataFrame:
    """pprof_stacks of the profile file at `path`."""
    return pprof_stacks(read_pprof(path), sample_type)


def pprof_totals(profile) -> dict[str, int]:
    """Sum of every sample type over all samples, keyed by type name."""
    totals = [0] * len(profile.sample_type)
    for sample in profile.sample:
        for index, value in enumerate(sample.value):
            totals[index] += value
    return {value.type: total for value, total in zip(sample_types(profile), totals)}


def pprof_start_s(profile) -> float:
    """When the profile started, seconds since the Unix epoch (profile.time_nanos)."""
    return profile.time_nanos / 1e9


def pprof_duration_s(profile) -> float:
    """The profile's duration in seconds (0 for instant profiles such as goroutine)."""
    return profile.duration_nanos / 1e9


def goroutine_count(profile) -> int:
    """Goroutines in a Go goroutine profile (/debug/pprof/goroutine, debug=0)."""
    types = [value.type for value in sample_types(profile)]
    if types != ["goroutine"]:
        raise ValueError(f"not a goroutine profile: its sample types are {types}")
    return pprof_totals(profile)["goroutine"]


def goroutine_thread_counts(
    profiles: Iterable, runtime: str = "go", trial: int | None = None, origin_unix_s: float | None = None
) -> pd.DataFrame:
    """thread_counts (schema.py) with one "goroutines" row per goroutine profile.

    t_s is each profile's time_nanos minus `origin_unix_s` (Unix seconds;
    default: the earliest profile's time), so a series of profiles taken
    during a trial lines up with the trial's clock when given its start.
    """
    profiles = list(profiles)
    starts = [pprof_start_s(profile) for profile in profiles]
    origin = min(starts) if origin_unix_s is None and starts else origin_unix_s
    return thread_counts_frame(
        [
            {
                "runtime": runtime,
                "trial": trial,
                "t_s": start - origin,
                "metric": "goroutines",
                "count": goroutine_count(profile),
                "source": "pprof_goroutine",
            }
            for profile, start in zip(profiles, starts)
        ]
    )
