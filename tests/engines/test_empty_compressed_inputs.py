"""A compressed csv or json file holding no rows (a header alone, nothing) is left out of a folder as the same file
uncompressed is, on every codec a text input may carry, in a local folder and at a URL. It was read before: polars
typed the column of a header alone as text where pyarrow took the other files' int64, so pandas and polars hashed
the same folder differently (and a codec one engine refuses failed a folder the other read). Deciding decompresses
a bounded prefix only, and a file that does not decompress is refused naming it."""

from __future__ import annotations

import os
import re
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pytest

from tests.lineage import s3server
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.inputs import listing
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it

_POLARS = pytest.param("polars", marks=pytest.mark.skipif(not HAVE_POLARS, reason="the polars engine"))
_ENGINES = ["pandas", _POLARS]
#: Every codec a text input may carry (inputs.COMPRESSION), by suffix.
_CODECS = {".gz": "gzip", ".bz2": "bz2", ".zst": "zstd"}
#: The codecs each engine's reader decompresses (the other is refused by name: inputs.refuse_compression).
_READS = {"pandas": (".gz", ".bz2"), "polars": (".gz", ".zst")}
_ROWS = {"csv": b"x\n1\n2\n", "json": b'{"x": 1}\n{"x": 2}\n'}


def _compressed(data: bytes, suffix: str) -> bytes:
    out = pa.BufferOutputStream()
    with pa.CompressedOutputStream(out, _CODECS[suffix]) as stream:
        stream.write(data)
    written: bytes = out.getvalue().to_pybytes()
    return written


def _folder(base: Path, fmt: str, empty: bytes, suffix: str) -> Path:
    """A folder of a file of rows between two files of ``empty`` text compressed as ``suffix`` says ("": not)."""
    folder = base / "t"
    folder.mkdir()
    blank = _compressed(empty, suffix) if suffix else empty
    (folder / f"part-0.{fmt}{suffix}").write_bytes(blank)  # the first file: its columns are the input's
    (folder / f"part-1.{fmt}").write_bytes(_ROWS[fmt])
    (folder / f"part-2.{fmt}{suffix}").write_bytes(blank)
    return folder


def _read(engine: str, fmt: str, path: str | Path, base: Path) -> object:
    return get_engine(engine).read(IOConfig("i", format=fmt, path=str(path)), base)


def _outcome(engine: str, fmt: str, path: Path, base: Path, suffix: str) -> str:
    """What reading ``path`` gives: its hash and schema, or the error, ``suffix`` taken out of the file names."""
    try:
        frame = _read(engine, fmt, path, base)
    except EngineError as exc:
        return "refused: " + str(exc).replace(f".{fmt}{suffix}", f".{fmt}")
    try:
        found = hash_frame(frame)
    except Exception as exc:  # a header alone read as a typeless column: rows-v1 refuses to hash it
        return f"columns {list(frame.columns)}, {len(frame)} rows, unhashable: {exc}"
    return f"{found.schema} {found.data_hash}"


_NO_ROWS = [("csv", b"x\n"), ("csv", b"x\r\n"), ("csv", b""), ("csv", b"\n\n"), ("json", b"")]


@pytest.mark.parametrize("suffix", list(_CODECS))
@pytest.mark.parametrize(("fmt", "empty"), _NO_ROWS)
def test_a_compressed_file_of_no_rows_is_left_out_of_a_folder_on_both_engines(tmp_path, suffix, fmt, empty):
    folder = _folder(tmp_path, fmt, empty, suffix)
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / f"part-1.{fmt}").write_bytes(_ROWS[fmt])
    expected = hash_frame(_read("pandas", fmt, alone, tmp_path))
    assert expected.schema == 'struct<"x":int64>'
    assert hash_frame(_read("pandas", fmt, folder, tmp_path)) == expected
    if HAVE_POLARS:  # polars typed a header alone's column as text: the folder hashed otherwise than on pandas
        assert hash_frame(_read("polars", fmt, alone, tmp_path)) == expected
        assert hash_frame(_read("polars", fmt, folder, tmp_path)) == expected


@pytest.mark.parametrize("suffix", list(_CODECS))
@pytest.mark.parametrize(("fmt", "empty"), [("csv", b"x\n"), ("json", b"")])
def test_a_compressed_file_of_no_rows_is_left_out_of_a_url_folder_on_both_engines(s3, tmp_path, suffix, fmt, empty):
    folder = _folder(tmp_path, fmt, empty, suffix)
    url = s3.upload(folder)
    (folder / f"part-0.{fmt}{suffix}").unlink()
    (folder / f"part-2.{fmt}{suffix}").unlink()
    expected = hash_frame(_read("pandas", fmt, folder, tmp_path))  # the folder without them
    assert hash_frame(_read("pandas", fmt, url, tmp_path)) == expected
    if HAVE_POLARS:
        assert hash_frame(_read("polars", fmt, url, tmp_path)) == expected


_READ_BY = [
    pytest.param(engine, suffix, marks=[] if engine == "pandas" else _POLARS.marks, id=f"{engine}{suffix}")
    for engine, suffixes in _READS.items()
    for suffix in suffixes
]


@pytest.mark.parametrize(("engine", "suffix"), _READ_BY)
@pytest.mark.parametrize(("fmt", "text"), [*_NO_ROWS, ("csv", b"  \n"), ("json", b"\n"), ("json", b"  \n\n")])
def test_a_compressed_file_reads_as_the_same_file_uncompressed(tmp_path, engine, suffix, fmt, text):
    # alone and in a folder: what the engine does with the text (leave it out, read it, refuse it) is the same
    plain, packed = tmp_path / "plain", tmp_path / "packed"
    plain.mkdir()
    packed.mkdir()
    (plain / f"one.{fmt}").write_bytes(text)
    (packed / f"one.{fmt}{suffix}").write_bytes(_compressed(text, suffix))
    single = _outcome(engine, fmt, plain / f"one.{fmt}", tmp_path, "").replace("/plain/", "/packed/")
    assert _outcome(engine, fmt, packed / f"one.{fmt}{suffix}", tmp_path, suffix) == single
    plain_folder, packed_folder = _folder(plain, fmt, text, ""), _folder(packed, fmt, text, suffix)
    folder = _outcome(engine, fmt, plain_folder, tmp_path, "").replace("/plain/", "/packed/")
    assert _outcome(engine, fmt, packed_folder, tmp_path, suffix) == folder


@pytest.mark.parametrize("suffix", list(_CODECS))
def test_a_small_file_of_much_compressed_text_is_not_decompressed_whole(tmp_path, suffix):
    # a header and then 64 MiB of newlines, a small file: a header alone once the newlines are stripped, but (as the
    # same text uncompressed, over 64 KiB) read as data; deciding so decompresses 64 KiB of it, not all
    packed = pa.BufferOutputStream()
    with pa.CompressedOutputStream(packed, _CODECS[suffix]) as stream:
        stream.write(b"x\n")
        for _ in range(4):
            stream.write(b"\n" * (1 << 24))
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / f"part-0.csv{suffix}").write_bytes(packed.getvalue().to_pybytes())
    tracemalloc.start()
    try:
        listed = listing(IOConfig("i", format="csv"), folder)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert listed == [folder / f"part-0.csv{suffix}"]
    assert peak < 8 << 20, peak


def _corrupt_files(folder: Path, suffix: str) -> dict[str, bytes]:
    """A file that is no compressed data at all, and a large one cut short (past what deciding decompresses)."""
    rows = b"x\n" + b"\n".join(os.urandom(32).hex().encode() for _ in range(8_000)) + b"\n"
    whole = _compressed(rows, suffix)
    assert len(whole) > 2 * 65_536
    return {f"part-0.csv{suffix}": b"not compressed at all\n", f"part-0.csv{suffix}-cut": whole[: len(whole) - 100]}


@pytest.mark.parametrize("engine", _ENGINES)
@pytest.mark.parametrize("suffix", list(_CODECS))
@pytest.mark.parametrize("damage", ["garbage", "cut"])
@pytest.mark.parametrize("at_url", [False, True], ids=["local", "url"])
def test_a_file_that_does_not_decompress_is_refused_naming_it(request, tmp_path, engine, suffix, damage, at_url):
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "part-1.csv").write_bytes(_ROWS["csv"])
    made = _corrupt_files(folder, suffix)
    name = f"part-0.csv{suffix}"
    (folder / name).write_bytes(made[name] if damage == "garbage" else made[f"{name}-cut"])
    path = request.getfixturevalue("s3").upload(folder) if at_url else str(folder)
    file = re.escape(f"{path}/{name}")
    said = rf"^input 'i': cannot decompress {file} \({_CODECS[suffix]}, as its name says\): "
    with pytest.raises(EngineError, match=said):
        _read(engine, "csv", path, tmp_path)
