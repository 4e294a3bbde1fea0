"""config.yaml values YAML 1.1 would have read silently as something else, now refused naming the file, the key
path and the line: each test fails on the code before its fix (found by an independent battery of bad input).

Found: two merge keys ``<<`` in one mapping (a duplicate key: the second's keys won without a word, and the run
wrote ``data/out_second``); YAML 1.1 float forms read as other numbers (``1:30.5`` as 90.5 in base 60, ``1_0.5``
as 10.5) while the same integer forms were refused, a float past what a float holds (``1.0e+400`` read as inf),
and ``!!float abc`` / ``!!int ''`` escaping as a ValueError / IndexError traceback; ``partition_by`` on an input,
accepted and then ignored by every engine.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.config import load_config
from ubunye.config.yamlfile import parse_yaml
from ubunye.exceptions import ConfigError


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return path


def refused(path: Path, *words: str) -> str:
    """The ConfigError of loading ``path``: it starts with the file and names every one of ``words``."""
    with pytest.raises(ConfigError) as err:
        load_config(path)
    message = str(err.value)
    assert message.startswith(str(path)), message
    for word in words:
        assert word in message, (word, message)
    return message


def task(root: Path, config: str) -> list[str]:
    """A usecase folder ``root`` with one parquet input ``data/in`` and task u/p/t; the args of ``ubunye run``."""
    folder = root / "u" / "p" / "t"
    folder.mkdir(parents=True)
    (folder / "config.yaml").write_text(config)
    (root / "data" / "in").mkdir(parents=True)
    pd.DataFrame({"id": [1, 2], "x": [90.5, 10.5]}).to_parquet(root / "data/in/part-0.parquet", index=False)
    return ["run", "-d", str(root), "-u", "u", "-p", "p", "-t", "t", "--no-lineage"]


# --- 1. a second merge key in one mapping ------------------------------------------------------------------------

MERGED = """CONFIG:
  inputs:
    src: {format: parquet, path: data/in}
  outputs:
    out:
      <<: {format: parquet, path: data/out_first}
      <<: {format: parquet, path: data/out_second}
  transform: {type: sql, query: "SELECT id, x FROM src"}
"""


def test_a_second_merge_key_is_a_duplicate_key(tmp_path: Path) -> None:
    # Was: loaded with path data/out_second (both merged, the second's keys winning).
    message = refused(write(tmp_path, MERGED), "CONFIG.outputs.out.<<: line 7", "duplicate", "first at line 6")
    assert "<<: [*a, *b]" in message, message  # says how to merge several
    # One merge key with a list of mappings is the way to merge several.
    one = MERGED.replace(
        "      <<: {format: parquet, path: data/out_first}\n      <<: {format: parquet, path: data/out_second}\n",
        "      <<: [{format: parquet}, {path: data/out_first}]\n",
    )
    assert load_config(write(tmp_path, one)).outputs["out"].path == "data/out_first"


LISTED = """defaults: &defaults {format: parquet, path: data/default}
second: &second {format: parquet, path: data/second}
out:
  <<: [*defaults, *second]
"""


def test_a_key_two_merged_mappings_give_differently_is_refused() -> None:
    # Was: path data/second on PyYAML 6.0.4 (the last listed wins for a key of two letters or more, the first for a
    # one-letter key; the merge spec and PyYAML 6.0.3 say the first): which one a reader gets is a guess.
    with pytest.raises(ConfigError) as err:
        parse_yaml(LISTED, "c.yaml")
    message = str(err.value)
    assert message.startswith("c.yaml: out.<<: line 4: 'path' is given by two merged mappings (lines 1 and 2)"), message
    assert "write path beside the <<" in message, message
    # Written beside the <<, it is no guess; format is given alike by both, which is no guess either.
    beside = parse_yaml(LISTED + "  path: data/out\n", "c.yaml")
    assert beside == {
        "defaults": {"format": "parquet", "path": "data/default"},
        "second": {"format": "parquet", "path": "data/second"},
        "out": {"format": "parquet", "path": "data/out"},
    }


def test_a_key_two_merged_mappings_give_the_same_value_is_taken() -> None:
    # Refused as if the values differed, with a reason that was untrue: every reader gives the same result.
    text = "a: &a {format: parquet, options: {sep: ';'}, n: 1.0}\nb: &b {options: {sep: ';'}, n: 1.00}\n"
    merged = parse_yaml(text + "out: {<<: [*a, *b], path: x}\n", "c.yaml")
    assert merged["out"] == {"format": "parquet", "options": {"sep": ";"}, "n": 1.0, "path": "x"}
    with pytest.raises(ConfigError, match=r"'options' is given by two merged mappings"):
        parse_yaml(text.replace("{sep: ';'}, n: 1.00", "{sep: ','}, n: 1.00") + "out: {<<: [*a, *b]}\n", "c.yaml")


def test_an_override_inside_a_merged_mapping_is_kept_for_a_one_letter_key() -> None:
    # Was: o.p == 1 on PyYAML 6.0.4 (sub's own p: 2 dropped, as Python shares one-letter strings), o.pp == 2.
    text = "base: &b {p: 1, pp: 1}\nsub: &s {<<: *b, p: 2, pp: 2}\no: {<<: *s}\n"
    assert parse_yaml(text, "c.yaml") == {"base": {"p": 1, "pp": 1}, "sub": {"p": 2, "pp": 2}, "o": {"p": 2, "pp": 2}}


def test_a_second_merge_key_through_aliases_and_deeper_is_refused() -> None:
    text = "base: &b {p: 1}\nother: &o {q: 2}\na:\n  - x:\n      <<: *b\n      r: 3\n      <<: *o\n"
    with pytest.raises(ConfigError, match=r"^c\.yaml: a\[0\]\.x\.<<: line 7: duplicate merge key \(first at line 5\)"):
        parse_yaml(text, "c.yaml")
    # A quoted "<<" is a plain key, not a merge: beside one merge key it is no duplicate.
    assert parse_yaml("a:\n  '<<': 1\n  <<: {p: 2}\n", "c.yaml") == {"a": {"<<": 1, "p": 2}}


@pytest.mark.parametrize("value", ["5", "[{a: 1}, 5]", "null"])
def test_a_merge_of_no_mapping_names_the_key_and_line(value: str) -> None:
    # Was: "not valid YAML: line 2, column 3: expected a mapping or list of mappings for merging", no key path.
    with pytest.raises(ConfigError, match=r"^c\.yaml: o\.<<: line 2: a merge key takes a mapping or a list of them"):
        parse_yaml(f"o:\n  <<: {value}\n", "c.yaml")


def test_a_second_merge_key_never_writes_through_the_cli(tmp_path: Path) -> None:
    root = tmp_path / "uc"
    result = CliRunner().invoke(app, task(root, MERGED))
    assert result.exit_code == 2 and "CONFIG.outputs.out.<<: line 7" in result.stderr, result.output
    assert not (root / "data" / "out_second").exists() and not (root / "data" / "out_first").exists()


# --- 2. YAML 1.1 floats read as another number ---------------------------------------------------------------------

ACCEPTED = """CONFIG:
  inputs:
    src: {{format: parquet, path: data/in}}
  outputs:
    out: {{format: parquet, path: data/out}}
  transform: {{type: sql, query: "SELECT id, x FROM src"}}
  expectations:
    out:
      accepted_values: {{x: [{values}]}}
"""


@pytest.mark.parametrize(
    ("written", "read_as"),
    [
        ("1:30.5", "90.5"),
        ("-1:30.5", "-90.5"),
        ("1:30:00.5", "5400.5"),
        ("1_0.5", "10.5"),
        ("1__0.5", "10.5"),
        ("1_00.5", "100.5"),
        ("1000_000.5", "1000000.5"),
        ("1.5_0", "1.5"),
        ("1._5", "1.5"),
        ("685.230_15e+03", "685230.15"),
        ("!!float '1:30.5'", "90.5"),
    ],
)
def test_a_float_yaml_reads_as_another_number_is_refused(tmp_path: Path, written: str, read_as: str) -> None:
    # Was: accepted_values x: [90.5] and the like, the expectation passing on a number never written.
    path = write(tmp_path, ACCEPTED.format(values=f"2.5, {written}"))
    message = refused(path, "CONFIG.expectations.out.accepted_values.x[1]: line 9", f"reads it as {read_as}")
    assert "decimal" in message and "quote it" in message, message
    if "_" in written:
        assert "thousands" in message, message


@pytest.mark.parametrize(("written", "read_as"), [("1.0e+400", "inf"), ("-1.0e+400", "inf"), ("1.0e-400", "0.0")])
def test_a_float_past_what_a_float_holds_is_refused(tmp_path: Path, written: str, read_as: str) -> None:
    # Was: read as inf (then "is inf, which SQL has no literal for", naming a number never written) or as 0.0.
    path = write(tmp_path, ACCEPTED.format(values=written))
    refused(path, "CONFIG.expectations.out.accepted_values.x[0]: line 9", repr(written), f"read as {read_as}")


def test_the_float_rule_draws_the_line_where_the_text_shows_the_number() -> None:
    plain = "[1_000.5, -12_345.25, 1_000_000.0, .5, 5., 01.5, 1.0e+3, 4.9e-324, 0.0e-400, !!float 1e3, 1e3, -.5]"
    assert parse_yaml(f"a: {plain}\n", "c.yaml") == {
        "a": [1000.5, -12345.25, 1000000.0, 0.5, 5.0, 1.5, 1000.0, 5e-324, 0.0, 1000.0, "1e3", "-.5"]
    }
    special = parse_yaml("[.inf, -.Inf, .NaN]", "c.yaml")
    assert isinstance(special, list) and special[:2] == [math.inf, -math.inf] and math.isnan(special[2]), special
    # The same list with a group of 2 in the whole part is refused, naming its place.
    with pytest.raises(ConfigError, match=r"^c\.yaml: a\[12\]: line 1: the number '1_00\.5'"):
        parse_yaml(f"a: {plain[:-1]}, 1_00.5]\n", "c.yaml")


@pytest.mark.parametrize(
    ("written", "shown"),
    [
        ("!!float abc", "'abc' is tagged !!float but is not a number"),
        ("!!float ''", "'' is tagged !!float but is not a number"),
        ("!!int ''", "the integer '' is not written in plain decimal digits: it is not a YAML integer"),
        ("!!int _", "the integer '_' is not written in plain decimal digits: it is not a YAML integer"),
    ],
)
def test_a_tagged_number_that_is_no_number_is_an_error_not_a_traceback(written: str, shown: str) -> None:
    # Was: ValueError (float) or IndexError (int) from inside PyYAML, a traceback naming neither key nor line.
    with pytest.raises(ConfigError, match=r"^c\.yaml: a\.b: line 2: ") as err:
        parse_yaml(f"a:\n  b: {written}\n", "c.yaml")
    assert shown in str(err.value), str(err.value)


def test_a_base_60_float_never_runs_through_the_cli(tmp_path: Path) -> None:
    # Was: exit 0, the expectation x in (90.5) passing on a column holding 90.5.
    root = tmp_path / "uc"
    result = CliRunner().invoke(app, task(root, ACCEPTED.format(values="1:30.5, 1_0.5")))
    assert result.exit_code == 2, result.output
    assert "CONFIG.expectations.out.accepted_values.x[0]: line 9" in result.stderr, result.stderr
    assert not (root / "data" / "out").exists()


# --- 3. partition_by on an input -------------------------------------------------------------------------------------

INPUT = """CONFIG:
  inputs:
    src: {{format: parquet, path: data/in, {extra}}}
  outputs:
    out: {{format: parquet, path: data/out, partition_by: [id]}}
  transform: {{type: sql, query: "SELECT id, x FROM src"}}
"""


@pytest.mark.parametrize("extra", ["partition_by: [no_such_column]", "partition_by: day", "partition_by: []"])
def test_partition_by_on_an_input_is_refused(tmp_path: Path, extra: str) -> None:
    # Was: accepted, and every engine read the input whole, as if it were not there.
    message = refused(write(tmp_path, INPUT.format(extra=extra)), "CONFIG.inputs.src.partition_by", "only outputs")
    assert "leave it out" in message, message
    # An output's partition_by is how it is written: still taken.
    cfg = load_config(write(tmp_path, INPUT.format(extra="allow_empty: true")))
    assert (cfg.inputs["src"].partition_by, cfg.outputs["out"].partition_by) == ([], ["id"])


def test_partition_by_on_an_input_never_runs_through_the_cli(tmp_path: Path) -> None:
    root = tmp_path / "uc"
    result = CliRunner().invoke(app, task(root, INPUT.format(extra="partition_by: [no_such_column]")))
    assert result.exit_code == 2 and "CONFIG.inputs.src.partition_by" in result.stderr, result.output
    assert not (root / "data" / "out").exists()
