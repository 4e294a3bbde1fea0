"""The code hash reads only what it can read safely, and a run's failure says what failed (hunt 18).

- A FIFO, or a link to ``/dev/zero``, named ``*.py`` in a task folder (or a subfolder) hung the run forever, or
  read until the machine ran out of memory: the code hash read every .py file with ``read_bytes()``.
- A link to nothing or a link loop named ``*.py`` made the run fail with "monitor lineage could not write the run
  record: FileNotFoundError: ...", though the record store was fine.
- A KeyError in the transform printed as the bare key: ``failed in transform: 'scr'``.

The runs that could hang or fill the memory run in a child process, with a timeout and a memory limit.
"""

from __future__ import annotations

import hashlib
import os
import resource
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.lineage.usecase import last, records, write_task
from ubunye.exceptions import TaskError
from ubunye.lineage.environment import MAX_CODE_BYTES, CodeFileError, code_hash
from ubunye.runner import run_task

CODE = """\
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {"out": pd.DataFrame({"id": [1, 2]})}
"""

CONFIG = {"CONFIG": {"outputs": {"out": {"format": "parquet", "path": "data/out"}}, "monitors": ["lineage"]}}

#: Runs one task in a child process and prints "TaskError" (or the error's type) and the message, or "success".
CHILD = """\
import sys
from ubunye.exceptions import TaskError
from ubunye.runner import run_task
try:
    run_task(sys.argv[1], engine="pandas")
except Exception as exc:
    print("TaskError" if isinstance(exc, TaskError) else type(exc).__name__)
    print(exc)
else:
    print("success")
"""

#: Enough for Python, pandas and pyarrow to load; reading /dev/zero whole is stopped at this.
CHILD_MEMORY = 3 * 1024**3


@pytest.fixture
def uc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("UBUNYE_RECORDS", raising=False)
    return tmp_path / "uc"


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (CHILD_MEMORY, CHILD_MEMORY))


def run_in_child(task_dir: Path) -> tuple[str, str]:
    """(error type or "success", message) of a run in a child process; a run that hangs fails the test."""
    env = {k: v for k, v in os.environ.items() if k != "UBUNYE_RECORDS"}
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(task_dir)],
            capture_output=True,
            text=True,
            timeout=90,
            env=env,
            preexec_fn=_capped,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the run of {task_dir} still hung after 90 s")
    assert done.returncode == 0, done.stderr[-3000:]
    kind, _, message = done.stdout.partition("\n")
    return kind, message.strip()


def expected_hash(task_dir: Path, files: dict[str, bytes]) -> str:
    """The code hash as docs/tasks-and-records.md states it, from the files' bytes as the test wrote them."""
    digest = hashlib.sha256(b"ubunye-code-v1\n")
    for rel in sorted(files):
        content = files[rel].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        digest.update(rel.encode() + b"\n" + str(len(content)).encode() + b"\n" + content)
    return "sha256:" + digest.hexdigest()


# --- a FIFO or a device named *.py ----------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["helper.py", "sub/helper.py"])
def test_a_fifo_named_py_is_refused_before_it_is_read(uc: Path, where: str) -> None:
    # Was: the run never started and never answered (open() of a FIFO waits for a writer).
    task_dir = write_task(uc, "t", CONFIG, CODE)
    fifo = task_dir / where
    fifo.parent.mkdir(exist_ok=True)
    os.mkfifo(fifo)
    kind, message = run_in_child(task_dir)
    assert kind == "TaskError", message
    assert message.startswith("task shop/daily/t did not start: monitor lineage could not hash the task's code: ")
    assert f"CodeFileError: {fifo}: a FIFO, not a regular file" in message, message
    assert not (uc / "data").exists()  # nothing was read or written


def test_a_link_to_dev_zero_named_py_is_refused_before_it_is_read(uc: Path) -> None:
    # Was: read /dev/zero until memory ran out (the OOM killer took 24 GB).
    task_dir = write_task(uc, "t", CONFIG, CODE)
    (task_dir / "helper.py").symlink_to("/dev/zero")
    kind, message = run_in_child(task_dir)
    assert kind == "TaskError", message
    assert f"{task_dir / 'helper.py'}: a character device, not a regular file" in message, message
    assert not (uc / "data").exists()


def test_a_py_file_larger_than_the_limit_is_refused(tmp_path: Path) -> None:
    # A sparse file: MAX_CODE_BYTES + 1 bytes on no disk. Was: read whole, and hashed.
    big = tmp_path / "big.py"
    with big.open("wb") as f:
        f.truncate(MAX_CODE_BYTES + 1)
    with pytest.raises(CodeFileError) as err:
        code_hash(tmp_path)
    assert str(err.value).startswith(f"{big}: {MAX_CODE_BYTES + 1} bytes: larger than {MAX_CODE_BYTES} bytes")


def test_a_file_at_the_limit_and_a_link_to_a_regular_file_are_still_hashed(tmp_path: Path) -> None:
    # What was hashed before is hashed the same: a link to a regular file is followed, a file at the limit read.
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    shared = tmp_path / "shared_helpers.py"
    shared.write_bytes(b"def f():\r\n    return 1\r\n")
    (task_dir / "helpers.py").symlink_to(shared)
    at_limit = b"#" * (MAX_CODE_BYTES - 1) + b"\n"
    (task_dir / "table.py").write_bytes(at_limit)
    files = {"helpers.py": shared.read_bytes(), "table.py": at_limit}
    assert code_hash(task_dir) == expected_hash(task_dir, files)


# --- a .py the code hash cannot open: the task folder's problem, not the record store's ----------------------------


def test_a_link_to_nothing_is_said_to_be_the_code_hash_s_problem(uc: Path) -> None:
    # Was: "monitor lineage could not write the run record: FileNotFoundError: [Errno 2] ...": the store was fine.
    task_dir = write_task(uc, "t", CONFIG, CODE)
    (task_dir / "helpers.py").symlink_to("/nonexistent/old_helpers.py")
    with pytest.raises(TaskError) as err:
        run_task(task_dir, engine="pandas")
    message = str(err.value)
    assert message.startswith("task shop/daily/t did not start: monitor lineage could not hash the task's code: ")
    assert "could not write the run record" not in message
    assert f"{task_dir / 'helpers.py'}: a link to nothing ('/nonexistent/old_helpers.py' does not exist)" in message
    assert isinstance(err.value.__cause__, CodeFileError)
    assert not (uc / "data").exists()


def test_a_link_loop_is_said_to_be_a_link_loop(uc: Path) -> None:
    task_dir = write_task(uc, "t", CONFIG, CODE)
    (task_dir / "a.py").symlink_to(task_dir / "b.py")
    (task_dir / "b.py").symlink_to(task_dir / "a.py")
    with pytest.raises(TaskError) as err:
        run_task(task_dir, engine="pandas")
    message = str(err.value)
    assert "could not hash the task's code" in message and "could not write the run record" not in message
    assert f"{task_dir / 'a.py'}: a link in a loop of links" in message, message


def test_a_store_that_cannot_be_written_is_still_said_so(uc: Path) -> None:
    # The other side of the label: the record store a file, not a folder: "could not write the run record".
    task_dir = write_task(uc, "t", CONFIG, CODE)
    (uc / ".ubunye").write_text("not a folder")
    with pytest.raises(TaskError) as err:
        run_task(task_dir, engine="pandas")
    assert "did not start: monitor lineage could not write the run record: " in str(err.value), str(err.value)


# --- a KeyError in the transform ------------------------------------------------------------------------------------

KEYED = """\
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {"out": sources[%r]}
"""


def _with_input(uc: Path, code: str) -> Path:
    src = uc / "data" / "src"
    src.mkdir(parents=True)
    pd.DataFrame({"id": [1, 2]}).to_parquet(src / "part-0.parquet")
    cfg = {"CONFIG": {**CONFIG["CONFIG"], "inputs": {"src": {"format": "parquet", "path": "data/src"}}}}
    return write_task(uc, "t", cfg, code)


def test_a_key_error_in_the_transform_names_its_type(uc: Path) -> None:
    # Was: "task shop/daily/t failed in transform: 'scr'": the key alone, nothing saying what was wrong.
    task_dir = _with_input(uc, KEYED % "scr")
    with pytest.raises(TaskError) as err:
        run_task(task_dir, engine="pandas")
    assert str(err.value).startswith("task shop/daily/t failed in transform: KeyError 'scr' (record: "), err.value
    error = last(uc, "t").error
    assert error is not None and (error.type, error.message, error.stage) == ("KeyError", "KeyError 'scr'", "transform")


def test_other_messages_are_kept_as_they_are(uc: Path) -> None:
    code = KEYED.replace('return {"out": sources[%r]}', "raise ValueError(%r)") % "the threshold is negative"
    task_dir = _with_input(uc, code)
    with pytest.raises(TaskError) as err:
        run_task(task_dir, engine="pandas")
    assert str(err.value).startswith("task shop/daily/t failed in transform: the threshold is negative (record: ")
    (record,) = records(uc, "t")
    assert record.error is not None and record.error.message == "the threshold is negative"
