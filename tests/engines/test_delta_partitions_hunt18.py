"""Delta partition columns the pandas and polars engines (deltalake) would write otherwise than the frame, each
refused naming the output and the column before anything is written (engines/delta.py ``refuse_unfaithful``):

- a column name holding '=' (deltalake makes folders ``k=v=x``, polars reads null) or '/' (polars fails);
- the value ``__HIVE_DEFAULT_PARTITION__`` (kept as text in the log, read as null by polars);
- a binary column (b"ab" is written as the text "\\u0061\\u0062": other bytes read back, or none);
- a struct, list, map or null-typed column on a new table (a struct was committed as "{x: 1}" before deltalake
  failed, leaving a table no engine reads; the others failed naming no column);
- partition_by naming every column of the frame (deltalake failed naming no column).

And a failed first write (deltalake's failure, or the commit hook's) leaves no folder behind, which later reads
took for a table ("No files in log segment"); a folder that was there before is kept. Each test failed before the
fix. Every write is real: ``run_task`` (or the engine) and deltalake on local folders."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

deltalake = pytest.importorskip("deltalake", reason="deltalake is not installed in this venv")

from deltalake import DeltaTable  # noqa: E402

from tests.lineage.usecase import last, write_task  # noqa: E402
from tests.optional import LOCAL_ENGINES, NO_POLARS  # noqa: E402
from ubunye.config import IOConfig  # noqa: E402
from ubunye.engines import get_engine  # noqa: E402
from ubunye.exceptions import UbunyeError  # noqa: E402
from ubunye.runner import run_task  # noqa: E402

_HIVE = "__HIVE_DEFAULT_PARTITION__"

#: id -> (the frame's columns as Python source, partition_by, the refusal's text as a regex)
_REFUSED = {
    "eq-in-name": ("{'k=v': ['x', 'y'], 'v': [1, 2]}", ["k=v"], r"partition column 'k=v' has '=' in its name"),
    "slash-in-name": ("{'a/b': ['x', 'y'], 'v': [1, 2]}", ["a/b"], r"partition column 'a/b' has '/' in its name"),
    "hive-null-text": (
        f"{{'p': [{_HIVE!r}, 'x'], 'v': [1, 2]}}",
        ["p"],
        rf"partition column 'p' holds the text '{_HIVE}', the folder name of a null partition",
    ),
    "binary": ("{'p': [b'ab', b'c'], 'v': [1, 2]}", ["p"], r"partition column 'p' is binary, and a Delta partition"),
    "struct": ("{'s': [{'x': 1}], 'v': [1]}", ["s"], r"partition column 's' is struct<\"x\":int64>, and a Delta"),
    "list": ("{'s': [[1, 2]], 'v': [1]}", ["s"], r"partition column 's' is list<int64>, and a Delta partition value"),
    "null": ("{'p': [None, None], 'v': [1, 2]}", ["p"], r"partition column 'p' has no type \(null"),
    "only-column": ("{'p': ['a', 'b']}", ["p"], r"partition_by names every column of the frame \(p\)"),
}


def _code(engine: str, columns: str) -> str:
    """A task returning the frame of ``columns`` (Python source of a dict) as output 'out', in ``engine``'s type."""
    make = "pd.DataFrame" if engine == "pandas" else "pl.DataFrame"
    head = "import pandas as pd\n" if engine == "pandas" else "import polars as pl\n"
    head += "import pyarrow as pa\nfrom ubunye import Task\n\n\nclass T(Task):\n    def transform(self, sources):\n"
    return head + f"        return {{'out': {make}({columns})}}\n"


def _task(usecase: Path, name: str, engine: str, columns: str, partition_by: list[str], mode: str) -> Path:
    out = {"format": "delta", "path": "data/out", "mode": mode, "partition_by": partition_by}
    config = {"ENGINE": {"backend": engine}, "CONFIG": {"outputs": {"out": out}, "monitors": ["lineage"]}}
    return write_task(usecase, name, config, _code(engine, columns))


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every file and folder under ``folder`` with its bytes (None for folders): what must not change."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None) for p in folder.rglob("*")}


def _refused(task_dir: Path, usecase: Path, name: str, match: str) -> None:
    """The run fails with ``match`` in its message, and its record says the output was not written."""
    with pytest.raises(UbunyeError, match=rf"output 'out': {match}.*nothing was written"):
        run_task(task_dir)
    record = last(usecase, name)
    assert record.status == "failed" and record.outputs[0].written is False


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("case", list(_REFUSED))
def test_an_unfaithful_partition_column_of_a_new_table_is_refused_and_nothing_is_on_disk(
    tmp_path: Path, engine: str, case: str
) -> None:
    columns, partition_by, match = _REFUSED[case]
    usecase = tmp_path / "uc"
    _refused(_task(usecase, "t", engine, columns, partition_by, "overwrite"), usecase, "t", match)
    assert not (usecase / "data" / "out").exists()  # not even the table's folder


def test_a_map_partition_column_of_a_new_table_is_refused(tmp_path: Path) -> None:
    # pandas only: polars has no map type (deltalake failed naming no column, and left the folder)
    columns = "{'s': pd.Series([[('a', 1)]], dtype=pd.ArrowDtype(pa.map_(pa.string(), pa.int64()))), 'v': [1]}"
    usecase = tmp_path / "uc"
    task = _task(usecase, "t", "pandas", columns, ["s"], "overwrite")
    _refused(task, usecase, "t", r"partition column 's' is map<string,int64>, and a Delta partition value")
    assert not (usecase / "data" / "out").exists()


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
@pytest.mark.parametrize("mode", ["overwrite", "append"])
@pytest.mark.parametrize("case", ["hive-null-text", "binary", "eq-in-name", "struct"])
def test_an_unfaithful_partition_column_leaves_the_previous_table_as_it_was(
    tmp_path: Path, engine: str, mode: str, case: str
) -> None:
    usecase = tmp_path / "uc"
    good = _task(usecase, "good", engine, "{'p': ['x', 'y'], 'v': [1, 2]}", ["p"], "overwrite")
    assert run_task(good).status == "success"
    table = usecase / "data" / "out"
    before, version = _tree(table), DeltaTable(str(table)).version()
    written = last(usecase, "good").outputs[0]
    columns, partition_by, match = _REFUSED[case]
    _refused(_task(usecase, "bad", engine, columns, partition_by, mode), usecase, "bad", match)
    assert _tree(table) == before
    assert DeltaTable(str(table)).version() == version
    back = get_engine(engine).read(IOConfig("i", format="delta", path=str(table)), usecase)
    assert get_engine(engine).hash(back).data_hash == written.data_hash


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_null_typed_partition_column_into_an_existing_table_is_still_written(tmp_path: Path, engine: str) -> None:
    # Only a new table has no type to take for it: into an existing one deltalake writes it as the null partition.
    usecase = tmp_path / "uc"
    assert run_task(_task(usecase, "good", engine, "{'p': ['x'], 'v': [1]}", ["p"], "overwrite")).status == "success"
    assert run_task(_task(usecase, "nulls", engine, "{'p': [None], 'v': [2]}", ["p"], "append")).status == "success"
    rows = DeltaTable(str(usecase / "data" / "out")).to_pyarrow_table().sort_by("v").to_pydict()
    assert rows == {"p": ["x", None], "v": [1, 2]}


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_first_write_deltalake_fails_leaves_no_folder(tmp_path: Path, engine: str) -> None:
    # deltalake fails on a tab in a partition folder's name ("Error parsing Path") after creating the folder,
    # which later reads took for an empty table.
    usecase = tmp_path / "uc"
    task = _task(usecase, "t", engine, "{'a\\tb': ['x'], 'v': [1]}", ["a\tb"], "overwrite")
    with pytest.raises(UbunyeError, match=r"output 'out'"):
        run_task(task)
    assert last(usecase, "t").outputs[0].written is False
    assert not (usecase / "data" / "out").exists()
    assert (usecase / "data").is_dir()  # the parent, created for the output's lock, is left


def _refuse() -> None:
    raise RuntimeError("refused before the commit")


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_first_write_whose_commit_hook_fails_leaves_no_folder(tmp_path: Path, engine: str) -> None:
    # deltalake has written the data files (no commit) when the hook runs: they were left in a new folder.
    frame = _frame(engine)
    io = IOConfig("o", format="delta", path="data/o", partition_by=["p"])
    with pytest.raises(RuntimeError, match="refused before the commit"):
        get_engine(engine).write(frame, io, tmp_path, before_commit=_refuse)
    assert not (tmp_path / "data" / "o").exists()


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_failed_write_keeps_a_folder_that_was_there_before(tmp_path: Path, engine: str) -> None:
    frame = _frame(engine)
    folder = tmp_path / "data" / "o"
    folder.mkdir(parents=True)  # an empty folder made beforehand: not this write's to remove
    io = IOConfig("o", format="delta", path="data/o", partition_by=["p"])
    with pytest.raises(RuntimeError, match="refused before the commit"):
        get_engine(engine).write(frame, io, tmp_path, before_commit=_refuse)
    assert folder.is_dir()
    get_engine(engine).write(frame, io, tmp_path)  # and a committed table is kept when a later write fails
    before = _tree(folder)
    with pytest.raises(RuntimeError, match="refused before the commit"):
        get_engine(engine).write(frame, IOConfig("o", format="delta", path="data/o", mode="append",
                                                 partition_by=["p"]), tmp_path, before_commit=_refuse)  # fmt: skip
    assert {k for k in _tree(folder) if "_delta_log" in k} == {k for k in before if "_delta_log" in k}
    assert DeltaTable(str(folder)).version() == 0


def _frame(engine: str) -> object:
    """Rows (p, v) as ``engine``'s own frame."""
    module = pytest.importorskip(engine, reason=NO_POLARS)  # pandas is the package's own; polars an extra
    return module.DataFrame({"p": ["x", "y"], "v": [1, 2]})


# -- a failed first write removes only what it wrote ---------------------------------------------------------------
# Before, the cleanup removed the whole new folder (shutil.rmtree) once its _delta_log was empty: a file another
# process put there during the write went with it. Now only deltalake's data files go, then the folders left empty.


def _foreign(folder: Path, outside: Path) -> dict[str, bytes | None]:
    """Put into ``folder`` (the write's new table folder, during the write) what another process might: a file,
    a file in a partition folder it made, and two symlinks to ``outside`` (a folder holding a file named as
    deltalake names data files, which the cleanup must not reach); the tree it expects to find after the cleanup."""
    (folder / "notes.txt").write_text("precious")
    (folder / "p=theirs").mkdir()
    (folder / "p=theirs" / "theirs.csv").write_text("a\n1\n")
    outside.mkdir()
    (outside / "part-00000-00000000-0000-0000-0000-000000000000-c000.snappy.parquet").write_text("not deltalake's")
    (folder / "p=link").symlink_to(outside, target_is_directory=True)
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    return {
        "notes.txt": b"precious",
        "p=theirs": None,
        "p=theirs/theirs.csv": b"a\n1\n",
        "p=link": None,
        "linked": None,
    }


def _links_only(folder: Path) -> dict[str, bytes | None]:
    """``_tree`` without descending into symlinks (rglob does not follow them; a link shows as itself)."""
    return {k: (None if (folder / k).is_symlink() or (folder / k).is_dir() else v) for k, v in _tree(folder).items()}


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_a_failed_first_write_keeps_what_another_process_put_in_its_folder(
    tmp_path: Path, engine: str, caplog: pytest.LogCaptureFixture
) -> None:
    import logging

    folder, outside = tmp_path / "data" / "o", tmp_path / "elsewhere"
    expected: dict[str, bytes | None] = {}

    def meanwhile() -> None:
        expected.update(_foreign(folder, outside))
        raise RuntimeError("refused before the commit")

    io = IOConfig("o", format="delta", path="data/o", partition_by=["p"])
    with caplog.at_level(logging.WARNING, logger="ubunye"), pytest.raises(RuntimeError, match="refused before"):
        get_engine(engine).write(_frame(engine), io, tmp_path, before_commit=meanwhile)
    assert _links_only(folder) == expected  # only the other process's, whole; no folder of deltalake's is left
    assert [p.name for p in outside.iterdir()] == [
        "part-00000-00000000-0000-0000-0000-000000000000-c000.snappy.parquet"
    ]
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert str(folder / "notes.txt") in warned and str(folder / "p=theirs") in warned


def test_a_failed_first_write_removes_the_data_files_deltalake_flushed(tmp_path: Path) -> None:
    # deltalake flushes a data file every ~100 MB: 20M random longs make one before the stream ends, left behind
    # (no commit) when the hook fails; it goes, the other process's file stays.
    import numpy as np
    import pyarrow as pa

    from ubunye.engines.delta import write_delta

    folder = tmp_path / "t"
    rows = pa.table({"v": np.random.default_rng(7).integers(0, 2**62, 20_000_000)})
    flushed: list[str] = []

    def meanwhile() -> None:
        # deltalake may still be encoding the last batches when the stream ends (its file comes a moment later on a
        # busy machine): wait for it, bounded only against a hang; the cleanup runs after deltalake returned
        deadline = time.monotonic() + 300
        while not flushed and time.monotonic() < deadline:
            flushed.extend(p.name for p in folder.glob("part-*.parquet"))
            time.sleep(0.05)
        (folder / "notes.txt").write_text("precious")
        raise RuntimeError("refused before the commit")

    with pytest.raises(RuntimeError, match="refused before the commit"):
        write_delta(pa.Table.from_batches(rows.to_batches(max_chunksize=1_000_000)), IOConfig("o", format="delta"),
                    str(folder), meanwhile)  # fmt: skip
    assert flushed  # deltalake had written a data file: this is what is removed
    assert _tree(folder) == {"notes.txt": b"precious"}
