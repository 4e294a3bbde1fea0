"""Inputs are not guessed: an empty folder, a stray file, a non-partition folder or text that is not
UTF-8 is an error naming the input and the file or folder, on pandas and polars (and Spark for local paths).

Hidden names (``.x``, ``_x``) are skipped as Spark skips them, so ubunye's own staging, old and lock siblings and
Spark's ``_SUCCESS`` and ``.crc`` files are never data.
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

import pandas as pd
import pytest

from tests.optional import needs_polars
from ubunye.config.model import IOConfig
from ubunye.engines import get_engine
from ubunye.engines.spark_engine import SparkEngine
from ubunye.exceptions import EngineError

LOCAL = ["pandas", "polars"]
FRAME = pd.DataFrame({"id": [1, 2, 3], "name": ["a", "b", "c"]})


def inp(fmt: str = "parquet", path: str = "data/i", **kw) -> IOConfig:
    return IOConfig("i", format=fmt, path=path, **kw)


def written(tmp_path: Path, fmt: str = "parquet") -> Path:
    """A real output of the pandas engine at data/i (one part file), as a later task reads it."""
    engine = get_engine("pandas")
    engine.write(FRAME, IOConfig("i", format=fmt, path="data/i"), tmp_path)
    return tmp_path / "data/i"


def refused(engine_name: str, io: IOConfig, base: Path) -> str:
    with pytest.raises(EngineError) as err:
        get_engine(engine_name).read(io, base)
    return str(err.value)


def ids(frame) -> list[int]:
    return sorted(int(v) for v in frame["id"].to_list())


def shape(frame) -> tuple[int, int]:
    return tuple(frame.shape)  # type: ignore[return-value]


EMPTY = (
    "input 'i': the folder {folder} holds no {fmt} data files (hidden files such as _SUCCESS and .crc do not "
    "count); set allow_empty: true to read it as an empty table"
)


# --- empty folders -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("engine_name", LOCAL)
def test_an_empty_folder_is_an_error_naming_the_input_and_the_folder(tmp_path, engine_name, fmt):
    (tmp_path / "data/i").mkdir(parents=True)
    assert refused(engine_name, inp(fmt), tmp_path) == EMPTY.format(folder=tmp_path / "data/i", fmt=fmt)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_folder_of_only_hidden_files_is_empty(tmp_path, engine_name):
    folder = tmp_path / "data/i"
    folder.mkdir(parents=True)
    for name in ("_SUCCESS", "._SUCCESS.crc", ".part-0.parquet.crc", "_metadata"):
        (folder / name).write_bytes(b"")
    (folder / "_temporary").mkdir()
    assert refused(engine_name, inp(), tmp_path) == EMPTY.format(folder=folder, fmt="parquet")


@pytest.mark.parametrize("engine_name", LOCAL)
def test_allow_empty_reads_an_empty_folder_as_a_table_without_rows_or_columns(tmp_path, engine_name):
    (tmp_path / "data/i").mkdir(parents=True)
    (tmp_path / "data/i/_SUCCESS").write_bytes(b"")
    frame = get_engine(engine_name).read(inp(allow_empty=True), tmp_path)
    assert shape(frame) == (0, 0)


@pytest.mark.parametrize("engine_name", LOCAL)
def test_allow_empty_does_not_excuse_a_missing_folder(tmp_path, engine_name):
    message = refused(engine_name, inp(allow_empty=True), tmp_path)
    assert message == f"input 'i': no such file or folder: {tmp_path}/data/i"


# --- files that are not data ----------------------------------------------------------------------------------


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_csv_file_in_a_parquet_folder_is_an_error_naming_it(tmp_path, engine_name):
    folder = written(tmp_path)
    (folder / "extra.csv").write_text("id,name\n4,d\n")
    assert refused(engine_name, inp(), tmp_path) == (
        f"input 'i': {folder}/extra.csv is not a parquet file (a parquet input reads files ending in .parquet): "
        f"move it out of {folder}, or hide it with a leading _ or ."
    )


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_readme_in_a_csv_folder_is_an_error_naming_it(tmp_path, engine_name):
    folder = written(tmp_path, "csv")
    (folder / "README").write_text("these are the orders\n")
    assert refused(engine_name, inp("csv"), tmp_path) == (
        f"input 'i': {folder}/README is not a csv file (a csv input reads files ending in .csv, .csv.gz, "
        f".csv.bz2, .csv.zst): move it out of {folder}, or hide it with a leading _ or ."
    )


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_json_file_in_a_csv_folder_is_not_read_as_csv_rows(tmp_path, engine_name):
    folder = written(tmp_path, "csv")
    (folder / "part-9.json").write_text('{"id": 4}\n')
    message = refused(engine_name, inp("csv"), tmp_path)
    assert message.startswith(f"input 'i': {folder}/part-9.json is not a csv file "), message


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_folder_that_is_not_a_partition_is_an_error_naming_it(tmp_path, engine_name):
    folder = written(tmp_path)
    (folder / "backup").mkdir()
    assert refused(engine_name, inp(), tmp_path) == (
        f"input 'i': {folder}/backup is a folder inside the parquet data folder {folder} but not a partition "
        "(name=value): move it out, or hide it with a leading _ or ."
    )


@pytest.mark.parametrize("engine_name", LOCAL)
def test_hidden_files_are_skipped_as_spark_skips_them(tmp_path, engine_name):
    folder = written(tmp_path)
    (folder / "_SUCCESS").write_bytes(b"")
    (folder / ".part-0.parquet.crc").write_bytes(b"\x00garbage")
    (folder / "_notes.txt").write_text("not data")
    (folder / ".DS_Store").write_bytes(b"\x00\x01")
    assert ids(get_engine(engine_name).read(inp(), tmp_path)) == [1, 2, 3]


@pytest.mark.parametrize("engine_name", LOCAL)
def test_staging_old_and_lock_siblings_and_temp_parts_are_never_read(tmp_path, engine_name):
    folder = written(tmp_path)
    part = next(folder.iterdir()).read_bytes()
    for kind in ("staging", "old", "trash"):
        (tmp_path / f"data/.i.ubunye-{kind}-1").mkdir()
        (tmp_path / f"data/.i.ubunye-{kind}-1/part-x.parquet").write_bytes(part)
    (folder / f".part-{'b' * 32}.parquet.ubunye.tmp").write_bytes(part)
    assert (tmp_path / "data/.i.ubunye.lock").exists()
    assert ids(get_engine(engine_name).read(inp(), tmp_path)) == [1, 2, 3]
    # Reading the parent folder: the siblings are hidden too; the output folder itself is not a partition.
    message = refused(engine_name, inp(path="data"), tmp_path)
    assert message.startswith(f"input 'i': {folder} is a folder inside the parquet data folder "), message


@pytest.mark.parametrize("engine_name", LOCAL)
def test_partition_folders_are_data(tmp_path, engine_name):
    engine = get_engine("pandas")
    for k in (1, 2):
        engine.write(FRAME.assign(id=FRAME["id"] * k), IOConfig("p", format="parquet", path=f"data/i/k={k}"), tmp_path)
    (tmp_path / "data/i/_k=3").mkdir()  # a partition named with _ is still data (Spark's rule): an empty one
    assert ids(get_engine(engine_name).read(inp(), tmp_path)) == [1, 2, 2, 3, 4, 6]


# --- text that is not UTF-8 --------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_latin1_csv_is_an_error_naming_the_file_offset_and_line(tmp_path, engine_name):
    folder = tmp_path / "data/i"
    folder.mkdir(parents=True)
    (folder / "part-0.csv").write_bytes("id,name\n1,a\n2,Zo\u00eb\n".encode("latin-1"))
    assert refused(engine_name, inp("csv"), tmp_path) == (
        f"input 'i': {folder}/part-0.csv is not UTF-8 text (byte 0xeb at offset 16, line 3); csv inputs are read "
        "as UTF-8: re-encode the file"
    )


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_json_file_with_a_bad_byte_is_an_error_naming_the_file(tmp_path, engine_name):
    folder = written(tmp_path, "json")
    (folder / "part-1.json").write_bytes(b'{"id": 4, "name": "\xc3("}\n')
    assert refused(engine_name, inp("json"), tmp_path) == (
        f"input 'i': {folder}/part-1.json is not UTF-8 text (byte 0xc3 at offset 19, line 1); json inputs are "
        "read as UTF-8: re-encode the file"
    )


def test_a_bad_byte_past_the_first_megabyte_is_found(tmp_path):
    folder = tmp_path / "data/i"
    folder.mkdir(parents=True)
    good = b"id,name\n" + b"1,abcdefghij\n" * 100_000  # 1.3 MB: the check reads in 1 MiB chunks
    (folder / "part-0.csv").write_bytes(good + "2,\u00e9".encode() + b"\n3,\xe9\n")
    offset, line = len(good) + 7, 100_000 + 3
    assert refused("pandas", inp("csv"), tmp_path) == (
        f"input 'i': {folder}/part-0.csv is not UTF-8 text (byte 0xe9 at offset {offset}, line {line}); csv "
        "inputs are read as UTF-8: re-encode the file"
    )


@needs_polars
def test_a_character_cut_off_at_the_end_of_the_file_is_found(tmp_path):
    folder = tmp_path / "data/i"
    folder.mkdir(parents=True)
    (folder / "part-0.csv").write_bytes(b"id,name\n1,\xe2\x82")  # the first two bytes of a three-byte euro sign
    assert refused("polars", inp("csv"), tmp_path) == (
        f"input 'i': {folder}/part-0.csv is not UTF-8 text (byte 0xe2 at offset 10, line 2); csv inputs are read "
        "as UTF-8: re-encode the file"
    )


@pytest.mark.parametrize("engine_name", LOCAL)
def test_gzipped_csv_is_read_and_checked_after_decompressing(tmp_path, engine_name):
    folder = tmp_path / "data/i"
    folder.mkdir(parents=True)
    (folder / "part-0.csv.gz").write_bytes(gzip.compress(b"id,name\n1,a\n2,b\n"))
    assert ids(get_engine(engine_name).read(inp("csv"), tmp_path)) == [1, 2]
    (folder / "part-1.csv.gz").write_bytes(gzip.compress(b"id,name\n3,\xff\n"))
    assert refused(engine_name, inp("csv"), tmp_path) == (
        f"input 'i': {folder}/part-1.csv.gz is not UTF-8 text (byte 0xff at offset 10, line 2); csv inputs are "
        "read as UTF-8: re-encode the file"
    )


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_single_file_input_is_checked_too(tmp_path, engine_name):
    (tmp_path / "one.csv").write_bytes(b"id\n1\n\x80\n")
    assert refused(engine_name, inp("csv", path="one.csv"), tmp_path) == (
        f"input 'i': {tmp_path}/one.csv is not UTF-8 text (byte 0x80 at offset 5, line 3); csv inputs are read "
        "as UTF-8: re-encode the file"
    )


# --- where the folder is ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine_name", LOCAL)
def test_a_file_url_input_gets_the_same_checks(tmp_path, engine_name):
    folder = written(tmp_path)
    url = f"file://{folder}"
    assert ids(get_engine(engine_name).read(inp(path=url), tmp_path)) == [1, 2, 3]
    (folder / "notes.md").write_text("#")
    assert refused(engine_name, inp(path=url), tmp_path).startswith(f"input 'i': {folder}/notes.md is not a parquet")


@pytest.mark.parametrize("engine_name", LOCAL)
def test_an_output_cut_short_in_its_swap_is_restored_before_reading(tmp_path, engine_name):
    folder = written(tmp_path)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    os.rename(folder, tmp_path / "data/.i.ubunye-old-00000000000000000001-1-ab")
    assert ids(get_engine(engine_name).read(inp(), tmp_path)) == [1, 2, 3]
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not list((tmp_path / "data").glob(".i.ubunye-old-*"))


# --- Spark, where the check is cheap (a local path) ----------------------------------------------------------


def test_spark_local_inputs_are_not_guessed_either(spark, tmp_path):
    engine = SparkEngine(spark=spark)
    folder = written(tmp_path, "csv")
    assert sorted(r["id"] for r in engine.read(inp("csv"), tmp_path).collect()) == [1, 2, 3]
    (folder / "part-9.json").write_text('{"id": 4}\n')
    with pytest.raises(EngineError) as err:
        engine.read(inp("csv"), tmp_path)
    assert str(err.value).startswith(f"input 'i': {folder}/part-9.json is not a csv file "), str(err.value)
    (folder / "part-9.json").unlink()
    (folder / "part-8.csv").write_bytes(b"id,name\n4,\xff\n")
    with pytest.raises(EngineError, match=r"part-8\.csv is not UTF-8 text \(byte 0xff at offset 10, line 2\)"):
        engine.read(inp("csv"), tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EngineError) as err:
        engine.read(inp(path="empty"), tmp_path)
    assert str(err.value) == EMPTY.format(folder=tmp_path / "empty", fmt="parquet")
    frame = engine.read(inp(path="empty", allow_empty=True), tmp_path)
    assert (frame.count(), frame.columns) == (0, [])
