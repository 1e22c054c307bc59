"""The zip end-record search follows the standard zipfile module, so canary reads an archive
the way an installer does."""

from __future__ import annotations

import io
import struct
import zipfile
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st
from servers import make_wheel, make_zip64_wheel

from canary.sources.zipformat import (
    EOCD_SIZE,
    Directory,
    Member,
    ZipFormatError,
    _exact,
    _plain,
    find_directory,
    parse_directory,
)


def with_comment(archive: bytes, comment: bytes) -> bytes:
    """The archive with `comment` appended and the end record's comment length set to it."""
    at = archive.rindex(b"PK\x05\x06")
    record = archive[at : at + EOCD_SIZE - 2] + struct.pack("<H", len(comment))
    return archive[:at] + record + comment


def test_a_plain_archive_is_found_at_its_end():
    wheel = make_wheel("pkg", "1.0", {"pkg/a.py": b"x = 1\n"})
    directory = find_directory(wheel, 0, len(wheel))
    assert directory.count == len(zipfile.ZipFile(io.BytesIO(wheel)).infolist())


def test_a_comment_is_skipped_when_it_holds_no_signature():
    wheel = with_comment(make_wheel("pkg", "1.0", {"pkg/a.py": b"x = 1\n"}), b"built by hand")
    assert find_directory(wheel, 0, len(wheel)).count == 4  # a.py, METADATA, WHEEL, RECORD


def test_a_signature_inside_the_comment_wins_as_in_zipfile():
    """zipfile takes the last signature whatever its comment length says: here a fake, empty
    directory. The old search skipped it and read members an installer never sees."""
    fake = b"PK\x05\x06" + bytes(18)  # claims zero members and no comment
    wheel = with_comment(make_wheel("pkg", "1.0", {"pkg/a.py": b"x = 1\n"}), fake + b"tail")
    assert zipfile.ZipFile(io.BytesIO(wheel)).namelist() == []  # what an installer sees
    with pytest.raises(ZipFormatError, match="bounds disagree"):
        find_directory(wheel, 0, len(wheel))


def test_a_signature_beyond_the_comment_window_is_not_found():
    wheel = make_wheel("pkg", "1.0", {"pkg/a.py": b"x = 1\n"})
    at = wheel.rindex(b"PK\x05\x06")
    far = wheel[:at] + wheel[at : at + EOCD_SIZE] + b"\x00" * 70_000  # comment length says 0
    with pytest.raises(ZipFormatError, match="no end-of-central-directory"):
        find_directory(far, 0, len(far))
    with pytest.raises(zipfile.BadZipFile):
        zipfile.ZipFile(io.BytesIO(far))


def central_directory(archive: bytes) -> tuple[bytes, Directory]:
    directory = find_directory(archive, 0, len(archive))
    return archive[directory.offset : directory.offset + directory.size], directory


def outcome(read: Callable[[], list[Member]]) -> object:
    try:
        return read()
    except ZipFormatError as exc:
        return str(exc)


FILES = {f"pkg/m{i}.py": b"x = 1\n" * i for i in range(6)}
WHEELS = [make_wheel("pkg", "1.0", FILES), make_zip64_wheel("pkg", "1.0", FILES)]


@given(
    st.sampled_from(WHEELS),
    st.lists(st.tuples(st.integers(0, 10_000), st.integers(0, 255)), max_size=3),
)
def test_the_plain_reading_answers_as_the_exact_one_or_leaves_it(wheel, flips):
    """Any byte of a directory changed: where _plain reads it, _exact reads the same members."""
    data, directory = central_directory(wheel)
    changed = bytearray(data)
    for at, value in flips:
        changed[at % len(changed)] = value
    plain = _plain(bytes(changed), directory)
    exact = outcome(lambda: _exact(bytes(changed), directory))
    if plain is not None:
        assert [plain.member(i) for i in range(len(plain.names))] == exact
        assert plain.names == [member.name for member in exact]


@pytest.mark.parametrize("name", ["pkg/caf\u00e9.py", "pkg/a\x00b.py"])
def test_names_plain_cannot_split_are_read_exactly(name):
    """Not ASCII (the UTF-8 flag set), or with a NUL, which _plain joins the names by."""
    wheel = make_wheel("pkg", "1.0", {name.replace("\x00", "_"): b"x = 1\n"})
    data, directory = central_directory(wheel)
    data = data.replace(name.replace("\x00", "_").encode(), name.encode())
    assert _plain(data, directory) is None
    table = parse_directory(data, directory)
    assert name in table.names
    assert table.member(table.names.index(name)).name == name


def test_members_out_of_offset_order_are_read_exactly():
    """Directory entries in another order than their records: sorted, each bounded by the next."""
    wheel = make_wheel("pkg", "1.0", {"pkg/a.py": b"a = 1\n", "pkg/b.py": b"b = 2\n"})
    data, directory = central_directory(wheel)
    first = 46 + struct.unpack_from("<HHH", data, 28)[0] + sum(struct.unpack_from("<HH", data, 30))
    swapped = data[first:] + data[:first]  # the second record's entry first, and so on
    assert _plain(swapped, directory) is None
    table = parse_directory(swapped, directory)
    members = [table.member(i) for i in range(len(table.names))]
    assert members == _exact(data, directory)
    assert [m.offset for m in members] == sorted(m.offset for m in members)
