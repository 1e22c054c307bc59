"""The zip end-record search follows the standard zipfile module, so canary reads an archive
the way an installer does."""

from __future__ import annotations

import io
import struct
import zipfile

import pytest
from servers import make_wheel

from canary.sources.zipformat import EOCD_SIZE, ZipFormatError, find_directory


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
