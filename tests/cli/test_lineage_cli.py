"""``ubunye lineage list|show|trace|compare`` through Typer's CliRunner and the installed entry point."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.lineage.fixtures import RUNS, install
from tests.lineage.usecase import example_usecase
from ubunye.cli.main import app
from ubunye.exceptions import RecordError

runner = CliRunner()
UBUNYE = Path(sys.executable).with_name("ubunye")


@pytest.fixture
def uc(tmp_path):
    """A usecase dir holding every fixture record in the store."""
    install(tmp_path)
    return tmp_path


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


def one_error_line(result):
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in result.output, result.output
    return lines[0]


# --- list -----------------------------------------------------------------------------------------------------------
def test_list_every_run_newest_first_with_unique_short_ids(uc):
    result = invoke("lineage", "list", "-d", uc, "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len(rows) == len(RUNS)
    assert rows[0]["run_id"] == RUNS["customers-bug"] and rows[-1]["run_id"] == RUNS["revenue-v1"]
    shorts = [r["short_id"] for r in rows]
    assert len(set(shorts)) == len(shorts) and all(r["run_id"].startswith(r["short_id"]) for r in rows)
    v1 = rows[-1]
    assert (v1["record_version"], v1["hash_methods"], v1["outputs"]) == (1, ["none"], {"revenue": 4})
    table = invoke("lineage", "list", "-d", uc)
    assert table.exit_code == 0 and "shop/daily/durations" in table.stdout and "revenue=4" in table.stdout


def test_list_filters(uc):
    def ids(*args):
        result = invoke("lineage", "list", "-d", uc, "--json", *args)
        assert result.exit_code == 0, result.output
        return [r["run_id"] for r in json.loads(result.stdout)]

    assert ids("-t", "revenue", "-n", "2") == [RUNS["revenue-1202"], RUNS["revenue-same"]]
    assert ids("--status", "failed") == [RUNS["customers-bug"]]
    assert ids("-u", "shop", "-p", "daily", "-t", "durations") == [RUNS["durations-b"], RUNS["durations-a"]]


def test_a_filter_matching_no_task_names_the_tasks_that_have_runs(uc):
    # A typo in -t listed nothing and said "no runs under <store>", as if the store were empty.
    result = invoke("lineage", "list", "-d", uc, "-t", "revenu")
    assert result.exit_code == 0, result.output
    said = " ".join(result.stdout.split())
    assert said.startswith(f"no runs of */*/revenu under {uc / '.ubunye' / 'lineage'}; runs are recorded for: "), said
    assert "shop/daily/revenue" in said and "shop/daily/durations" in said
    result = invoke("lineage", "list", "-d", uc, "-t", "revenue", "--status", "interrupted")
    assert "no runs of */*/revenue under" in " ".join(result.stdout.split()) and "matching the filters" in result.stdout
    assert json.loads(invoke("lineage", "list", "-d", uc, "-t", "revenu", "--json").stdout) == []


def test_since_compares_instants_not_strings(uc):
    # the v1 record started at 2026-11-30T02:00:00+00:00; every other run on 2026-12-02
    def ids(since):
        result = invoke("lineage", "list", "-d", uc, "-t", "revenue", "--json", "--since", since)
        assert result.exit_code == 0, result.output
        return [r["run_id"] for r in json.loads(result.stdout)]

    assert RUNS["revenue-v1"] in ids("2026-11-30T02:00:00Z")
    assert RUNS["revenue-v1"] in ids("2026-11-30T04:00:00+02:00")  # the same instant
    assert RUNS["revenue-v1"] not in ids("2026-11-30T02:00:01+00:00")
    assert RUNS["revenue-v1"] not in ids("2026-11-30T03:00:00+00:00") and len(ids("2026-12-01")) == 4
    bad = invoke("lineage", "list", "-d", uc, "--since", "last tuesday")
    assert bad.exit_code == 2 and "--since" in bad.output


def test_list_shows_corrupt_and_newer_records_with_their_path(uc):
    folder = uc / ".ubunye/lineage/shop/daily/revenue"
    (folder / "broken.json").write_text('{"run_id": "broken", "sta')
    (folder / "future.json").write_text(json.dumps({"run_id": "future", "record_version": 9}))
    result = invoke("lineage", "list", "-d", uc, "--json")
    assert result.exit_code == 0
    problems = {r["run_id"]: r for r in json.loads(result.stdout) if r["status"] == "unreadable"}
    assert set(problems) == {"broken", "future"}
    assert str(folder / "broken.json") in problems["broken"]["problem"] and "corrupt" in problems["broken"]["problem"]
    assert "record_version 9 is newer" in problems["future"]["problem"]
    table = invoke("lineage", "list", "-d", uc, "-t", "revenue")
    assert table.exit_code == 0 and "unreadable" in table.stdout and "broken.json" in table.stdout
    shown = invoke("lineage", "show", "broken", "-d", uc)
    assert shown.exit_code == 2 and "corrupt run record" in one_error_line(shown)


def test_list_of_an_empty_or_missing_usecase_dir(tmp_path):
    assert invoke("lineage", "list", "-d", tmp_path).exit_code == 0
    result = invoke("lineage", "list", "-d", tmp_path / "nope")
    assert result.exit_code == 2 and "does not exist" in one_error_line(result)


# --- show and trace --------------------------------------------------------------------------------------------------
def test_trace_prints_everything_the_record_holds(uc):
    result = invoke("lineage", "trace", RUNS["customers-bug"][:20], "-d", uc)
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in (RUNS["customers-bug"], "failed", "ExpectationError", "expression", "FAILED", "code_hash",
                 "config_hash", "dt=2026-12-02", "package pyarrow", "python_version", "timings", "transform",
                 '"spent_cents"', "sha256:"):  # fmt: skip
        assert text in out, text
    unhashed = invoke("lineage", "trace", RUNS["durations-a"], "-d", uc).stdout
    assert "HashError" in unhashed and "since_midnight" in unhashed


def test_show_in_brief_and_json(uc):
    result = invoke("lineage", "show", "latest", "-d", uc, "-t", "revenue")
    assert result.exit_code == 0 and RUNS["revenue-1202"] in result.stdout and "expectations: 5 passed" in result.stdout
    data = json.loads(invoke("lineage", "show", RUNS["revenue-v1"], "-d", uc, "--json").stdout)
    assert data["record_version"] == 1 and data["path"].endswith(f"{RUNS['revenue-v1']}.json")
    assert json.loads(invoke("lineage", "trace", RUNS["revenue-a"], "-d", uc, "--json").stdout)["code_hash"]


def test_a_record_file_can_be_named_directly(uc):
    path = next((uc / ".ubunye/lineage/shop/daily/revenue").glob(f"{RUNS['revenue-a']}.json"))
    assert invoke("lineage", "show", path, "--json").exit_code == 0


# --- run references --------------------------------------------------------------------------------------------------
def test_prefix_resolution_and_ambiguity(uc):
    prefix = RUNS["revenue-old-env"][:18]
    assert sum(r.startswith(prefix) for r in RUNS.values()) == 1
    ok = invoke("lineage", "show", prefix, "-d", uc, "--json")
    assert json.loads(ok.stdout)["run_id"] == RUNS["revenue-old-env"]
    ambiguous = invoke("lineage", "show", "20261202", "-d", uc)
    line = one_error_line(ambiguous)
    assert ambiguous.exit_code == 2 and "is ambiguous: 10 runs match" in line and RUNS["revenue-v1"] not in line
    unknown = invoke("lineage", "show", "1999", "-d", uc)
    assert unknown.exit_code == 2 and "no run '1999'" in one_error_line(unknown)


def test_latest_within_a_task(uc):
    def run_id(ref, *args):
        result = invoke("lineage", "show", ref, "-d", uc, "--json", *args)
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["run_id"]

    assert run_id("latest", "-t", "revenue") == RUNS["revenue-1202"]
    assert run_id("latest~1", "-t", "revenue") == RUNS["revenue-same"]
    assert run_id("latest~4", "-u", "shop", "-p", "daily", "-t", "revenue") == RUNS["revenue-v1"]
    too_far = invoke("lineage", "show", "latest~5", "-d", uc, "-t", "revenue")
    assert too_far.exit_code == 2 and "only 5 run(s)" in one_error_line(too_far)
    many = invoke("lineage", "show", "latest", "-d", uc)
    assert many.exit_code == 2 and "needs one task" in one_error_line(many)


def test_debug_shows_the_traceback(uc):
    result = runner.invoke(app, ["--debug", "lineage", "show", "1999", "-d", str(uc)])
    assert result.exit_code != 0 and isinstance(result.exception, RecordError)


# --- compare ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("a", "b", "code", "first_line"),
    [
        ("revenue-old-env", "revenue-a", 0, "same data; what moved: environment (pandas 2.2.3 -> 3.1.1, pyarrow"),
        ("revenue-same", "revenue-1202", 1, "data changed: output revenue; what moved: "),
        ("revenue-v1", "revenue-a", 1, "data not comparable: output revenue (hash_method none -> rows-v1)"),
        ("durations-a", "durations-b", 1, "data unknown: output durations (no data hash)"),
    ],
)
def test_compare_exit_codes_and_summary_first(uc, a, b, code, first_line):
    result = invoke("lineage", "compare", RUNS[a], RUNS[b], "-d", uc)
    assert result.exit_code == code, result.output
    assert result.stdout.splitlines()[0].startswith(first_line)
    data = json.loads(invoke("lineage", "compare", RUNS[a], RUNS[b], "-d", uc, "--json").stdout)
    assert data["exit_code"] == code and data["summary"].startswith(first_line)


def test_compare_shows_the_evidence(uc):
    out = invoke("lineage", "compare", RUNS["customers-good"], RUNS["customers-bug"], "-d", uc).stdout
    assert "expectations whose outcome changed" in out and "expression" in out
    assert "code_hash" in out and "changed" in out and "timings (informative, never a change)" in out
    out = invoke("lineage", "compare", RUNS["durations-a"], RUNS["durations-b"], "-d", uc).stdout
    assert "HashError" in out and "unknown" in out
    assert "unchanged" not in out.split("what else")[0]  # never "unchanged" for two missing hashes


def test_compare_latest_with_prefixes_and_bad_input(uc):
    assert invoke("lineage", "compare", "latest~1", "latest", "-d", uc, "-t", "revenue").exit_code == 1
    assert invoke("lineage", "compare", "latest~3", "latest~2", "-d", uc, "-t", "revenue").exit_code == 0
    missing = invoke("lineage", "compare", "latest~1", "latest", "-d", uc / "absent", "-t", "revenue")
    assert missing.exit_code == 2 and "does not exist" in one_error_line(missing)
    ambiguous = invoke("lineage", "compare", "2026", "latest", "-d", uc, "-t", "revenue")
    assert ambiguous.exit_code == 2 and "ambiguous" in one_error_line(ambiguous)
    usage = invoke("lineage", "compare", "latest")
    assert usage.exit_code == 2 and "Missing argument" in usage.output


def test_help_texts_document_exit_codes_and_examples():
    for command in ("list", "show", "trace", "compare"):
        result = invoke("lineage", command, "--help")
        assert result.exit_code == 0 and "Example" in result.stdout and "--json" in result.stdout
    assert "Exit status: 0 same data" in invoke("lineage", "compare", "--help").stdout


def test_real_runs_then_compare(tmp_path):
    usecase_dir = example_usecase(tmp_path)
    for _ in range(2):
        ran = invoke(
            "run", "-d", usecase_dir, "-u", "shop", "-p", "daily", "-t", "orders", "-t", "revenue", "--lineage"
        )
        assert ran.exit_code == 0, ran.output
    result = invoke("lineage", "compare", "latest~1", "latest", "-d", usecase_dir, "-u", "shop", "-p", "daily",
                    "-t", "revenue")  # fmt: skip
    assert result.exit_code == 0 and result.stdout.startswith("same data"), result.output


# --- the installed entry point ----------------------------------------------------------------------------------------
def test_installed_entry_point(uc):
    assert UBUNYE.is_file(), f"no ubunye script at {UBUNYE}: pip install -e python"
    args = [str(UBUNYE), "lineage", "compare", RUNS["revenue-v1"], RUNS["revenue-a"], "-d", str(uc), "--json"]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["verdict"] == "not comparable"
    same = [str(UBUNYE), "lineage", "compare", "latest~3", "latest~2", "-d", str(uc), "-t", "revenue"]
    assert subprocess.run(same, capture_output=True, text=True, timeout=120, check=False).returncode == 0
    bad = subprocess.run([str(UBUNYE), "lineage", "show", "1999", "-d", str(uc)], capture_output=True, text=True,
                         timeout=120, check=False)  # fmt: skip
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "Traceback" not in bad.stderr


@pytest.mark.parametrize(
    "command",
    [
        ["lineage", "compare", "latest~3", "latest~2", "-t", "revenue"],  # same data: exit 0 when read whole
        ["lineage", "list"],
        ["lineage", "show", "latest", "-t", "revenue"],
        ["lineage", "compare", "latest~3", "latest~2", "-t", "revenue", "--json"],
    ],
)
def test_output_whose_reader_went_away_exits_141_not_1(uc, command):
    # `compare ... | head -1` exited 1 (rich's answer to a closed pipe), the status of "data changed": a CI gate
    # reading it through a pipe was told the data changed. The read end is closed before the command writes.
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([str(UBUNYE), *command, "-d", str(uc)], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120, check=False)  # fmt: skip
    finally:
        os.close(write_end)
    assert done.returncode == 141, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr


def test_a_broken_pipe_other_than_stdout_is_an_error_not_141(capfd):
    # Every BrokenPipeError exited 141 with nothing said: a connection to a record store (or any pipe of the
    # command's own) breaking mid-command looked like `| head` closing the output. Only stdout's reader going away
    # is 141; this pipe is the command's own, stdout (a file under capfd) is fine.
    import typer

    from ubunye.cli.errors import domain_errors

    @domain_errors
    def command() -> None:
        read_end, write_end = os.pipe()
        os.close(read_end)
        try:
            os.write(write_end, b"x")
        finally:
            os.close(write_end)

    with pytest.raises(typer.Exit) as stopped:
        command()
    err = capfd.readouterr().err
    assert stopped.value.exit_code == 2, err
    assert err.startswith("error: a pipe or connection closed while the command ran") and "Broken pipe" in err, err


# --- a store that cannot be listed, or a records URL with no path --------------------------------------------------

READERS = [
    ("lineage", "list"),
    ("lineage", "show", "latest"),
    ("lineage", "trace", "latest"),
    ("lineage", "compare", "latest", "latest~1"),
    ("diff", "latest", "latest~1"),
]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc: a folder tree whose listing fails")
@pytest.mark.parametrize("command", READERS, ids=[" ".join(c) for c in READERS])
def test_a_store_that_cannot_be_listed_is_one_error_line(uc, command):
    # /proc as the store: its process folders hold folders no one may list (map_files, fd of other processes) or
    # that raise EINVAL: an OSError from inside the listing, one error line; and its links (<pid>/root, the whole
    # filesystem) are not followed.
    result = invoke(*command, "-d", uc, "--records", "/proc")
    assert result.exit_code == 2, result.output
    line = one_error_line(result)
    assert line.startswith("error: cannot list the record store /proc: ") and "Error: " in line, line


@pytest.mark.parametrize("records", ["file://", "file://somewhere"])
def test_a_records_url_naming_no_folder_is_refused(tmp_path, monkeypatch, records):
    monkeypatch.chdir(tmp_path)  # taken as the cwd, the listing would succeed here (an empty store)
    result = invoke("lineage", "list", "-d", tmp_path, "--records", records)
    assert result.exit_code == 2, result.output
    assert one_error_line(result) == (
        f"error: records location {records!r} has no path: a file:// URL names an absolute folder of this machine, file:///srv/records"
    )
