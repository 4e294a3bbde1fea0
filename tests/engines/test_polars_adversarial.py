"""Faults an adversarial tester found in the polars engine, each with its fix.

- D1: polars SQL may not open a file, however the table function is written (quoted, any case, comments before
  its parenthesis); the words inside a string literal or a comment stay allowed. The tokenizer rules the guard
  relies on are pinned here against the installed polars.
- D4: a csv header naming a column twice (two empty names included) is refused naming the input, file and column.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lineage.usecase import write_task
from ubunye.config import IOConfig
from ubunye.exceptions import EngineError, UbunyeError
from ubunye.runner import run_task

pl = pytest.importorskip("polars")

from ubunye.engines.polars_engine import PolarsEngine, refuse_file_functions  # noqa: E402

REFUSED = "which reads files outside the task's declared inputs"


def sql_task(tmp_path: Path, query: str) -> Path:
    """A polars task with input ``i`` at data/in and a SQL transform writing ``o``."""
    usecase_dir = tmp_path / "uc"
    data = usecase_dir / "data"  # paths are relative to the usecase_dir
    data.mkdir(parents=True)
    (data / "in.csv").write_text("x\n1\n")
    return write_task(
        usecase_dir,
        "t",
        {
            "ENGINE": {"backend": "polars"},
            "CONFIG": {
                "inputs": {"i": {"format": "csv", "path": "data/in.csv"}},
                "outputs": {"o": {"format": "parquet", "path": "out/o"}},
                "transform": {"type": "sql", "query": query},
            },
        },
    )


BYPASSES = [
    "SELECT * FROM \"read_csv\"('{f}')",
    "SELECT * FROM `read_csv`('{f}')",
    "SELECT * FROM \"READ_CSV\" ('{f}')",
    "SELECT * FROM reAD_Csv('{f}')",
    "SELECT * FROM read_csv/**/('{f}')",
    "SELECT * FROM \"read_csv\" /* a /* nested */ comment */ ('{f}')",
    "SELECT * FROM read_csv -- a comment\n ('{f}')",
    "SELECT * FROM read_csv\u00a0('{f}')",
    "SELECT * FROM (`Read_Ndjson`('{f}'))",
    "WITH z AS (SELECT * FROM \"read_ipc\"('{f}')) SELECT * FROM z",
    "SELECT * FROM i JOIN `read_parquet`('{f}') AS s ON true",
    "SELECT * FROM i UNION ALL SELECT * FROM \"read_json\"('{f}')",
    # a quote inside a comment, a dollar string or a quoted identifier opens no string literal
    "SELECT 1 AS a -- it's\n, * FROM read_csv('{f}') -- '",
    "SELECT $$it's$$ AS a, * FROM read_csv('{f}') -- '",
    "SELECT 1 AS \"it's\", * FROM read_csv('{f}') -- '",
    "SELECT x$a$ FROM read_csv('{f}') -- $a$",
    # E'' and U&'' take a backslash escape, '' does not
    "SELECT 'a\\' AS a, * FROM read_csv('{f}')",
    "SELECT E'\\'' AS a FROM read_csv('{f}') -- '",
    # a review's: an identifier named Ee or Uu, or starting with #, @ or a combining mark, was taken for the start
    # of an E'' / U&'' string (or a $$ string began after it): the guard saw a string where polars saw code
    "WITH c AS (SELECT 'a' AS Ee) SELECT Ee'\\', * FROM c, read_csv('{f}') --'",
    "WITH c AS (SELECT 1 AS \"#$$\") SELECT #$$ AS k, * FROM c, read_csv('{f}') --$$",
    "WITH c AS (SELECT 1 AS \"@e\") SELECT @e'\\', * FROM c, read_csv('{f}') --'",
    "WITH c AS (SELECT 1 AS \"\u0903e\") SELECT \u0903e'\\', * FROM c, read_csv('{f}') --'",
    "WITH c AS (SELECT 1 AS Uu) SELECT Uu&'\\', * FROM c, read_csv('{f}') --'",
]


@pytest.mark.parametrize("query", BYPASSES)
def test_a_file_function_is_refused_however_written(tmp_path: Path, query: str) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n42\n")
    with pytest.raises(EngineError, match=REFUSED):
        PolarsEngine().sql(query.format(f=secret), {"i": pl.DataFrame({"x": [1]})})


def test_the_quoted_bypass_is_refused_in_a_run(tmp_path: Path) -> None:
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n42\n")
    task_dir = sql_task(tmp_path, f"SELECT * FROM \"read_csv\"('{secret}')")
    with pytest.raises(UbunyeError, match="calls read_csv, " + REFUSED):
        run_task(task_dir)
    assert not (tmp_path / "uc" / "out").exists()


ALLOWED = [
    ("SELECT 'read(x)' AS s FROM t", "read(x)"),
    ("SELECT 'it''s \"scan\"(x)' AS s FROM t", 'it\'s "scan"(x)'),
    ("SELECT $$reader('x')$$ AS s FROM t", "reader('x')"),
    ("SELECT 'a' AS s FROM t -- a comment", "a"),
    ("SELECT 'C:\\' AS s FROM t", "C:\\"),
    ("SELECT x AS \"read_time\", 'a' AS s FROM t", "a"),
]


@pytest.mark.parametrize(("query", "value"), ALLOWED)
def test_other_words_in_a_literal_or_comment_stay_allowed(query: str, value: str) -> None:
    out = PolarsEngine().sql(query, {"t": pl.DataFrame({"x": [1]})})
    assert out["s"].to_list() == [value]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT 'read_csv(x)' AS s FROM t",
        "SELECT $$read_csv('x')$$ AS s FROM t",
        "SELECT 'a' AS s FROM t -- read_csv('x')",
        "SELECT /* READ_PARQUET('x') */ 'a' AS s FROM t",
        'SELECT x AS "read_csv(x)" FROM t',
    ],
)
def test_a_file_functions_name_is_refused_even_in_a_literal_or_comment(query: str) -> None:
    # Failing closed: where the guard's reading of a query and polars' could differ (a string's start or end), the
    # name alone decides. A literal naming read_csv is rare; a bypass reads an undeclared file.
    with pytest.raises(EngineError, match="refused even inside a string or comment"):
        refuse_file_functions(query)


def test_other_read_and_scan_calls_are_refused_too() -> None:
    for name in ("read_delta", "scan_csv", "read_avro", "read_something_new"):
        with pytest.raises(EngineError, match=f"calls {name}, " + REFUSED):
            refuse_file_functions(f"SELECT * FROM {name}('x')")
    refuse_file_functions("SELECT read_time, scan_count FROM t")  # columns, not calls


# The tokenizer rules the guard follows, as the installed polars applies them (a polars upgrade that changes one
# fails here): (query, the rows polars returns).
POLARS_RULES = [
    ("SELECT 'a\\' AS s FROM t", [("a\\",)]),  # no backslash escape in '...'
    ("SELECT 'a''b' AS s FROM t", [("a'b",)]),  # '' is a quote
    ("SELECT $$a'b$$ AS s FROM t", [("a'b",)]),  # dollar strings
    ("SELECT $q1$a'$b$q1$ AS s FROM t", [("a'$b",)]),
    ("SELECT /* /* */ 1 */ 2 AS s FROM t", [(2,)]),  # block comments nest
    ("SELECT x FROM t --c\rWHERE x = 2", [(1,)]),  # a line comment ends at \n only
    ('SELECT x AS "a""b", x AS `c``d` FROM t', [(1, 1)]),  # doubled quotes in quoted identifiers
]


@pytest.mark.parametrize(("query", "rows"), POLARS_RULES)
def test_polars_tokenizes_as_the_guard_assumes(query: str, rows: list[tuple[object, ...]]) -> None:
    assert pl.SQLContext(frames={"t": pl.DataFrame({"x": [1]})}).execute(query, eager=True).rows() == rows


def test_escaped_strings_and_dollar_words_tokenize_as_the_guard_assumes() -> None:
    ctx = pl.SQLContext(frames={"t": pl.DataFrame({"x": [1]})})
    with pytest.raises(Exception, match=r"EscapedStringLiteral\(\"a'\"\)"):  # E'' takes \' as a quote
        ctx.execute("SELECT E'a\\'' AS s FROM t", eager=True)
    with pytest.raises(Exception, match=r'unable to find column "x\$y"'):  # $ continues a word
        ctx.execute("SELECT x$y FROM t", eager=True)


# --- D4: a csv header that polars would repair -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "says"),
    [("a,a\n1,2\n", "names column 'a' twice"), (",\n1,2\n", "names an empty column name twice")],
)
def test_a_csv_header_naming_a_column_twice_is_refused(tmp_path: Path, text: str, says: str) -> None:
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "part-0.csv").write_text(text)
    with pytest.raises(EngineError, match=rf"input 'i': csv header of .*part-0\.csv {says}"):
        PolarsEngine().read(IOConfig("i", format="csv", path="in"), tmp_path)


def test_a_csv_header_with_one_empty_name_reads_as_pandas_reads_it(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("a,\n1,2\n")
    back = PolarsEngine().read(IOConfig("i", format="csv", path="in.csv"), tmp_path)
    assert (back.columns, back.rows()) == (["a", ""], [(1, 2)])


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json", "delta"])
def test_a_name_holding_nul_is_refused_not_a_panic(tmp_path: Path, fmt: str) -> None:
    # polars' own export raised a PanicException (no Exception: a bare traceback); hashing it aborted the process
    import polars as pl

    with pytest.raises(EngineError, match=r"^polars cannot write column 'a\\x00b': its name holds a NUL character"):
        PolarsEngine().write(pl.DataFrame({"a\x00b": [1]}), IOConfig("o", format=fmt, path="o"), tmp_path)
    assert not (tmp_path / "o").exists()


def test_hashing_a_name_holding_nul_is_a_hash_error_not_an_abort() -> None:
    # Run in a child: before, the panic aborted the whole process (no exception to catch)
    import subprocess
    import sys

    code = (
        "import polars as pl\n"
        "from ubunye.hashing import hash_frame\n"
        "from ubunye.exceptions import HashError\n"
        "for frame in (pl.DataFrame({'a\\x00b': [1]}), pl.DataFrame({'s': [[{'a\\x00b': 1}]]})):\n"
        "    try:\n"
        "        hash_frame(frame)\n"
        "    except HashError as exc:\n"
        "        print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == [
        "rows-v1 cannot read column 'a\\x00b' from polars: its name holds a NUL character, which polars cannot "
        "export to Arrow (it aborts the process); rename it",
        "rows-v1 cannot read field 's[].a\\x00b' of column 's' from polars: its name holds a NUL character, which "
        "polars cannot export to Arrow (it aborts the process); rename it",
    ]
