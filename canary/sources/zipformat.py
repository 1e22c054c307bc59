"""The zip format, parsed from byte ranges rather than a file: EOCD, Zip64, central directory,
local headers, and verified decompression. Any inconsistency is a ZipFormatError, so a damaged
archive can never yield wrong bytes.
"""

from __future__ import annotations

import bz2
import functools
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from operator import add, itemgetter, sub
from typing import NamedTuple

from canary.errors import CanaryError, ExitCode

EOCD_SIZE = 22
ZIP64_LOCATOR_SIZE = 20
ZIP64_EOCD_SIZE = 56
LOCAL_HEADER_SIZE = 30
_CENTRAL_SIZE = 46
#: A central directory record's fields that canary reads: signature, flags, method, CRC-32,
#: compressed and uncompressed sizes, name, extra and comment lengths, local header offset.
_CENTRAL = struct.Struct("<I4xHH4xIIIHHH8xI")
_MAX_COMMENT = 0xFFFF
#: a tail this long always holds the EOCD, its comment and the Zip64 locator
EOCD_SEARCH = EOCD_SIZE + _MAX_COMMENT + ZIP64_LOCATOR_SIZE


class ZipFormatError(CanaryError):
    """The bytes are not a consistent zip archive (corruption, truncation, tampering)."""

    exit_code = ExitCode.FAILED


class Member(NamedTuple):
    """One member as the central directory states it; `end` bounds its local record.

    A tuple: a listing holds thousands of these, and builds them all whenever it is read."""

    name: str
    offset: int
    end: int
    csize: int
    usize: int
    method: int
    crc: int
    flags: int


@dataclass(frozen=True)
class Directory:
    """Where the central directory lies: [offset, offset + size), with `count` entries."""

    offset: int
    size: int
    count: int


def find_directory(tail: bytes, tail_start: int, total: int) -> Directory:
    """Locate the central directory from the archive's last bytes (Zip64 aware).

    `tail` holds bytes [tail_start, total). The Zip64 end record must lie inside the tail;
    a caller that passes at least EOCD_SEARCH + ZIP64_EOCD_SIZE bytes always satisfies that.
    """
    pos = _find_eocd(tail, tail_start, total)
    _sig, disk, cd_disk, _n_here, count, size, offset, _clen = struct.unpack(
        "<IHHHHIIH", tail[pos : pos + EOCD_SIZE]
    )
    if disk != 0 or cd_disk != 0:
        raise ZipFormatError("multi-disk archives are not supported")
    has_locator = pos >= ZIP64_LOCATOR_SIZE and tail[pos - ZIP64_LOCATOR_SIZE : pos - 16] == (
        b"PK\x06\x07"
    )
    if has_locator:  # as zipfile: the Zip64 records count only when the locator is there
        return _zip64_directory(tail, tail_start, pos)
    return _checked(Directory(offset, size, count), tail_start + pos)


def _find_eocd(tail: bytes, tail_start: int, total: int) -> int:
    """Index in `tail` of the EOCD record, found by the standard zipfile module's rule, so that
    canary reads the archive an installer reads: the last 22 bytes when they are a record with
    no comment, else the last signature in the final 64 KiB + 22 bytes, whatever its stated
    comment length (a signature inside a comment wins there too, and then fails the checks)."""
    last = len(tail) - EOCD_SIZE
    if last >= 0 and tail[last : last + 4] == b"PK\x05\x06" and tail[-2:] == b"\x00\x00":
        return last
    lowest = max(0, total - (1 << 16) - EOCD_SIZE - tail_start)
    pos = tail.rfind(b"PK\x05\x06", lowest)
    if pos < 0:
        raise ZipFormatError("no end-of-central-directory record")
    if len(tail) - pos < EOCD_SIZE:
        raise ZipFormatError("end-of-central-directory record is truncated")
    return pos


def _zip64_directory(tail: bytes, tail_start: int, eocd_pos: int) -> Directory:
    loc = eocd_pos - ZIP64_LOCATOR_SIZE
    if loc < 0 or tail[loc : loc + 4] != b"PK\x06\x07":
        raise ZipFormatError("Zip64 end-of-directory locator missing")
    _sig, _disk, record_at, _disks = struct.unpack("<IIQI", tail[loc : loc + ZIP64_LOCATOR_SIZE])
    rel = record_at - tail_start
    if rel < 0 or rel + ZIP64_EOCD_SIZE > loc:
        raise ZipFormatError("Zip64 end-of-directory record outside the archive tail")
    fields = struct.unpack("<IQHHIIQQQQ", tail[rel : rel + ZIP64_EOCD_SIZE])
    if fields[0] != 0x06064B50:
        raise ZipFormatError("bad Zip64 end-of-directory signature")
    count, size, offset = fields[7], fields[8], fields[9]
    return _checked(Directory(offset, size, count), record_at)


def _checked(directory: Directory, end_record_at: int) -> Directory:
    """The directory must end exactly where the end records begin."""
    if directory.offset + directory.size != end_record_at:
        raise ZipFormatError("central directory bounds disagree with the end record")
    return directory


class Table(NamedTuple):
    """The central directory's entries in offset order: every name, and each entry's Member
    built when asked for (a listing holds thousands; a run reads a few dozen of them)."""

    names: list[str]
    member: Callable[[int], Member]


def parse_directory(data: bytes, directory: Directory) -> Table:
    """The entries of the central directory `data`, sorted by offset, each with its `end`."""
    table = _plain(data, directory)
    if table is not None:
        return table
    members = _exact(data, directory)
    return Table([member.name for member in members], members.__getitem__)


def _plain(data: bytes, directory: Directory) -> Table | None:
    """The usual archive read with no work per entry beyond its bounds: ASCII names, no Zip64
    field, members in offset order. None for any other (a field that merely looks like a
    Zip64 marker too): _exact reads it then, and names its fault. Where this answers, _exact
    answers the same (tests/unit/test_zipformat.py)."""
    rows: list[tuple[int, ...]] = []
    encoded: list[bytes] = []
    unpack = _CENTRAL.unpack_from
    pos = 0
    size = len(data)
    for _ in range(directory.count):
        if pos + _CENTRAL_SIZE > size:
            return None
        row = unpack(data, pos)
        if row[0] != 0x02014B50 or 0xFFFFFFFF in row:
            return None
        name_at = pos + _CENTRAL_SIZE
        pos = name_at + row[6]
        encoded.append(data[name_at:pos])
        pos += row[7] + row[8]
        rows.append(row)
    joined = b"\x00".join(encoded)
    if pos != size or not rows or not joined.isascii():
        return None
    names = joined.decode("ascii").split("\x00")  # one decoding, not one per name
    offsets = list(map(itemgetter(9), rows))
    ends = [*offsets[1:], directory.offset]
    records = map(add, offsets, map(itemgetter(4), rows))  # offset + compressed size
    if len(names) != len(rows) or min(map(sub, ends, records)) < LOCAL_HEADER_SIZE:
        return None  # a NUL in a name; members out of order, or overlapping
    return Table(names, functools.partial(_plain_member, names, rows, ends))


def _plain_member(
    names: list[str], rows: list[tuple[int, ...]], ends: list[int], at: int
) -> Member:
    _sig, flags, method, crc, csize, usize, _n, _e, _c, offset = rows[at]
    return Member(names[at], offset, ends[at], csize, usize, method, crc, flags)


def _exact(data: bytes, directory: Directory) -> list[Member]:
    """Every entry decoded on its own and checked in the directory's order, the first fault
    raised: any archive _plain leaves."""
    raw: list[tuple[str, int, int, int, int, int, int]] = []
    pos = 0
    unpack = _CENTRAL.unpack_from
    size = len(data)
    try:
        for _ in range(directory.count):
            if pos + _CENTRAL_SIZE > size:
                raise ZipFormatError("bad central directory entry signature")
            (sig, flags, method, crc, csize, usize, name_len, extra_len, comment_len, offset) = (
                unpack(data, pos)
            )
            if sig != 0x02014B50:
                raise ZipFormatError("bad central directory entry signature")
            name_at = pos + _CENTRAL_SIZE
            extra_at = name_at + name_len
            pos = extra_at + extra_len + comment_len
            if pos > size:
                raise ZipFormatError("central directory entry overruns the directory")
            encoded = data[name_at:extra_at]
            # ASCII reads the same in both encodings, and UTF-8 is the decoder Python runs fastest
            name = encoded.decode("utf-8" if flags & 0x800 or encoded.isascii() else "cp437")
            if 0xFFFFFFFF in (usize, csize, offset):  # else a Zip64 field changes nothing
                usize, csize, offset = _zip64_extra(
                    data[extra_at : extra_at + extra_len], usize, csize, offset
                )
            raw.append((name, offset, csize, usize, method, crc, flags))
    except UnicodeDecodeError as exc:
        raise ZipFormatError("member name is not valid UTF-8") from exc
    if pos != size:
        raise ZipFormatError("central directory size disagrees with its entries")
    return _with_ends(raw, directory.offset)


def _zip64_extra(extra: bytes, usize: int, csize: int, offset: int) -> tuple[int, int, int]:
    """Replace the 0xFFFFFFFF fields by their Zip64 extra-field values, in the format's order."""
    pos = 0
    while pos + 4 <= len(extra):
        tag, length = struct.unpack("<HH", extra[pos : pos + 4])
        body = extra[pos + 4 : pos + 4 + length]
        pos += 4 + length
        if tag != 0x0001:
            continue
        values = iter(struct.unpack(f"<{len(body) // 8}Q", body[: len(body) // 8 * 8]))
        try:
            usize = next(values) if usize == 0xFFFFFFFF else usize
            csize = next(values) if csize == 0xFFFFFFFF else csize
            offset = next(values) if offset == 0xFFFFFFFF else offset
        except StopIteration as exc:
            raise ZipFormatError("Zip64 extra field too short") from exc
    if 0xFFFFFFFF in (usize, csize, offset):
        raise ZipFormatError("Zip64 sizes missing from the extra field")
    return usize, csize, offset


def _with_ends(raw: list[tuple[str, int, int, int, int, int, int]], cd_offset: int) -> list[Member]:
    """Sort by offset and bound each record by the next one (or the directory)."""
    raw.sort(key=itemgetter(1))  # archives list their members in order: one pass
    entries = []
    new = tuple.__new__  # a named tuple's own constructor costs more than the rest per entry
    for i, (name, offset, csize, usize, method, crc, flags) in enumerate(raw):
        end = raw[i + 1][1] if i + 1 < len(raw) else cd_offset
        if end - offset < LOCAL_HEADER_SIZE + csize:
            raise ZipFormatError(f"member {name!r} overlaps the next record")
        entries.append(new(Member, (name, offset, end, csize, usize, method, crc, flags)))
    return entries


def member_data(entry: Member, record: bytes, max_size: int) -> bytes:
    """Decompress one member from its local record bytes [entry.offset, entry.end), verified.

    Checks the local header agrees with the directory, refuses members declaring more than
    `max_size` bytes, decompresses at most that much, and verifies size and CRC32.
    """
    if record[:4] != b"PK\x03\x04" or len(record) < LOCAL_HEADER_SIZE:
        raise ZipFormatError(f"bad local header for {entry.name!r}")
    name_len, extra_len = struct.unpack("<HH", record[26:30])
    start = LOCAL_HEADER_SIZE + name_len + extra_len
    if record[LOCAL_HEADER_SIZE : LOCAL_HEADER_SIZE + name_len] != entry.name.encode(
        "utf-8" if entry.flags & 0x800 else "cp437"
    ):
        raise ZipFormatError(f"local header name differs from the directory for {entry.name!r}")
    if entry.usize > max_size:
        raise ZipFormatError(
            f"member {entry.name!r} declares {entry.usize} bytes, over the {max_size} byte cap"
        )
    compressed = record[start : start + entry.csize]
    if len(compressed) != entry.csize:
        raise ZipFormatError(f"member {entry.name!r} is truncated")
    data = _decompress(entry, compressed)
    if len(data) != entry.usize:
        raise ZipFormatError(f"member {entry.name!r} size differs from the directory")
    if zlib.crc32(data) != entry.crc:
        raise ZipFormatError(f"CRC32 mismatch in member {entry.name!r}")
    return data


def holds(entry: Member, data: bytes) -> bool:
    """Whether `data` has the size and CRC-32 the directory states (a cached member's check)."""
    return len(data) == entry.usize and zlib.crc32(data) == entry.crc


def _decompress(entry: Member, compressed: bytes) -> bytes:
    """At most usize + 1 bytes of output, so a lying size cannot inflate without bound."""
    limit = entry.usize + 1
    if entry.method == 0:
        return compressed[:limit]
    try:
        if entry.method == 8:
            inflater = zlib.decompressobj(-15)
            data = inflater.decompress(compressed, limit)
            ended = inflater.eof
        elif entry.method == 12:
            decompressor = bz2.BZ2Decompressor()
            data = decompressor.decompress(compressed, limit)
            ended = decompressor.eof
        else:
            raise ZipFormatError(f"member {entry.name!r} uses compression method {entry.method}")
    except (zlib.error, OSError, EOFError) as exc:
        raise ZipFormatError(f"member {entry.name!r} does not decompress: {exc}") from exc
    if not ended:
        raise ZipFormatError(f"member {entry.name!r} does not decompress to its stated size")
    return data
