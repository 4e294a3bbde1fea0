"""Characters that show as nothing though ``str.isprintable()`` is True are refused where invisible ones are (hunt 18).

Found: ``-dt "2026-12-01<U+3164>"`` (the Hangul filler, drawn blank) or a variation selector built an output
folder that looked exactly like ``2026-12-01``, while U+00A0, U+200B and U+2066 were refused as invisible. One rule
(:func:`ubunye.visible.invisible`) now serves a path, a template variable that builds one or goes into SQL, a
table name and a version; visible text in any script is kept.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.config import load_config
from ubunye.exceptions import ConfigError

#: Unicode's Default_Ignorable_Code_Point characters that pass ``str.isprintable()``, and blank-drawn ones.
SHOW_AS_NOTHING = [
    "\u3164",  # HANGUL FILLER
    "\u115f",  # HANGUL CHOSEONG FILLER
    "\u1160",  # HANGUL JUNGSEONG FILLER
    "\uffa0",  # HALFWIDTH HANGUL FILLER
    "\ufe00",  # VARIATION SELECTOR-1
    "\ufe0f",  # VARIATION SELECTOR-16
    "\u034f",  # COMBINING GRAPHEME JOINER
    "\u180b",  # MONGOLIAN FREE VARIATION SELECTOR ONE
    "\U000e0100",  # VARIATION SELECTOR-17
    "\u2800",  # BRAILLE PATTERN BLANK
]

#: Visible text: CJK, an accent written as a combining mark, Devanagari (with a virama), an emoji alone.
VISIBLE = ["\u65e5\u4ed8", "e\u0301t\u00e9", "\u0928\u092e\u0938\u094d\u0924\u0947", "\U0001f389", "\u00fcber"]

PATH_CONFIG = """CONFIG:
  outputs:
    out: {format: parquet, path: "out/{{ dt }}"}
"""


def _hex(char: str) -> str:
    return f"U+{ord(char):04X}"


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def refusal(path: Path, **variables: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(path, **variables)
    return str(err.value)


def test_the_characters_tested_pass_isprintable() -> None:
    # The premise: the old rule (str.isprintable) let each of these through.
    assert all(c.isprintable() for c in SHOW_AS_NOTHING + VISIBLE)
    assert not any(unicodedata.category(c) == "Zs" for c in SHOW_AS_NOTHING)


@pytest.mark.parametrize("char", SHOW_AS_NOTHING, ids=_hex)
def test_a_dt_that_shows_as_nothing_cannot_build_a_path(tmp_path: Path, char: str) -> None:
    path = write(tmp_path, PATH_CONFIG)
    message = refusal(path, dt=f"2026-12-01{char}")
    assert "template variable dt=" in message and "cannot build a path" in message, message
    assert f"contains {_hex(char)} (an invisible or formatting character)" in message, message


@pytest.mark.parametrize("char", SHOW_AS_NOTHING, ids=_hex)
def test_a_path_or_table_that_shows_as_nothing_is_refused(tmp_path: Path, char: str) -> None:
    path = write(tmp_path, PATH_CONFIG.replace("out/{{ dt }}", f"out/a{char}"))
    assert f"CONFIG.outputs.out.path: contains {_hex(char)}" in refusal(path)
    table = PATH_CONFIG.replace("out/{{ dt }}", "out/x") + f'  inputs:\n    src: {{table: "db.a{char}"}}\n'
    assert f"CONFIG.inputs.src.table: contains {_hex(char)}" in refusal(write(tmp_path, table))


@pytest.mark.parametrize("char", ["\u3164", "\ufe0f"], ids=_hex)
def test_a_value_going_into_sql_that_shows_as_nothing_is_refused(tmp_path: Path, char: str) -> None:
    query = PATH_CONFIG.replace("out/{{ dt }}", "out/x") + (
        "  inputs:\n    src: {format: parquet, path: data/src}\n"
        '  transform: {type: sql, query: "SELECT * FROM src WHERE id = {{ dtf }}"}\n'
    )
    message = refusal(write(tmp_path, query), dtf=f"2{char}")
    assert "cannot go into SQL" in message and f"contains {_hex(char)}" in message, message


@pytest.mark.parametrize("text", VISIBLE)
def test_visible_text_still_builds_a_path(tmp_path: Path, text: str) -> None:
    cfg = load_config(write(tmp_path, PATH_CONFIG), dt=text)
    assert cfg.outputs["out"].path == f"out/{text}"
    table = PATH_CONFIG + f'  inputs:\n    src: {{table: "db.{text}"}}\n'
    assert load_config(write(tmp_path, table), dt="x").inputs["src"].table == f"db.{text}"


@pytest.mark.parametrize("char", ["\u00a0", "\u200b", "\u2066", "\u200d"], ids=_hex)
def test_what_was_refused_is_still_refused(tmp_path: Path, char: str) -> None:
    message = refusal(write(tmp_path, PATH_CONFIG), dt=f"2026-12-01{char}")
    assert f"contains {_hex(char)}" in message, message


def test_the_cli_run_with_a_hangul_filler_in_dt_writes_nothing(tmp_path: Path) -> None:
    # The repro: -dt "2026-12-01<U+3164>" made data/out/2026-12-01ㅤ beside data/out/2026-12-01. Was: exit 0.
    task_dir = tmp_path / "uc" / "pk" / "t1"
    task_dir.mkdir(parents=True)
    src = tmp_path / "data" / "src"
    src.mkdir(parents=True)
    pd.DataFrame({"id": [1, 2]}).to_parquet(src / "part-0.parquet")
    (task_dir / "config.yaml").write_text(
        "CONFIG:\n  inputs: {src: {format: parquet, path: data/src}}\n"
        '  outputs: {out: {format: parquet, path: "data/out/{{ dt }}"}}\n'
    )
    (task_dir / "transformations.py").write_text(
        "from ubunye import Task\nclass T(Task):\n    def transform(self, s):\n        return {'out': s['src']}\n"
    )
    args = ["run", "-d", str(tmp_path), "-u", "uc", "-p", "pk", "-t", "t1", "--no-lineage"]
    result = CliRunner().invoke(app, [*args, "-dt", "2026-12-01\u3164"])
    assert result.exit_code == 2, result.output
    assert "U+3164" in result.output and "cannot build a path" in result.output, result.output
    assert not (tmp_path / "data" / "out").exists()
