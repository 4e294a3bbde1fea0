"""config.yaml values a hostile tester found mishandled: each test fails on the code before its fix.

Found: a NUL byte that escaped as PyYAML's ReaderError (a traceback on the CLI); a template variable that rewrote
a SQL query or expression (``-dt "2026-12-01' OR '1'='1"`` read every day); paths a shell would have expanded
(``~/x``, ``$HOME/x``: folders named ``~`` and ``$HOME`` made under the usecase folder); a ``file://`` URL naming
a host; invisible characters in a path or table; keys the chosen transform never reads (a query beside a Task,
params beside a query); lineage listed twice with contradicting params; a partition column named twice; inputs
named alike but for case (one SQL view read in place of the other); an integer too long for Python to print (a
ValueError traceback); a format beside an input table (ignored, and recorded); templates that filled the memory
through what the size checks did not see (``~``, ``+``, a list of long lists, ``sum``, the rendered text itself).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.config import load_config
from ubunye.exceptions import ConfigError

BASE = """CONFIG:
  outputs:
    out: {format: parquet, path: "out/x"}
"""


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "config.yaml"
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return path


def refused(path: Path, *words: str, **variables: str) -> str:
    """The ConfigError of loading ``path``: it starts with the file and names every one of ``words``."""
    with pytest.raises(ConfigError) as err:
        load_config(path, env={"HOME": "/home/me", "SCHEMA": "lake"}, **variables)
    message = str(err.value)
    assert message.startswith(str(path)), message
    for word in words:
        assert word in message, (word, message)
    return message


# --- YAML --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("char", ["\x00", "\x07", "\ufffe"])
def test_a_character_yaml_refuses_is_an_error_naming_the_line(tmp_path: Path, char: str) -> None:
    # Was: yaml.reader.ReaderError ("unacceptable character #x0000 ... position 40"), not a ConfigError.
    path = write(tmp_path, (BASE + f"  transform: {{params: {{a: 'x{char}y'}}}}\n").encode("utf-8"))
    refused(path, "line 4", f"U+{ord(char):04X}", "not allowed")


# --- template variables in SQL ------------------------------------------------------------------------------------


SQL = """CONFIG:
  inputs:
    src: {format: parquet, path: data/src}
  outputs:
    out: {format: parquet, path: "out/x"}
  transform: {type: sql, query: "SELECT * FROM src WHERE day = '{{ dt }}'"}
"""


@pytest.mark.parametrize(
    ("dt", "shown"),
    [
        ("2026-12-01' OR '1'='1", '"\'"'),
        ('2026-12-01" OR "1"="1', "'\"'"),
        ("x'; DROP TABLE src; --", "';'"),
        ("2026-12-01' --", "'--'"),
        ("a\\", "'\\\\'"),
        ("2026-12-01\n", "control character"),
    ],
)
def test_a_template_variable_cannot_rewrite_the_query(tmp_path: Path, dt: str, shown: str) -> None:
    refused(write(tmp_path, SQL), "CONFIG.transform.query", "dt=", "cannot go into SQL", shown, dt=dt)


def test_nor_an_expectation_expression(tmp_path: Path) -> None:
    text = BASE + "  expectations:\n    out:\n      expression: [\"day <> ''\", \"day = '{{ mode }}'\"]\n"
    refused(write(tmp_path, text), "CONFIG.expectations.out.expression[1]", "mode=", mode="x' OR 'a'='a")
    text = BASE + "  expectations:\n    out: {expression: \"day = '{{ dtf }}'\"}\n"
    refused(write(tmp_path, text), "CONFIG.expectations.out.expression", "dtf=", dtf="x' OR 'a'='a")


def test_plain_values_still_go_into_sql(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, SQL), dt="2026-12-01")
    assert cfg.transform["query"] == "SELECT * FROM src WHERE day = '2026-12-01'"
    # Outside SQL, the variables are what they were: a param may hold a quote.
    text = BASE + '  transform: {params: {note: "{{ dt }}"}}\n'
    assert load_config(write(tmp_path, text), dt="it's").transform["params"]["note"] == "it's"


def test_the_injection_reads_nothing_through_the_cli(tmp_path: Path) -> None:
    root = tmp_path / "uc"
    folder = root / "u" / "p" / "t"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(SQL.replace("out/x", "data/out"))
    (root / "data" / "src").mkdir(parents=True)
    pd.DataFrame({"day": ["2026-12-01", "2026-12-02"], "v": [1, 2]}).to_parquet(root / "data/src/part-0.parquet")
    args = ["run", "-d", str(root), "-u", "u", "-p", "p", "-t", "t", "-dt", "2026-12-01' OR '1'='1"]
    result = CliRunner().invoke(app, args)
    # Was: exit 0, data/out holding both days.
    assert result.exit_code == 2, result.output
    assert "CONFIG.transform.query" in result.stderr and "Traceback" not in result.stderr
    assert not (root / "data" / "out").exists()
    assert CliRunner().invoke(app, [*args[:-1], "2026-12-01"]).exit_code == 0
    assert pd.read_parquet(root / "data" / "out")["day"].tolist() == ["2026-12-01"]


# --- paths ---------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "shown"),
    [
        ("~/lake/out", "starts with '~'"),
        ("~", "starts with '~'"),
        ("~me/lake", "starts with '~'"),
        ("$HOME/lake/out", "'$HOME'"),
        ("data/${DT}/out", "'${DT}'"),
        ("s3://bucket/$USER/out", "'$USER'"),
    ],
)
def test_a_path_a_shell_would_expand_is_refused(tmp_path: Path, path: str, shown: str) -> None:
    # Was: accepted, and run as a folder literally named '~' or '$HOME' under the usecase folder.
    message = refused(write(tmp_path, BASE.replace("out/x", path)), "CONFIG.outputs.out.path", shown)
    assert "nothing expands" in message


def test_the_template_way_to_use_a_variable_still_works(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, BASE.replace("out/x", "{{ env.HOME }}/lake")), env={"HOME": "/home/me"})
    assert cfg.outputs["out"].path == "/home/me/lake"
    # A '$' not followed by a name, and a '~' inside a path, are characters like others.
    cfg = load_config(write(tmp_path, BASE.replace("out/x", "out/a$/b~c")))
    assert cfg.outputs["out"].path == "out/a$/b~c"


def test_no_folder_named_tilde_is_made(tmp_path: Path) -> None:
    root = tmp_path / "uc"
    folder = root / "u" / "p" / "t"
    folder.mkdir(parents=True)
    sql = "  transform: {type: sql, query: 'SELECT 1 AS a'}\n"
    (folder / "config.yaml").write_text("CONFIG:\n  outputs:\n    o: {format: parquet, path: '~/out'}\n" + sql)
    result = CliRunner().invoke(app, ["run", "-d", str(root), "-u", "u", "-p", "p", "-t", "t"])
    assert result.exit_code == 2, result.output
    assert "CONFIG.outputs.o.path" in result.stderr
    assert not (root / "~").exists()


@pytest.mark.parametrize(("path", "host"), [("file://data/x", "'data'"), ("file://user:pw@nas/x", "'nas'")])
def test_a_file_url_naming_a_host_is_refused(tmp_path: Path, path: str, host: str) -> None:
    # Was: accepted; an input then failed mid-run ("Unsupported hostname"), an output with a message about
    # atomic renames on remote storage.
    message = refused(write(tmp_path, BASE.replace("out/x", path)), "CONFIG.outputs.out.path", host, "file:///")
    assert "pw" not in message
    cfg = load_config(write(tmp_path, BASE.replace("out/x", "file://localhost/lake/x")))
    assert cfg.outputs["out"].path == "file://localhost/lake/x"


@pytest.mark.parametrize(
    ("char", "shown"),
    [
        ("\\u202e", "U+202E"),  # shows the folder's name reversed
        ("\\u200b", "U+200B"),  # a zero-width space
        ("\\x85", "a control character (U+0085)"),  # C1 control: passed the old `ord(c) < 32` check
        ("\\u2028", "U+2028"),  # a line separator
    ],
)
def test_a_path_or_table_with_an_invisible_character_is_refused(tmp_path: Path, char: str, shown: str) -> None:
    refused(write(tmp_path, BASE.replace("out/x", f"out/a{char}b")), "CONFIG.outputs.out.path", shown)
    table = BASE + f'  inputs:\n    src: {{table: "db.a{char}b"}}\n'
    refused(write(tmp_path, table), "CONFIG.inputs.src.table", shown)


# --- keys the config would silently ignore --------------------------------------------------------------------------


def test_a_query_beside_a_task_transform_is_refused(tmp_path: Path) -> None:
    # Was: accepted; transformations.py ran and the query was never read.
    for transform in ("{query: 'SELECT 1 AS a'}", "{type: task, query: 'SELECT 1 AS a'}"):
        refused(write(tmp_path, BASE + f"  transform: {transform}\n"), "CONFIG.transform.query", "type: sql")


def test_params_beside_a_sql_transform_are_refused(tmp_path: Path) -> None:
    text = BASE + "  transform: {type: sql, query: 'SELECT 1 AS a', params: {limit: 1}}\n"
    refused(write(tmp_path, text), "CONFIG.transform.params", "sql")


@pytest.mark.parametrize(
    "monitors",
    ["[lineage, lineage]", "[{lineage: {hash_inputs: false}}, {type: lineage, params: {hash_inputs: true}}]"],
)
def test_lineage_listed_twice_is_refused(tmp_path: Path, monitors: str) -> None:
    # Was: accepted; with contradicting hash_inputs, the run hashed its inputs (any entry asking won).
    refused(write(tmp_path, BASE + f"  monitors: {monitors}\n"), "CONFIG.monitors[1]", "twice", "CONFIG.monitors[0]")


def test_a_partition_column_named_twice_is_refused(tmp_path: Path) -> None:
    # Was: accepted; the engine then refused to write "partitioned by 's', 's'" for another reason.
    text = BASE.replace('path: "out/x"', 'path: "out/x", partition_by: [s, day, s]')
    refused(write(tmp_path, text), "CONFIG.outputs.out.partition_by", "'s' twice")


def test_inputs_whose_names_differ_only_in_case_are_refused(tmp_path: Path) -> None:
    # Was: accepted; each input is a SQL view, and `SELECT * FROM orders` read the input `Orders` (DuckDB, like
    # Spark, does not tell them apart): another table's rows, exit 0.
    text = BASE + "  inputs:\n    orders: {format: parquet, path: a}\n    Orders: {format: parquet, path: b}\n"
    refused(write(tmp_path, text), "CONFIG.inputs.Orders", "'orders'", "only in case")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("VERSION: " + "9" * 5000 + "\n" + BASE, "VERSION"),  # int() of its text: ValueError inside PyYAML
        (
            BASE + "  inputs:\n    i: {format: delta, path: a, version: 0x" + "f" * 5000 + "}\n",
            "CONFIG.inputs.i.version",
        ),
    ],
)
def test_an_integer_too_long_to_print_is_refused(tmp_path: Path, text: str, key: str) -> None:
    # Was: ValueError "Exceeds the limit (4300 digits) for integer string conversion", a traceback (the hex one
    # while the "at most 2**63 - 1" message formatted the number).
    refused(write(tmp_path, text), key, "an integer written with", "at most 100")


def test_a_format_beside_an_input_table_is_refused(tmp_path: Path) -> None:
    # Was: accepted; Spark reads the table as its catalog stores it, and the record said format csv.
    text = BASE + "  inputs:\n    src: {table: db.sales, format: csv}\n"
    refused(write(tmp_path, text), "CONFIG.inputs.src.format", "leave format out")
    assert load_config(write(tmp_path, BASE + "  inputs:\n    src: {table: db.sales}\n")).inputs["src"].format is None


# --- templates that would fill the memory -----------------------------------------------------------------------

#: Loads a config in a child process capped at 2 GiB of address space (the code before the fix would take all the
#: machine's memory), printing the ConfigError's message and the peak memory in MiB.
LOAD_CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
from ubunye.config import load_config
from ubunye.exceptions import ConfigError
try:
    load_config(sys.argv[1])
except ConfigError as exc:
    print(exc)
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)
"""


@pytest.mark.parametrize(
    ("template", "says"),
    [
        # Each `~` doubles the text: 2**30 MB after thirty. Was: MemoryError, or the whole machine's memory.
        ("{% set s = 'x' * 999999 %}" + "{% set s = s ~ s %}" * 30 + "{{ s | length }}", "a joined text above"),
        # The same with `+` on lists, and a repetition of a list holding a long list (its length was 1).
        ("{% set s = [[0] * 999999] %}" + "{% set s = s + s %}" * 20 + "{{ s }}", "a text or list longer than"),
        ("{{ [[0] * 999999] * 999999 }}", "a repetition longer than"),
        ("{% set l = [0] * 999999 %}{{ [l, l, l, l, l, l, l, l] | sum(start=[]) | length }}", "a summed list above"),
        ("{% set l = 'x' * 999999 %}{{ [l, l, l, l, l, l, l, l] | join | length }}", "a joined text above"),
        # Each piece is bounded, the text made of them was not: twenty thousand copies of a 1 MB text.
        ("{% set s = 'x' * 999999 %}" + "{{ s }}" * 20000, "a rendered value longer than"),
    ],
)
def test_a_template_cannot_fill_the_memory(tmp_path: Path, template: str, says: str) -> None:
    import subprocess
    import sys

    path = write(tmp_path, BASE + f'  transform: {{params: {{x: "{template}"}}}}\n')
    done = subprocess.run([sys.executable, "-c", LOAD_CAPPED, str(path)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    message, peak = done.stdout.rsplit("\n", 2)[-3:-1]
    assert "CONFIG.transform.params.x" in message and says in message and "is refused" in message, message
    assert int(peak) < 1024, f"{peak} MiB"
