"""A Delta write's record tells the truth about the commit it made (engines/delta.py), and a Delta read refuses what
deltalake reads wrong, naming it:

- the version recorded is the one whose commit carries the write's mark, even when another writer commits while it
  is looked for (deltalake's ``history()`` numbered the commits down from the version its table was loaded at,
  listing the newer ones too: the version before was named);
- an overwrite that deltalake committed over another writer's commit without removing its files (a version
  holding both writers' rows) fails the run, naming the table and the version, instead of recording the frame's
  hash for that version;
- a Spark-written table partitioned by a decimal holding a negative value with a fraction (``"dec":"-1.50"`` in
  its log, which deltalake reads as '-1.-50' and fails on with pyarrow's bare error) is refused naming the table
  and the column, on the pandas engine's read and in ``hash_delta``.

Another writer is made to commit at a chosen point (inside the write's hook, or right after the table is loaded),
so each race is deterministic. Each test failed before the fix.
"""

from __future__ import annotations

import decimal
from collections.abc import Iterator
from pathlib import Path

import deltalake
import pyarrow as pa
import pytest
from deltalake import CommitProperties, DeltaTable, write_deltalake

from tests.engines.spark_delta import spark_style_table
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines.delta import COMMIT_MARK, committed_version, write_delta
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.exceptions import EngineError
from ubunye.hashing import hash_frame
from ubunye.hashing.delta_hash import hash_delta


@pytest.fixture
def commit_after_next_load(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Once a path is put in the list, the next ``deltalake.DeltaTable`` loaded (of any path) is followed at once by
    another writer's overwrite of that path: a commit landing between the load and what is read from it."""
    armed: list[str] = []
    load = DeltaTable.__init__

    def load_then_commit(self: DeltaTable, *args: object, **kwargs: object) -> None:
        load(self, *args, **kwargs)  # type: ignore[arg-type]
        if armed:
            write_deltalake(armed.pop(), pa.table({"v": [99]}), mode="overwrite")  # another run's commit

    monkeypatch.setattr(DeltaTable, "__init__", load_then_commit)
    yield armed


def test_the_version_recorded_is_the_commit_s_own_when_another_lands_while_it_is_looked_for(
    tmp_path: Path, commit_after_next_load: list[str]
) -> None:
    path = str(tmp_path / "t")
    for v in range(2):  # versions 0 and 1, another run's
        write_deltalake(path, pa.table({"v": [v]}), mode="overwrite")
    frame = pa.table({"v": [2, 2]})
    # armed in the hook: the next table loaded is the read-back of this write's version, after its commit
    version = write_delta(frame, IOConfig("o", format="delta"), path, lambda: commit_after_next_load.append(path))
    assert not commit_after_next_load  # the other commit did land, as version 3
    assert DeltaTable(path).version() == 3
    assert version == 2  # was 1: a version holding another run's rows, recorded with this frame's hash
    assert DeltaTable(path, version=version).to_pyarrow_table() == frame
    # found by its mark among later commits, as are the others; a mark no commit carries names none
    io = IOConfig("o", format="delta")
    marked = CommitProperties(custom_metadata={COMMIT_MARK: "m4"})
    write_deltalake(path, pa.table({"v": [4]}), mode="append", commit_properties=marked)
    write_deltalake(path, pa.table({"v": [5]}), mode="append")
    assert (committed_version(path, io, "m4"), committed_version(path, io, "no such mark")) == (4, None)


@pytest.mark.parametrize("existing", [False, True], ids=["new table", "existing table"])
def test_an_overwrite_committed_over_another_writer_s_rows_fails_naming_the_table_and_version(
    tmp_path: Path, existing: bool
) -> None:
    # deltalake retries a first write that finds the table created meanwhile as a commit removing nothing, and an
    # overwrite of an existing table removes only the files of the version it read: the version it commits holds
    # the other writer's rows too, where the record said "overwritten with the frame" (its hash, its row count).
    path = str(tmp_path / "t")
    io = IOConfig("o", format="delta")
    if existing:  # overwrites with no other writer pass the check
        assert write_delta(pa.table({"tag": ["first"]}), io, path, lambda: None) == 0
        assert write_delta(pa.table({"tag": ["before"]}), io, path, lambda: None) == 1

    def other_writer() -> None:  # commits while this write is being written (its hook runs just before its commit)
        write_deltalake(path, pa.table({"tag": ["other"]}), mode="append" if existing else "overwrite")

    frame = pa.table({"tag": ["mine", "mine"]})
    version = 3 if existing else 1
    with pytest.raises(EngineError) as err:
        write_delta(frame, io, path, other_writer)
    said = str(err.value)
    assert said.startswith(f"output 'o': another writer's rows are in the Delta table at {path} at version {version}")
    assert "1 data file(s) this run did not write" in said, said
    # what the error says is what is on disk
    assert sorted(DeltaTable(path, version=version).to_pyarrow_table().column("tag").to_pylist()) == [
        "mine",
        "mine",
        "other",
    ]


def _spark_style_decimal_table(root: Path, values: list[str]) -> pa.Table:
    """A Delta table as Spark writes one partitioned by a decimal(5,2) column ``dec``: one data file per value in
    the folder ``dec=<value>`` (holding ``id`` only), the value as its text in the log (``"dec":"-1.50"``); the
    rows it holds."""
    spark_style_table(root, "dec", "decimal(5,2)", [(v, f"dec={v}", f"dec={v}") for v in values])
    decimals = pa.array([decimal.Decimal(v) for v in values], pa.decimal128(5, 2))
    return pa.table({"id": pa.array(range(len(values)), pa.int32()), "dec": decimals})


def test_a_negative_fractional_decimal_partition_value_is_refused_naming_the_table_and_column(tmp_path: Path) -> None:
    # deltalake read -1.50 as '-1.-50': pyarrow's bare ArrowInvalid, naming neither the table nor the column
    root = tmp_path / "t"
    rows = _spark_style_decimal_table(root, ["1.50", "-1.50"])
    io = IOConfig("src", format="delta", path="t")
    with pytest.raises(EngineError) as err:
        PandasEngine().read(io, tmp_path)
    said = str(err.value)
    assert said.startswith(f"input 'src' (Delta at {root}): partition column 'dec' (decimal(5,2)) holds a negative "), (
        said
    )
    readers = "polars or Spark engine" if HAVE_POLARS else "Spark engine (the polars engine is not installed here)"
    assert "(-1.50)" in said and "'-1.-50'" in said and readers in said, said
    with pytest.raises(EngineError, match=r"Delta table at .*/t/: partition column 'dec' \(decimal\(5,2\)\) holds a"):
        hash_delta(str(root))
    # the reason, checked: if a deltalake release reads such a value, the refusal can go
    with pytest.raises(pa.ArrowInvalid, match=r"'-1\.-50' is not a valid decimal128"):
        deltalake.DeltaTable(str(root)).to_pyarrow_table()
    # the advice holds: polars reads the table (its values from the folder names, as Spark wrote them)
    if HAVE_POLARS:
        from ubunye.engines.polars_engine import PolarsEngine

        polars = PolarsEngine()
        assert polars.hash(polars.read(io, tmp_path)).data_hash == hash_frame(rows).data_hash
    # whole negative values (-1.00) and positive ones are read as they are
    other = tmp_path / "whole"
    whole = _spark_style_decimal_table(other, ["1.50", "-1.00", "-100.00"])
    read = PandasEngine().read(IOConfig("src", format="delta", path="whole"), tmp_path)
    assert PandasEngine().hash(read).data_hash == hash_frame(whole).data_hash
    assert hash_delta(str(other)).hash.data_hash == hash_frame(whole).data_hash
