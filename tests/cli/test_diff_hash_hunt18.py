"""``ubunye diff``, ``ubunye hash`` and ``lineage compare`` on what a run's record says: a csv output written with
``options: {sep: ";"}`` is read back with them (diff said "overwritten since"; ``ubunye hash`` could not pass the
separator), ``--key`` of a diff of two runs is checked as ``--a``/``--b`` check it (an unknown or repeated column
was "same data"), and compare's headline names an input whose record is damaged beside equal outputs.

Every run is a real pandas run (``ubunye.run_task``); records are edited by hand where a test says so.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tests.optional import needs_polars
from ubunye import run_task
from ubunye.cli.main import app
from ubunye.hashing import hash_frame
from ubunye.lineage.compare import compare_records
from ubunye.lineage.record import RunRecord

runner = CliRunner()

CODE = """import pandas as pd
from ubunye import Task
class T(Task):
    def transform(self, sources):
        {body}
"""

#: A csv output whose rows change with dt (column b), written with a separator other than a comma.
SEP = """ENGINE: {backend: pandas}
CONFIG:
  outputs:
    out: {format: csv, path: "data/out_{{ dt }}", options: {sep: ";"}}
  monitors: [lineage]
"""
SEP_BODY = 'return {"out": pd.DataFrame({"a": [1, 2], "b": ["x", self.dt]})}'


def _task(uc: Path, config: str, body: str) -> Path:
    folder = uc / "u" / "p" / "t"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.yaml").write_text(config)
    (folder / "transformations.py").write_text(CODE.format(body=body))
    return folder


def _runs(uc: Path, config: str, body: str, dts: tuple[str, ...] = ("a", "b")) -> list[Path]:
    """The task run once per dt; each run's record file."""
    folder = _task(uc, config, body)
    paths = []
    for dt in dts:
        result = run_task(folder, dt=dt, engine="pandas")
        assert result.status == "success", result.error
        assert isinstance(result.record_path, Path)
        paths.append(result.record_path)
    return paths


def _cli(uc: Path, *argv: str) -> object:
    where = ["-d", str(uc), "-u", "u", "-p", "p", "-t", "t"]
    return runner.invoke(app, [argv[0], *argv[1:], *where])


def _edit(path: Path, change: object) -> None:
    raw = json.loads(path.read_text())
    change(raw)
    path.write_text(json.dumps(raw))


# --- 1. a csv written with options is read with them ----------------------------------------------------------------


def test_a_csv_output_written_with_a_separator_diffs_with_it_not_as_overwritten(tmp_path):
    """diff re-read each run's csv without its ``sep``, got one column "a;b" and said the data "is no longer what
    the run recorded (it was overwritten since)", exit 2."""
    uc = tmp_path / "uc"
    _runs(uc, SEP, SEP_BODY)
    result = _cli(uc, "diff", "latest~1", "latest", "--json")
    assert result.exit_code == 1, result.output
    report = json.loads(result.stdout)
    # The rows the two runs wrote, as a reader given the separator reads them: b is "a" in A and "b" in B.
    only_a, only_b = report["diff"]["only_a"]["rows"], report["diff"]["only_b"]["rows"]
    assert (only_a, only_b) == ([{"a": "2", "b": '"a"'}], [{"a": "2", "b": '"b"'}])


def test_ubunye_hash_takes_the_separator_and_gives_the_records_hash(tmp_path):
    """``ubunye hash -f csv`` could not be given the separator: the check the docs point to gave another hash."""
    uc = tmp_path / "uc"
    _, path_b = _runs(uc, SEP, SEP_BODY)
    recorded = RunRecord.from_dict(json.loads(path_b.read_text())).outputs[0]
    expected = hash_frame(pd.DataFrame({"a": [1, 2], "b": ["x", "b"]})).data_hash  # the frame B wrote
    assert recorded.data_hash == expected
    where = str(uc / "data" / "out_b")
    plain = runner.invoke(app, ["hash", "-f", "csv", where, "--json"])
    assert plain.exit_code == 0 and json.loads(plain.stdout)["data_hash"] != expected  # one column "a;b"
    given = runner.invoke(app, ["hash", "-f", "csv", "--option", "sep=;", where, "--json"])
    assert given.exit_code == 0, given.output
    out = json.loads(given.stdout)
    assert (out["data_hash"], out["options"]) == (expected, {"sep": ";"})


@needs_polars
def test_ubunye_hash_passes_the_separator_to_polars_too(tmp_path):
    uc = tmp_path / "uc"
    _, path_b = _runs(uc, SEP, SEP_BODY)
    recorded = json.loads(path_b.read_text())["outputs"][0]["data_hash"]
    argv = ["hash", "-f", "csv", "-e", "polars", "--option", "sep=;", str(uc / "data" / "out_b"), "--json"]
    result = runner.invoke(app, argv)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["data_hash"] == recorded


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--option", "sep"], "'sep' is not KEY=VALUE"),
        (["--option", "=;"], "'=;' is not KEY=VALUE"),
        (["--option", "sep=;", "--option", "sep=,"], "'sep' is given twice"),
    ],
)
def test_ubunye_hash_refuses_an_option_that_is_not_key_value(tmp_path, argv, words):
    (tmp_path / "t.csv").write_text("a;b\n1;2\n")
    result = runner.invoke(app, ["hash", str(tmp_path / "t.csv"), *argv])
    assert result.exit_code == 2 and words in result.output, result.output


def test_ubunye_hash_names_an_option_the_engine_would_ignore(tmp_path):
    (tmp_path / "t.csv").write_text("a,b\n1,2\n")
    result = runner.invoke(app, ["hash", str(tmp_path / "t.csv"), "--option", "header=false"])
    assert result.exit_code == 2, result.output
    assert "the pandas engine does not apply option header='false' to csv" in result.stderr


def test_trace_advice_for_an_output_not_known_written_carries_the_separator(tmp_path):
    """``lineage trace`` told to check an output of unknown fate with ``ubunye hash -f csv <location>``: without
    the separator that command cannot give the record's hash. The command it prints now does."""
    uc = tmp_path / "uc"
    _, path_b = _runs(uc, SEP, SEP_BODY)

    def unknown(raw: dict) -> None:  # as a run killed while committing leaves its checkpoint
        raw["status"], raw["outputs"][0]["written"] = "failed", None

    _edit(path_b, unknown)
    trace = runner.invoke(app, ["lineage", "trace", str(path_b)], env={"COLUMNS": "1000"})
    assert trace.exit_code == 0, trace.output
    advice = next(x for x in trace.stdout.splitlines() if "compare its data_hash with: " in x)
    command = advice.split("compare its data_hash with: ", 1)[1].rstrip().rstrip(")")
    argv = shlex.split(command)
    assert argv[:2] == ["ubunye", "hash"] and "--option" in argv, command
    checked = runner.invoke(app, [*argv[1:], "--json"])
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout)["data_hash"] == json.loads(path_b.read_text())["outputs"][0]["data_hash"]


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda raw: raw.update(config=None), "its record holds no config"),
        (
            lambda raw: raw["config"]["CONFIG"]["outputs"]["out"]["options"].update(sep="***"),
            "its record's config masks CONFIG.outputs.out.options.sep as a secret",
        ),
    ],
)
def test_options_a_record_does_not_hold_are_named_not_only_overwritten(tmp_path, edit, words):
    """Without the options (a record holding no config, or one masking the value), the rows read need not be the
    run's: the error says so beside "overwritten", never "overwritten" alone."""
    uc = tmp_path / "uc"
    path_a, _ = _runs(uc, SEP, SEP_BODY)
    _edit(path_a, edit)
    result = _cli(uc, "diff", "latest~1", "latest")
    assert result.exit_code == 2, result.output
    assert f"or the run read csv with options not known here: {words}" in result.stderr, result.stderr


def test_a_parquet_output_with_a_writer_option_still_diffs(tmp_path):
    """A parquet output's ``compression`` is a writer option: pandas' reader refuses it, so it is not passed."""
    uc = tmp_path / "uc"
    config = SEP.replace('format: csv, path: "data/out_{{ dt }}", options: {sep: ";"}',
                         'format: parquet, path: "data/out_{{ dt }}", options: {compression: zstd}')  # fmt: skip
    _runs(uc, config, SEP_BODY)
    result = _cli(uc, "diff", "latest~1", "latest", "--json")
    assert result.exit_code == 1, result.output
    assert json.loads(result.stdout)["diff"]["only_b"]["rows"] == [{"a": "2", "b": '"b"'}]


# --- 2. --key of two runs is checked as --a/--b check it ------------------------------------------------------------


SAME = SEP.replace(
    'format: csv, path: "data/out_{{ dt }}", options: {sep: ";"}', 'format: parquet, path: "data/{{ dt }}"'
)
SAME_BODY = 'return {"out": pd.DataFrame({"id": [1, 2], "v": [3, 4]})}'


@pytest.mark.parametrize(
    ("key", "words"),
    [
        ("nosuch", "profile-v1: key column 'nosuch' is not a column of the table (columns: 'id', 'v')"),
        ("id,id", "profile-v1: key column 'id' is repeated in the key ['id', 'id']"),
    ],
)
def test_a_key_no_column_of_the_runs_or_repeated_is_refused_even_when_the_hashes_are_equal(tmp_path, key, words):
    """Equal data hashes answered "same data" (exit 0) whatever --key said; --a/--b refused the same key."""
    uc = tmp_path / "uc"
    path_a, _ = _runs(uc, SAME, SAME_BODY)
    run_a = RunRecord.from_dict(json.loads(path_a.read_text())).run_id
    result = _cli(uc, "diff", "latest~1", "latest", "--key", key)
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.startswith(f"error: run A ({run_a}): out of run {run_a} (as its run recorded it): {words}")
    tables = runner.invoke(app, ["diff", "--a", str(uc / "data" / "a"), "--b", str(uc / "data" / "b"),
                                 "--format-a", "parquet", "--format-b", "parquet", "--key", key])  # fmt: skip
    assert tables.exit_code == 2 and words in tables.stderr, tables.output  # the same refusal, same words
    fine = _cli(uc, "diff", "latest~1", "latest", "--key", "id")
    assert fine.exit_code == 0 and "same data" in fine.stdout, fine.output


def test_a_key_no_column_of_the_runs_is_refused_when_the_hashes_differ(tmp_path):
    uc = tmp_path / "uc"
    _runs(uc, SAME, SEP_BODY)
    result = _cli(uc, "diff", "latest~1", "latest", "--key", "nosuch")
    assert result.exit_code == 2 and "key column 'nosuch' is not a column" in result.stderr, result.output


# --- 3. compare names an input whose record is damaged beside equal outputs -----------------------------------------


INPUT = """ENGINE: {backend: pandas}
CONFIG:
  inputs:
    src: {format: parquet, path: in}
  outputs:
    out: {format: parquet, path: "out/{{ dt }}"}
  monitors: [lineage]
"""


def test_compare_names_an_input_whose_record_is_damaged_beside_equal_outputs(tmp_path):
    """Run B's input data_hash edited (well formed, not the hash of its own buckets): the table said "unknown"
    for it but the headline was "same data" alone, naming damaged inputs only when the data changed."""
    uc = tmp_path / "uc"
    (uc / "in").mkdir(parents=True)
    pd.DataFrame({"id": [1, 2], "v": [3, 4]}).to_parquet(uc / "in" / "part-0.parquet")
    path_a, path_b = _runs(uc, INPUT, 'return {"out": sources["src"]}')
    _edit(path_b, lambda raw: raw["inputs"][0].update(data_hash="sha256:" + "0" * 64))
    a, b = (RunRecord.from_dict(json.loads(p.read_text())) for p in (path_a, path_b))
    c = compare_records(a, b)
    assert (c.verdict, c.outputs[0].data, c.inputs[0].data) == ("same", "unchanged", "unknown")
    why = "the record of run B contradicts itself: its data_hash is not the hash of its schema, row count and buckets"
    assert c.summary.startswith(f"same data; input records damaged: input src ({why})"), c.summary
    result = runner.invoke(app, ["lineage", "compare", str(path_a), str(path_b)], env={"COLUMNS": "1000"})
    assert result.stdout.splitlines()[0].startswith(f"same data; input records damaged: input src ({why})")
    assert result.exit_code == 0, result.output  # the outputs' data decide the exit status
    # An input merely not hashed (hash_inputs off) is no damage: "same data", as before.
    _edit(path_b, lambda raw: raw["inputs"][0].update(data_hash=None, hash_error=None))
    plain = compare_records(a, RunRecord.from_dict(json.loads(path_b.read_text())))
    assert plain.summary.startswith("same data") and "damaged" not in plain.summary, plain.summary


@needs_polars
def test_trace_advice_names_the_engine_of_the_run(tmp_path):
    """The advice named no engine: ``ubunye hash`` reads with pandas, whose csv inference is not Spark's or
    polars' (a Spark csv's ``id`` reads as int64 there: another hash though the data landed)."""
    uc = tmp_path / "uc"
    folder = _task(uc, SEP.replace("backend: pandas", "backend: polars"), "")
    (folder / "transformations.py").write_text(
        "import polars as pl\nfrom ubunye import Task\nclass T(Task):\n    def transform(self, sources):\n"
        "        return {'out': pl.DataFrame({'a': [1, 2], 'b': ['x', self.dt]})}\n"
    )
    result = run_task(folder, dt="a", engine="polars")
    assert result.status == "success", result.error
    path = result.record_path
    assert isinstance(path, Path)

    def unknown(raw: dict) -> None:  # as a run killed while committing leaves its checkpoint
        raw["status"], raw["outputs"][0]["written"] = "failed", None

    _edit(path, unknown)
    trace = runner.invoke(app, ["lineage", "trace", str(path)], env={"COLUMNS": "1000"})
    assert trace.exit_code == 0, trace.output
    advice = next(x for x in trace.stdout.splitlines() if "compare its data_hash with: " in x)
    argv = shlex.split(advice.split("compare its data_hash with: ", 1)[1].rstrip().rstrip(")"))
    assert argv[argv.index("--engine") + 1] == "polars", argv
    checked = runner.invoke(app, [*argv[1:], "--json"])
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout)["data_hash"] == json.loads(path.read_text())["outputs"][0]["data_hash"]


def test_ubunye_hash_restores_an_output_cut_short_in_its_swap(tmp_path):
    """A run killed between the two renames of the fallback swap leaves no folder and the previous output in its
    ``-old-`` sibling. Every reader restores it first; ``ubunye hash`` (the check trace advises) said "no such file
    or folder"."""
    folder = tmp_path / "data" / "o"
    folder.mkdir(parents=True)
    frame = pd.DataFrame({"a": [1, 2, 3]})
    frame.to_parquet(folder / "part-0.parquet")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    (tmp_path / "data" / "o").rename(tmp_path / "data" / ".o.ubunye-old-00000000000000000001-1-ab")
    checked = runner.invoke(app, ["hash", "-f", "parquet", str(folder), "--json"])
    assert checked.exit_code == 0, checked.output
    assert json.loads(checked.stdout)["data_hash"] == hash_frame(frame).data_hash
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    assert not list((tmp_path / "data").glob(".o.ubunye-old-*"))


def test_trace_advice_for_a_spark_run_keeps_every_option_spark_read_with(tmp_path):
    """The advice kept only the options pandas applies (``sep``) while naming ``--engine spark``: Spark's csv
    reader defaults to ``header=true``, so a run written with ``header: false`` was checked with another header."""
    uc = tmp_path / "uc"
    _, path_b = _runs(uc, SEP, SEP_BODY)

    def spark_run(raw: dict) -> None:  # the record a Spark run of this config leaves, its commit not known
        raw["status"], raw["outputs"][0]["written"], raw["backend"] = "failed", None, "spark"
        raw["config"]["CONFIG"]["outputs"]["out"]["options"]["header"] = "false"

    _edit(path_b, spark_run)
    trace = runner.invoke(app, ["lineage", "trace", str(path_b)], env={"COLUMNS": "1000"})
    assert trace.exit_code == 0, trace.output
    advice = next(x for x in trace.stdout.splitlines() if "compare its data_hash with: " in x)
    argv = shlex.split(advice.split("compare its data_hash with: ", 1)[1].rstrip().rstrip(")"))
    given = [argv[i + 1] for i, a in enumerate(argv) if a == "--option"]
    assert argv[argv.index("--engine") + 1] == "spark" and sorted(given) == ["header=false", "sep=;"], argv
