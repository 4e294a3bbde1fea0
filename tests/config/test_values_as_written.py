"""config.yaml values, template values and task names taken as written or refused: each test fails on the code
before its fix (found by an independent battery of bad input).

Found: YAML 1.1 integer forms read as other numbers (``VERSION: 010`` recorded as '8', a Delta ``version: 010``
reading version 8; ``0x10``, ``1:30``, ``1_0``, ``0b10``); a template variable used outside a quoted SQL literal
rewriting the query (``WHERE id = {{ dtf }}`` with ``-dtf '2 OR 1=1'`` read every row); task names holding a C1
control, a bidi or zero-width character, or longer than a record's 250 bytes, run with ``--no-lineage`` and refused
late, as a record-store failure, with lineage; a ``file://`` output with a query refused without naming the file
or the key; ``records=""`` from Python silently meaning the default store.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.config import load_config
from ubunye.config.yamlfile import parse_yaml
from ubunye.exceptions import ConfigError
from ubunye.paths import plain_name
from ubunye.runner import run_task

TX = """
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {"o": pd.DataFrame({"id": [1, 2]})}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def refused(path: Path, *words: str, **variables: str) -> str:
    """The ConfigError of loading ``path``: it starts with the file and names every one of ``words``."""
    with pytest.raises(ConfigError) as err:
        load_config(path, env={"HOME": "/home/me"}, **variables)
    message = str(err.value)
    assert message.startswith(str(path)), message
    for word in words:
        assert word in message, (word, message)
    return message


# --- 1. YAML 1.1 integers ------------------------------------------------------------------------------------------

DELTA = """VERSION: {v}
CONFIG:
  inputs:
    i: {{format: delta, path: data/i, version: {v}}}
  outputs:
    o: {{format: parquet, path: data/o}}
"""


@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("010", 8),
        ("0x10", 16),
        ("1:30", 90),
        ("1_0", 10),
        ("0b10", 2),
        ("-010", -8),
        ("+0x1f", 31),
        ("00", 0),
        ("1_00_0", 1000),
        ("1000_000", 1000000),
    ],
)
def test_an_integer_yaml_reads_as_another_number_is_refused(tmp_path: Path, written: str, read_as: int) -> None:
    # Was: VERSION recorded as str(read_as), inputs.i.version read as read_as.
    message = refused(write(tmp_path, DELTA.format(v=written)), "VERSION: line 1", repr(written), str(read_as))
    assert "decimal" in message, message
    text = DELTA.format(v=written).replace(f"VERSION: {written}", "VERSION: 1")
    refused(write(tmp_path, text), "CONFIG.inputs.i.version: line 4", repr(written))


def test_an_explicit_int_tag_on_such_text_is_refused(tmp_path: Path) -> None:
    text = DELTA.format(v="1").replace("version: 1}", "version: !!int '010'}")
    refused(write(tmp_path, text), "CONFIG.inputs.i.version: line 4", "'010'")


@pytest.mark.parametrize(
    ("written", "value"),
    [("10", 10), ("0", 0), ("-5", -5), ("+7", 7), ("!!int '12'", 12), ("1_000_000", 1000000), ("-12_345", -12345)],
)
def test_plain_decimal_integers_are_read(written: str, value: int) -> None:
    assert parse_yaml(f"a: [{written}]\n", "c.yaml") == {"a": [value]}


def test_the_quoted_text_stays_text(tmp_path: Path) -> None:
    cfg = load_config(write(tmp_path, DELTA.format(v="3").replace("VERSION: 3", 'VERSION: "010"')))
    assert (cfg.version, cfg.inputs["i"].version) == ("010", 3)


# --- 2. template variables outside a quoted SQL literal ---------------------------------------------------------------

SQL = """CONFIG:
  inputs:
    i: {{format: parquet, path: data/i}}
  outputs:
    o: {{format: parquet, path: data/o}}
  transform:
    type: sql
    query: |
      {query}
"""


def sql(tmp_path: Path, query: str) -> Path:
    return write(tmp_path, SQL.format(query=query))


UNQUOTED = "SELECT id FROM i WHERE id = {{ dtf }}"


@pytest.mark.parametrize(
    "dtf",
    ["2 OR 1=1", "(SELECT max(id) FROM i)", "id", "2,3", "-1", "1e5", "2 ", "true", "null", "2--", "x.y", "2/*"],
)
def test_a_value_outside_quotes_must_be_one_literal(tmp_path: Path, dtf: str) -> None:
    # Was: '2 OR 1=1' read every row, '(SELECT max(id) FROM i)' chose the row; 'id' made `id = id`, true on every row.
    message = refused(sql(tmp_path, UNQUOTED), "CONFIG.transform.query", "dtf=", "cannot go into SQL", dtf=dtf)
    assert "outside a quoted" in message or "contains" in message, message


@pytest.mark.parametrize("dtf", ["2", "20261201", "2026-12-01", "3.5"])
def test_a_number_or_a_date_still_goes_in_unquoted(tmp_path: Path, dtf: str) -> None:
    assert load_config(sql(tmp_path, UNQUOTED), dtf=dtf).transform["query"].strip().endswith(f"id = {dtf}")


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM i WHERE day = '{{ dt }}'",
        'SELECT id AS "{{ dt }}" FROM i',
        "SELECT id AS `{{ dt }}` FROM i",
        "SELECT id, 'it''s {{ dt }}' AS note FROM i",
    ],
)
def test_inside_a_quoted_literal_any_text_that_cannot_close_it_goes_in(tmp_path: Path, query: str) -> None:
    cfg = load_config(sql(tmp_path, query), dt="2026-12-01 OR x = (1)")
    assert "2026-12-01 OR x = (1)" in cfg.transform["query"]


def test_a_word_joined_to_a_name_the_query_writes_goes_in(tmp_path: Path) -> None:
    query = "SELECT id FROM i_{{ mode }} WHERE {{ mode }}_flag"
    assert "FROM i_prod WHERE prod_flag" in load_config(sql(tmp_path, query), mode="prod").transform["query"]
    for mode in ("prod OR 1=1", "prod.x", "p-1"):
        refused(sql(tmp_path, query), "CONFIG.transform.query", "mode=", mode=mode)


def test_an_unquoted_word_in_an_expectation_is_refused(tmp_path: Path) -> None:
    text = "CONFIG:\n  outputs:\n    o: {format: parquet, path: data/o}\n  expectations:\n"
    text += '    o: {expression: ["id > 0", "id <> {{ dtf }}"]}\n'
    refused(write(tmp_path, text), "CONFIG.expectations.o.expression[1]", "dtf=", dtf="id")
    assert load_config(write(tmp_path, text), dtf="7").expectations[0].rules["expression"] == ["id > 0", "id <> 7"]


@pytest.mark.parametrize(
    "query",
    [
        # The text the value builds is checked, not only the value.
        "SELECT id FROM i WHERE id = {{ dtf | replace('x', ' OR 1=1') }}",
        # Where the value goes through a variable, it must be a literal wherever it lands.
        "{% set q = dtf %}SELECT id FROM i WHERE id = '{{ q }}'",
        "{% for v in [dtf] %}SELECT id FROM i WHERE id = '{{ v }}'{% endfor %}",
        "{% set q %}{{ dtf }}{% endset %}SELECT id FROM i WHERE id = {{ q[1:] }}",
        # Where engines read the text before it differently, the value is taken as unquoted.
        "SELECT $$ ' $$ AS a, id FROM i WHERE id = '{{ dtf }}'",
        "SELECT 'a\\' AS a, id FROM i WHERE id = '{{ dtf }}'",  # Spark: the literal goes on; DuckDB: it ends
        "SELECT /* /* */ ' */ '{{ dtf }}' AS a FROM i",
        "SELECT id FROM i -- '{{ dtf }}'",
    ],
)
def test_values_that_reach_sql_another_way_are_checked_too(tmp_path: Path, query: str) -> None:
    refused(sql(tmp_path, query), "CONFIG.transform.query", "dtf=", "cannot go into SQL", dtf="2x OR 1=1")


def test_a_variable_only_tested_may_be_a_word(tmp_path: Path) -> None:
    query = "SELECT id FROM i{% if mode == 'prod' %} WHERE id > 1{% endif %}"
    assert load_config(sql(tmp_path, query), mode="prod").transform["query"].strip() == "SELECT id FROM i WHERE id > 1"


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM i{% if mode %} WHERE m = '{{ mode }}'{% endif %}",
        "SELECT id FROM i{% if mode == 'prod' %} WHERE id > 1{% elif mode %} WHERE id > 2{% endif %}",
        "SELECT id FROM i{% if mode %} WHERE id > 1{% endif %}",
    ],
)
def test_a_bare_name_tested_may_be_a_word(tmp_path: Path, query: str) -> None:
    # Was: `{% if mode %}` refused any mode but a number or a date (the test's own name was not counted as a test).
    assert "WHERE" in load_config(sql(tmp_path, query), mode="x y").transform["query"]


@pytest.mark.parametrize(
    ("query", "variables", "written"),
    [
        ("SELECT id FROM i ORDER BY id {{ 'DESC' if mode == 'latest' else 'ASC' }}", {"mode": "latest"}, "id DESC"),
        ("""SELECT id FROM i {{ "WHERE id > 1" if mode == 'incr' else '' }}""", {"mode": "incr"}, "i WHERE id > 1"),
        ("SELECT id FROM i {{ 'WHERE id > 1' if mode is defined and mode != 'full' }}", {"mode": "x"}, "i WHERE"),
        ("{% set p = mode == 'prod' %}SELECT id FROM i{% if p %} WHERE id > 1{% endif %}", {"mode": "prod"}, "WHERE"),
        ("SELECT id FROM {{ 'i_' ~ mode }}", {"mode": "prod"}, "FROM i_prod"),
        ("SELECT id FROM {{ mode ~ '_i' if mode else 'i' }}", {"mode": "prod"}, "FROM prod_i"),
        ("""SELECT id FROM i WHERE d = {{ "'" ~ dt ~ "'" }}""", {"dt": "2026-12-01 x"}, "d = '2026-12-01 x'"),
    ],
)
def test_text_the_template_writes_is_not_the_values(
    tmp_path: Path, query: str, variables: dict[str, str], written: str
) -> None:
    # Was: refused, as if the value had written 'DESC', 'WHERE id > 1' or 'i_prod' (where `i_{{ mode }}` went in).
    assert written in load_config(sql(tmp_path, query), **variables).transform["query"]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT id FROM i WHERE id = {{ mode or 'x' }}",  # `or` writes its operand
        "SELECT id FROM i WHERE id = {{ mode ~ '' }}",
        "SELECT id FROM i WHERE id = {{ '' ~ mode | lower }}",
        "SELECT id FROM i WHERE id = {{ mode if mode == 'id' else 2 }}",
        "SELECT id FROM i WHERE id = {{ (mode ~ 'x')[:2] if mode is defined }}",
        "SELECT id FROM i WHERE id = {{ (mode if mode != 'x' else '') ~ ' ' }}",
        "{% set q = mode if mode == 'id' %}SELECT id FROM i WHERE id = {{ q }}",
    ],
)
def test_what_a_value_writes_is_still_checked(tmp_path: Path, query: str) -> None:
    message = refused(sql(tmp_path, query), "CONFIG.transform.query", "mode=", "cannot go into SQL", mode="id")
    assert "outside a quoted" in message or "set, a loop" in message, message


@pytest.mark.parametrize(
    "literal",
    ["'^\\d+$'", "'a\\\\'", "'a\\\\\\\\'", "'a\\\"'", "'x' || E'\\\\'", '"a\\\\"', "'\\n'"],
)
def test_a_backslash_both_engines_read_alike_keeps_the_literal(tmp_path: Path, literal: str) -> None:
    # Was: any backslash in a literal made the rest of the query "unknown": a regex earlier refused every '{{ mode }}'.
    query = f"SELECT id FROM i WHERE s rlike {literal} AND m = '{{{{ mode }}}}'"
    assert "m = 'x y'" in load_config(sql(tmp_path, query), mode="x y").transform["query"]


@pytest.mark.parametrize("literal", ["'a\\'", "'a\\\\\\'", '"a\\"', "`a\\`"])
def test_a_backslash_before_the_literals_own_quote_leaves_the_rest_unknown(tmp_path: Path, literal: str) -> None:
    # Spark reads `'a\'` as an open literal, DuckDB as a closed one: what follows is taken as unquoted.
    query = f"SELECT id FROM i WHERE s = {literal} AND m = '{{{{ mode }}}}'"
    refused(sql(tmp_path, query), "CONFIG.transform.query", "mode=", "read the query's text", mode="x y")
    assert load_config(sql(tmp_path, query), mode="20261201").transform["query"]


@pytest.mark.parametrize(
    ("query", "name", "value"),
    [
        ('SELECT id FROM i WHERE s = "{{ dtf }}"', "dtf", "s"),
        ("SELECT id FROM i WHERE s = `{{ mode }}`", "mode", "id"),
        ('SELECT id FROM i WHERE s = "{{ mode }}{{ dtf }}"', "dtf", "id"),
        ('SELECT id FROM i WHERE s = "{{ dtf }}"', "dtf", "2x"),
        ('SELECT id FROM i WHERE s = "{{ dtf }}"', "dtf", "order date"),  # a column's name with a space, too
        ("SELECT id FROM i WHERE s = `{{ mode }}`", "mode", "x y"),
        ('SELECT id FROM i WHERE alias = "{{ dtf }}"', "dtf", "s"),  # AS only as a word of its own
    ],
)
def test_a_word_alone_in_double_quotes_or_backticks_is_refused(
    tmp_path: Path, query: str, name: str, value: str
) -> None:
    # Was: `s = "{{ dtf }}"` with dtf=s compared the column with itself on DuckDB and polars (true on every row).
    variables = {"dtf": value, "mode": ""} | {name: value}
    message = refused(sql(tmp_path, query), "CONFIG.transform.query", f"{name}=", "single quotes", **variables)
    assert "cannot go into SQL" in message, message


@pytest.mark.parametrize(
    ("query", "value"),
    [
        ('SELECT id FROM i WHERE s = "{{ dtf }}"', "2026-12-01"),
        ('SELECT id FROM i WHERE s = "{{ dtf }}"', "20261201"),
        ('SELECT id AS "col_{{ dtf }}" FROM i', "s"),
        ('SELECT id as "{{ dtf }}" FROM i', "order date"),  # an alias defined: it refers to nothing
        ("SELECT id AS`{{ dtf }}` FROM i", "s"),
        ("SELECT id AS `{{ dtf }}_x` FROM i", "s"),
        ('SELECT id AS "a""{{ dtf }}" FROM i', "s"),
        ("SELECT id FROM i WHERE s = '{{ dtf }}'", "s"),
    ],
)
def test_a_word_joined_in_double_quotes_or_a_single_quoted_word_goes_in(tmp_path: Path, query: str, value: str) -> None:
    assert value in load_config(sql(tmp_path, query), dtf=value).transform["query"]


def test_the_unquoted_injection_reads_nothing_through_the_cli(tmp_path: Path) -> None:
    root = tmp_path / "uc"
    folder = root / "u" / "p" / "t"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(SQL.format(query="SELECT id, s FROM i WHERE id = {{ dtf }}"))
    (root / "data" / "i").mkdir(parents=True)
    pd.DataFrame({"id": [1, 2, 3], "s": ["x", "y", "z"]}).to_parquet(root / "data/i/part-0.parquet")
    args = ["run", "-d", str(root), "-u", "u", "-p", "p", "-t", "t", "--no-lineage", "-dtf"]
    result = CliRunner().invoke(app, [*args, "2 OR 1=1"])
    assert result.exit_code == 2 and "CONFIG.transform.query" in result.stderr, result.output
    assert not (root / "data" / "o").exists()
    assert CliRunner().invoke(app, [*args, "2"]).exit_code == 0
    assert pd.read_parquet(root / "data" / "o")["id"].tolist() == [2]


# --- 3. task identity: the record's rule, up front --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("t\x85", "'t\\x85'"),
        ("t\u202ex", "'t\\u202ex'"),
        ("t\u200b", "'t\\u200b'"),
        ("t\u2028x", "'t\\u2028x'"),
        ("t\u3164", "'t\\u3164'"),  # Hangul filler: printable to Python, shown as nothing
        ("t\ufe0f", "'t\\ufe0f'"),  # a variation selector alone
        ("\u2800", "'\\u2800'"),  # braille blank: a name that looks empty
        ("x" * 251, "251"),
        ("é" * 126, "252 bytes"),
    ],
)
def test_a_name_the_record_refuses_is_refused_up_front(name: str, shown: str) -> None:
    with pytest.raises(ConfigError) as err:
        plain_name("task", name)
    message = str(err.value)
    assert message.startswith("task '") and "is not a plain folder name" in message, message
    assert shown in message and message.isprintable(), message


def test_the_longest_name_a_record_holds_is_taken() -> None:
    assert plain_name("task", "x" * 250) == "x" * 250
    assert plain_name("task", "é" * 125) == "é" * 125


@pytest.mark.parametrize("name", ["t\x85", "t\u202ex"])
@pytest.mark.parametrize("lineage", [["--no-lineage"], []])
def test_such_a_task_never_runs(tmp_path: Path, name: str, lineage: list[str]) -> None:
    # Was: exit 0 with --no-lineage; with lineage "did not start: monitor lineage could not write the run record".
    folder = tmp_path / "u" / "p" / name
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text("CONFIG:\n  outputs:\n    o: {format: parquet, path: data/o}\n")
    (folder / "transformations.py").write_text(TX)
    args = ["run", "-d", str(tmp_path), "-u", "u", "-p", "p", "-t", name, *lineage]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"error: task {name!r} is not a plain folder name"), result.stderr
    assert "record" not in result.stderr and result.stderr.strip().isprintable(), result.stderr
    assert not (tmp_path / "data").exists() and not (tmp_path / ".ubunye").exists()
    with pytest.raises(ConfigError, match="is not a plain folder name"):
        run_task(folder, engine="pandas", lineage=False)


# --- 5. a file:// output with a query --------------------------------------------------------------------------------


def test_a_file_url_output_with_a_query_names_the_file_and_key(tmp_path: Path) -> None:
    folder = tmp_path / "u" / "p" / "t"
    folder.mkdir(parents=True)
    config = folder / "config.yaml"
    config.write_text(f"CONFIG:\n  outputs:\n    o: {{format: parquet, path: 'file://{tmp_path}/data/i?x=1'}}\n")
    (folder / "transformations.py").write_text(TX)
    with pytest.raises(ConfigError) as err:
        run_task(folder, engine="pandas", lineage=False)
    assert str(err.value).startswith(f"{config}: CONFIG.outputs.o.path: "), str(err.value)
    assert "query or fragment" in str(err.value)


# --- 4. records="" from Python ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("records", ["", "   "])
def test_a_blank_records_location_is_refused(tmp_path: Path, records: str) -> None:
    folder = tmp_path / "u" / "p" / "t"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text("CONFIG:\n  outputs:\n    o: {format: parquet, path: data/o}\n")
    (folder / "transformations.py").write_text(TX)
    try:
        with pytest.raises(ConfigError, match=r"^records: is empty or blank \(an unset variable\?\)"):
            run_task(folder, engine="pandas", lineage=True, records=records)
    finally:
        # Was: the record went to the default store, <usecase_dir>/.ubunye/lineage, without a word.
        stored = list((tmp_path / ".ubunye").rglob("*.json"))
        assert not stored, [json.loads(p.read_text())["task"] for p in stored]
