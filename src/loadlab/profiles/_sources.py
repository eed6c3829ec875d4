"""Reading profile files: plain, gzip- or xz-compressed, detected by content.

Every module has `parse_*` functions that take the file's content (text or
bytes) and `read_*` functions that take a path; the path helpers live here so
that each format reads compressed files the same way (pprof is always gzip on
disk, and we store large text fixtures gzip-compressed). xz is there for the
`jfr print --json` captures of the committed runs before 2026-11-25: JSON
that repeats each stack's frames in full, which xz keeps ten times smaller
than gzip does (the data budget).
"""

from __future__ import annotations

import gzip
import lzma
import os
from pathlib import Path

GZIP_MAGIC = b"\x1f\x8b"
XZ_MAGIC = b"\xfd7zXZ\x00"

PathLike = str | os.PathLike


def read_bytes(path: PathLike) -> bytes:
    """The file's bytes, decompressed if the file is gzip or xz (by its magic number)."""
    data = Path(path).read_bytes()
    if data[:6] == XZ_MAGIC:
        return lzma.decompress(data)
    return maybe_gunzip(data)


def maybe_gunzip(data: bytes) -> bytes:
    """`data` decompressed if it starts with the gzip magic, else unchanged."""
    if data[:2] == GZIP_MAGIC:
        return gzip.decompress(data)
    return data


def read_text(path: PathLike) -> str:
    """The file's text (UTF-8, undecodable bytes replaced), decompressed if needed.

    Replacement rather than an error because profiles carry symbol names from
    arbitrary binaries and one bad byte must not lose a whole capture.
    """
    return read_bytes(path).decode("utf-8", errors="replace")
