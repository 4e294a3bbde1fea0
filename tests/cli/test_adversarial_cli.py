"""Faults an adversarial tester found, each driven through the real CLI on real files in ``tmp_path``.

Each test fails on the code before its fix: a template value escaping a ``file://`` output URL, ``latest`` naming
a run whose data is not on disk after two concurrent runs, and the silent passes listed with each test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app

runner = CliRunner()

#: A task writing ``n`` rows tagged ``tag`` (both params); with ``wait`` set it first says it started (a file)
#: and then waits for a second file: a run held in its transform while another run starts and ends.
CODE = """
import time
from pathlib import Path
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        wait = self.params.get("wait")
        if wait:
            Path(wait + ".started").write_text("")
            deadline = time.monotonic() + 60
            while not Path(wait + ".go").exists() and time.monotonic() < deadline:
                time.sleep(0.02)
        n = int(self.params["n"])
        return {"o": pd.DataFrame({"i": pd.array(range(n), dtype="int64"), "tag": [self.params["tag"]] * n})}
"""


def task(root: Path, config: str, name: str = "t") -> Path:
    """``root/u/p/<name>`` with ``config`` as its config.yaml and :data:`CODE`; returns ``root``."""
    folder = root / "u" / "p" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config)
    (folder / "transformations.py").write_text(CODE)
    return root


def invoke(*args: object) -> object:
    return runner.invoke(app, [str(a) for a in args])


def run(root: Path, *extra: object, name: str = "t") -> object:
    return invoke("run", "-d", root, "-u", "u", "-p", "p", "-t", name, *extra)


def visible(folder: Path) -> list[str]:
    """The names in ``folder``, without ubunye's hidden lock files beside an output."""
    return sorted(p.name for p in folder.iterdir() if not p.name.startswith("."))


def refused(result: object, *words: str) -> str:
    """The one-line error of a refused command, checked to name every one of ``words``."""
    assert result.exit_code == 2, result.output  # type: ignore[attr-defined]
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception  # type: ignore[attr-defined]
    message = result.stderr.strip()  # type: ignore[attr-defined]
    assert message.startswith("error: ") and "Traceback" not in message, message
    for word in words:
        assert word in message, (word, message)
    return message


# --- A2: a template value in a file:// URL -------------------------------------------------------------------


def url_task(tmp_path: Path) -> Path:
    data = tmp_path / "data"
    config = f"""ENGINE: {{backend: pandas}}
CONFIG:
  outputs:
    o: {{format: parquet, path: "file://{data.as_posix()}/{{{{ dt }}}}"}}
  transform: {{type: task, params: {{n: "3", tag: "x"}}}}
  monitors: [lineage]
"""
    return task(tmp_path / "uc", config)


def test_a_plain_date_still_builds_a_file_url(tmp_path: Path) -> None:
    root = url_task(tmp_path)
    assert run(root, "-dt", "2026-12-01").exit_code == 0
    assert visible(tmp_path / "data") == ["2026-12-01"]


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("%2e%2e%2f%2e%2e%2fvictim", "'%'"),  # decodes to ../../victim
        ("%2e%2e", "'%'"),
        ("#x", "'#'"),  # the URL's path would end at data/
        ("x?y", "'?'"),
    ],
)
def test_a_template_value_cannot_escape_a_file_url(tmp_path: Path, value: str, shown: str) -> None:
    root = url_task(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "important.txt").write_text("someone else's data")
    assert run(root, "-dt", "2026-12-01").exit_code == 0
    message = refused(run(root, "-dt", value), "CONFIG.outputs.o.path", f"dt={value!r}", shown)
    assert "URL" in message
    # Nothing moved: the victim and the day already written are where they were.
    assert (victim / "important.txt").read_text() == "someone else's data"
    assert visible(tmp_path / "data") == ["2026-12-01"]


@pytest.mark.parametrize("value", ["%2e%2e", "#x", "a?b"])
def test_in_a_local_path_those_characters_are_only_characters(tmp_path: Path, value: str) -> None:
    """A plain path is not decoded: '%', '#' and '?' are just part of the folder's name there."""
    config = """ENGINE: {backend: pandas}
CONFIG:
  outputs:
    o: {format: parquet, path: "data/{{ dt }}"}
  transform: {type: task, params: {n: "3", tag: "x"}}
"""
    root = task(tmp_path / "uc", config)
    assert run(root, "-dt", value).exit_code == 0
    assert visible(root / "data") == [value]


def test_an_env_value_decoding_to_dotdot_cannot_build_a_url(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = f"""ENGINE: {{backend: pandas}}
CONFIG:
  outputs:
    o: {{format: parquet, path: "file://{tmp_path.as_posix()}/data/{{{{ env.PART }}}}/o"}}
  transform: {{type: task, params: {{n: "3", tag: "x"}}}}
"""
    root = task(tmp_path / "uc", config)
    monkeypatch.setenv("PART", "a/%2E%2E/%2e%2e")
    message = refused(run(root), "CONFIG.outputs.o.path", "env.PART", "'..'")
    assert "%2E" not in message  # an env value is never quoted
    monkeypatch.setenv("PART", "a#b")
    refused(run(root), "CONFIG.outputs.o.path", "'#'")
    assert not (tmp_path / "data").exists()


# --- B10: values a record's names refuse do not build folders either ------------------------------------------


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (" ", "blank"),
        ("-", "starts with '-'"),
        ("-rf", "starts with '-'"),
        (" 2026-12-01", "space"),
        ("2026\u202e10-21", "U+202E"),  # shows reversed: a folder that looks like another date
        ("a\u200bb", "U+200B"),
    ],
)
def test_template_values_a_name_refuses_build_no_folder(tmp_path: Path, value: str, why: str) -> None:
    config = """ENGINE: {backend: pandas}
CONFIG:
  outputs:
    o: {format: parquet, path: "data/{{ dt }}"}
  transform: {type: task, params: {n: "3", tag: "x"}}
"""
    root = task(tmp_path / "uc", config)
    refused(run(root, "-dt", value), "CONFIG.outputs.o.path", "dt=", why)
    assert not (root / "data").exists()


# --- A7: latest is the run whose data is on disk -----------------------------------------------------------


def test_latest_is_the_run_that_committed_last(tmp_path: Path) -> None:
    """Run A starts first and is held in its transform while run B starts, writes and ends; then A writes. A's
    rows are on disk, so ``latest`` is A and ``latest~1`` is B (by start, it would be the other way round)."""
    hold = tmp_path / "hold"
    config = """ENGINE: {backend: pandas}
CONFIG:
  outputs:
    o: {format: parquet, path: data/o}
  transform: {type: task, params: {n: "{{ env.N }}", tag: "{{ env.TAG }}", wait: "{{ env.get('WAIT', '') }}"}}
  monitors: [lineage]
"""
    root = task(tmp_path / "uc", config)
    cli = [str(Path(sys.executable).parent / "ubunye")]  # the venv's console script
    env = {**os.environ, "N": "7", "TAG": "A", "WAIT": str(hold)}
    a = subprocess.Popen(
        [*cli, "run", "-d", str(root), "-u", "u", "-p", "p", "-t", "t"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not Path(str(hold) + ".started").exists():
            assert a.poll() is None and time.monotonic() < deadline, a.communicate()
            time.sleep(0.02)
        b_env = {**os.environ, "N": "3", "TAG": "B"}
        b = subprocess.run(
            [*cli, "run", "-d", str(root), "-u", "u", "-p", "p", "-t", "t"],
            env=b_env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert b.returncode == 0, b.stderr
    finally:
        Path(str(hold) + ".go").write_text("")
        out, err = a.communicate(timeout=120)
    assert a.returncode == 0, err

    def run_id(output: str) -> str:
        return output.split("(run ")[1].split(")")[0]

    a_id, b_id = run_id(out), run_id(b.stdout)
    assert a_id < b_id  # A started first: by start, B would be latest

    on_disk = invoke("hash", root / "data/o")
    assert on_disk.exit_code == 0, on_disk.output
    lines = dict(line.split(None, 1) for line in on_disk.stdout.splitlines() if line.startswith(("rows ", "data ")))
    disk = {"row_count": int(lines["rows"].replace(",", "")), "data_hash": lines["data"].split()[1]}

    def show(ref: str) -> dict[str, object]:
        shown = invoke("lineage", "show", ref, "-d", root, "-u", "u", "-p", "p", "-t", "t", "--json")
        assert shown.exit_code == 0, shown.output
        return json.loads(shown.stdout)

    latest, before = show("latest"), show("latest~1")
    assert (latest["run_id"], before["run_id"]) == (a_id, b_id)
    assert latest["outputs"][0]["row_count"] == 7 == disk["row_count"]  # type: ignore[index]
    assert latest["outputs"][0]["data_hash"] == disk["data_hash"]  # type: ignore[index]
    listed = invoke("lineage", "list", "-d", root, "-u", "u", "-p", "p", "-t", "t", "--json")
    assert [r["run_id"] for r in json.loads(listed.stdout)][:2] == [a_id, b_id]  # newest first


# --- B10: a mode naming no profile, a VERSION YAML read as a float, expectations that coerce or check nothing -----

SIMPLE = """ENGINE: {backend: pandas}
CONFIG:
  outputs:
    o: {format: parquet, path: data/o}
  transform: {type: task, params: {n: "3", tag: "x"}}
  monitors: [lineage]
"""


def test_a_mode_naming_no_declared_profile_is_refused(tmp_path: Path) -> None:
    profiles = "ENGINE:\n  backend: pandas\n  profiles:\n    prod: {backend: pandas}\n    dev: {backend: pandas}\n"
    root = task(tmp_path / "uc", SIMPLE.replace("ENGINE: {backend: pandas}\n", profiles))
    refused(run(root, "--mode", "prd"), "ENGINE.profiles", "'prd'", "dev, prod")
    assert not (root / "data").exists()
    assert run(root, "--mode", "prod").exit_code == 0


def test_a_mode_is_only_a_variable_when_no_profile_is_declared(tmp_path: Path) -> None:
    root = task(tmp_path / "uc", SIMPLE)
    assert run(root, "--mode", "anything").exit_code == 0


@pytest.mark.parametrize(("written", "shown"), [("1.10", "1.1"), (".nan", "nan"), ("2.0", "2.0")])
def test_a_version_yaml_reads_as_a_number_is_refused(tmp_path: Path, written: str, shown: str) -> None:
    root = task(tmp_path / "uc", f"VERSION: {written}\n" + SIMPLE)
    refused(run(root), "config.yaml: VERSION", shown, "quote it")


@pytest.mark.parametrize(("written", "recorded"), [('"1.10"', "1.10"), ("3", "3"), ("1.0.0", "1.0.0")])
def test_a_quoted_version_is_kept_as_written(tmp_path: Path, written: str, recorded: str) -> None:
    root = task(tmp_path / "uc", f"VERSION: {written}\n" + SIMPLE)
    assert run(root).exit_code == 0
    shown = invoke("lineage", "show", "latest", "-d", root, "-u", "u", "-p", "p", "-t", "t", "--json")
    assert json.loads(shown.stdout)["task_version"] == recorded


def with_rules(rules: str) -> str:
    return SIMPLE + f"  expectations:\n    o: {rules}\n"


@pytest.mark.parametrize(
    ("rules", "key"),
    [
        ("{unique: []}", "CONFIG.expectations.o.unique"),
        ("{not_null: []}", "CONFIG.expectations.o.not_null"),
        ("{accepted_values: {}}", "CONFIG.expectations.o.accepted_values"),
        ("{row_count: {}}", "CONFIG.expectations.o.row_count"),
        ("{}", "CONFIG.expectations.o"),
        ("{severity: warn}", "CONFIG.expectations.o"),
    ],
)
def test_a_rule_that_checks_nothing_is_refused(tmp_path: Path, rules: str, key: str) -> None:
    root = task(tmp_path / "uc", with_rules(rules))
    message = refused(run(root), key)
    assert "empty" in message or "no rules" in message
    assert not (root / "data").exists()


@pytest.mark.parametrize(
    ("rules", "words"),
    [
        ("{accepted_values: {i: [false, 1, 2]}}", ["accepted_values(i)", "False (boolean)", "integer"]),
        ("{accepted_values: {i: ['0', '1', '2']}}", ["accepted_values(i)", "'0' (string)", "integer"]),
        ("{accepted_values: {tag: [1]}}", ["accepted_values(tag)", "1 (integer)", "string"]),
        ("{expression: 'i + 1'}", ["expression", "not a boolean", "integer"]),
    ],
)
def test_an_expectation_that_would_coerce_fails_naming_rule_and_column(
    tmp_path: Path, rules: str, words: list[str]
) -> None:
    """The rows (i = 0, 1, 2; tag = x) would pass each rule if SQL converted the values: the run must fail."""
    root = task(tmp_path / "uc", with_rules(rules))
    result = run(root)
    assert result.exit_code == 2, result.output
    message = result.stderr.strip()
    assert "failed in expectations" in message and "Traceback" not in message, message
    for word in words:
        assert word in message, (word, message)


@pytest.mark.parametrize(
    "rules", ["{accepted_values: {i: [0, 1, 2], tag: [x]}}", "{expression: ['i >= 0', \"tag = 'x'\"]}"]
)
def test_expectations_of_the_right_type_still_pass(tmp_path: Path, rules: str) -> None:
    root = task(tmp_path / "uc", with_rules(rules))
    assert run(root).exit_code == 0


# --- C11: Delta inputs whose version cannot be read name the input and the table ------------------------------


def delta_input(tmp_path: Path, extra: str = "") -> Path:
    config = f"""ENGINE: {{backend: pandas}}
CONFIG:
  inputs:
    src: {{format: delta, path: data/in{extra}}}
  outputs:
    o: {{format: parquet, path: data/o}}
  transform: {{type: sql, query: "SELECT * FROM src"}}
"""
    return task(tmp_path / "uc", config)


def test_an_empty_delta_log_names_the_input_and_its_path(tmp_path: Path) -> None:
    root = delta_input(tmp_path)
    (root / "data/in/_delta_log").mkdir(parents=True)
    refused(run(root), "input 'src'", str(root / "data/in"))


def test_a_corrupt_delta_log_is_one_line_without_a_backtrace(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    root = delta_input(tmp_path)
    write_deltalake(str(root / "data/in"), pa.table({"a": [1]}))
    (root / "data/in/_delta_log/00000000000000000000.json").write_text("garbage\n")
    message = refused(run(root), "input 'src'", str(root / "data/in"))
    assert "<unknown>" not in message and " 0: " not in message, message


@pytest.mark.parametrize("version", ["99999999999999999999", "9223372036854775808"])
def test_a_delta_version_beyond_int64_is_a_config_error(tmp_path: Path, version: str) -> None:
    root = delta_input(tmp_path, f", version: {version}")
    refused(run(root), "CONFIG.inputs.src.version", "9223372036854775807", version)


def test_a_delta_version_beyond_the_latest_is_refused_at_once(tmp_path: Path) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    root = delta_input(tmp_path, ", version: 9223372036854775807")
    write_deltalake(str(root / "data/in"), pa.table({"a": [1]}))
    started = time.monotonic()
    refused(run(root), "input 'src'", "version 9223372036854775807 does not exist", "latest is 0")
    assert time.monotonic() - started < 30  # deltalake asked for it directly searches without end


# --- C12: names too long, counts too big --------------------------------------------------------------------


def test_an_output_path_too_long_is_an_error_naming_it(tmp_path: Path) -> None:
    long = "/".join(["y" * 200] * 30)  # longer than PATH_MAX: the first stat of it fails
    root = task(tmp_path / "uc", SIMPLE.replace("path: data/o", f"path: data/{long}"))
    refused(run(root), "CONFIG.outputs.o.path", long, "File name too long")
    assert not (root / "data").exists()


def test_hash_and_diff_of_a_path_too_long_name_it(tmp_path: Path) -> None:
    long = str(tmp_path / ("y" * 300))
    refused(invoke("hash", long), long, "File name too long")
    refused(invoke("diff", "--a", long, "--b", long), long, "File name too long")


def test_show_lines_is_bounded(tmp_path: Path) -> None:
    import pandas as pd

    data = tmp_path / "t.parquet"
    pd.DataFrame({"id": [1, 2]}).to_parquet(data)
    result = invoke("hash", data, "--show-lines", "99999999999999999999")
    assert result.exit_code == 2 and (result.exception is None or isinstance(result.exception, SystemExit))
    assert "--show-lines" in result.output and "1000000" in result.output
    assert invoke("hash", data, "--show-lines", "1000000").exit_code == 0


# --- C13: templates that would take gigabytes -----------------------------------------------------------------


@pytest.mark.parametrize(
    "template",
    [
        "{{ 'x' | center(1000000000) }}",
        "{{ '%0999999999d' | format(1) }}",
        "{{ '%0999999999d' % 1 }}",
        "{{ '%*d' % (999999999, 1) }}",
        "{{ '{:>999999999}'.format(1) }}",
        "{{ 'x'.ljust(1000000000) }}",
        "{{ 'x'.zfill(1000000000) }}",
        "{{ ('x\\n' * 100000) | indent(100000) | length }}",
        "{{ ('x' * 1000000) | replace('x', 'xxxxxxxxxx') | length }}",
        "{{ ('x' * 1000000).replace('x', 'xx') | length }}",
        "{{ (['a'] * 1000000) | join('x' * 1000) | length }}",
        "{{ 'x' | truncate(1000000000) }}",
        "{{ [1] | batch(1000000000, 0) | list | length }}",
    ],
)
def test_a_template_cannot_allocate_gigabytes(tmp_path: Path, template: str) -> None:
    config = SIMPLE.replace('tag: "x"', f'tag: "{template}"')
    root = task(tmp_path / "uc", config)
    refused(run(root), "config.yaml: CONFIG.transform.params.tag", "above 1000000 is refused")


def test_sizes_in_bounds_still_render(tmp_path: Path) -> None:
    template = (
        "{{ 'x' | center(5) }}|{{ '%03d' % 7 }}|{{ '%s-%s' | format(1, 2) }}|{{ '{:>3}'.format(1) }}"
        "|{{ 'ab' | replace('a', 'c') }}|{{ '%d' % 20261201 }}|{{ '{}'.format(20261201) }}"
    )  # a big number formatted is a value, not a width
    root = task(tmp_path / "uc", SIMPLE.replace('tag: "x"', f'tag: "{template}"'))
    assert run(root).exit_code == 0
    shown = invoke("lineage", "show", "latest", "-d", root, "-u", "u", "-p", "p", "-t", "t", "--json")
    assert (
        json.loads(shown.stdout)["config"]["CONFIG"]["transform"]["params"]["tag"]
        == "  x  |007|1-2|  1|cb|20261201|20261201"
    )


# --- Minor: diff of two tasks' runs that share no output --------------------------------------------------------


def test_diff_of_runs_sharing_no_output_says_so(tmp_path: Path) -> None:
    root = task(tmp_path / "uc", SIMPLE)
    task(root, SIMPLE.replace("o: {", "other: {").replace("data/o", "data/other"), name="t2")
    code = (root / "u/p/t/transformations.py").read_text().replace('{"o":', '{"other":')
    (root / "u/p/t2/transformations.py").write_text(code)
    first, second = run(root), run(root, name="t2")
    assert first.exit_code == 0 and second.exit_code == 0, second.output
    files = sorted((root / ".ubunye/lineage/u/p").glob("*/*.json"))
    assert len(files) == 2
    message = refused(invoke("diff", files[0], files[1]), "share no output", ": o;", ": other)")
    assert "hash differs" not in message


# --- a native backtrace is not a message --------------------------------------------------------------------------

FLOAT16 = """
import numpy as np
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {"o": pd.DataFrame({"h": np.array([1.5], dtype=np.float16)})}
"""


def test_a_delta_error_under_rust_backtrace_is_one_line_without_frames(tmp_path: Path) -> None:
    # deltalake appends its Rust backtrace to the message when RUST_BACKTRACE is set (read once per process, so a
    # process of its own): the CLI line and the record held pages of frames and build paths
    config = (
        "ENGINE: {backend: pandas}\nCONFIG:\n  outputs:\n    o: {format: delta, path: data/o}\n  monitors: [lineage]\n"
    )
    root = task(tmp_path / "uc", config)
    (root / "u" / "p" / "t" / "transformations.py").write_text(FLOAT16)
    cli = [str(Path(sys.executable).parent / "ubunye")]
    env = {**os.environ, "RUST_BACKTRACE": "1"}
    done = subprocess.run(
        [*cli, "run", "-d", str(root), "-u", "u", "-p", "p", "-t", "t"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr  # a failed run exits 2
    line = done.stderr.strip()
    assert "Float16" in line and "<unknown>" not in line and "Vectorcall" not in line, line
    (record,) = (root / ".ubunye" / "lineage" / "u" / "p" / "t").glob("*.json")
    message = json.loads(record.read_text())["error"]["message"]
    assert "Float16" in message and "\n" not in message and "<unknown>" not in message, message
