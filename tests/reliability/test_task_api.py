"""The Task API as user code uses it: what a transform returns, helper modules, threads loading tasks at once.

Everything runs on the pandas engine; each task is written on the fly into a throw-away usecase.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from tests.lineage.usecase import last, write_task
from ubunye.exceptions import TaskError
from ubunye.hashing import hash_frame
from ubunye.runner import run_task


def task(uc: Path, name: str, code: str, **config: Any) -> Path:
    cfg = {
        "CONFIG": {
            **config,
            "outputs": config.get("outputs") or {"out": {"format": "parquet", "path": f"data/{name}"}},
            "monitors": ["lineage"],
        }
    }
    return write_task(uc, name, cfg, code)


def test_an_output_key_that_is_not_a_string_is_named_not_a_type_error(tmp_path: Path) -> None:
    code = """
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {"out": pd.DataFrame({"a": [1]}), 1: pd.DataFrame({"a": [2]})}
"""
    uc = tmp_path / "uc"
    with pytest.raises(TaskError) as err:
        run_task(task(uc, "keys", code), engine="pandas")
    # Before: "'<' not supported between instances of 'int' and 'str'", from sorting the keys.
    assert "not configured ['int 1']" in str(err.value), err.value
    record = last(uc, "keys")
    assert record.status == "failed" and record.error is not None and record.error.type == "TaskError"
    assert not (uc / "data" / "keys").exists()


def test_a_helper_imported_inside_transform_is_explained(tmp_path: Path) -> None:
    code = """
import pandas as pd
from ubunye import Task

class T(Task):
    def transform(self, sources):
        import my_helper
        return {"out": pd.DataFrame({"a": [my_helper.X]})}
"""
    uc = tmp_path / "uc"
    folder = task(uc, "lazy", code)
    (folder / "my_helper.py").write_text("X = 1\n")
    with pytest.raises(TaskError) as err:
        run_task(folder, engine="pandas")
    text = str(err.value)
    assert "No module named 'my_helper'" in text
    assert "helper module of the task" in text and "import it at the top of transformations.py" in text, text
    assert last(uc, "lazy").status == "failed"


def test_a_missing_module_that_is_no_helper_is_left_as_it_is(tmp_path: Path) -> None:
    code = """
from ubunye import Task

class T(Task):
    def transform(self, sources):
        import no_such_module_anywhere
"""
    uc = tmp_path / "uc"
    with pytest.raises(TaskError) as err:
        run_task(task(uc, "missing", code), engine="pandas")
    assert "No module named 'no_such_module_anywhere'" in str(err.value)
    assert "helper module" not in str(err.value)
    assert last(uc, "missing").error.type == "ModuleNotFoundError"


# transformations.py of two tasks, each importing its own helper.py; the sleeps make the loads overlap: A's folder
# is on sys.path when B's is put before it.
SLOW_IMPORT = """
import time
time.sleep({sleep})
import helper
from ubunye import Task

class T(Task):
    def transform(self, sources):
        return {{"out": helper.frame()}}
"""
HELPER = """
import pandas as pd

def frame():
    return pd.DataFrame({{"who": ["{who}"]}})
"""


def test_two_threads_loading_two_tasks_each_get_their_own_helper(tmp_path: Path) -> None:
    uc = tmp_path / "uc"
    folders = {}
    for who, sleep in (("a", 0.3), ("b", 0.8)):
        folders[who] = task(uc, f"task_{who}", SLOW_IMPORT.format(sleep=sleep))
        (folders[who] / "helper.py").write_text(HELPER.format(who=who))
    got: dict[str, object] = {}

    def run(who: str) -> None:
        try:
            got[who] = run_task(folders[who], engine="pandas").outputs["out"]["who"].tolist()
        except Exception as exc:  # the assertion below shows it
            got[who] = exc

    threads = [threading.Thread(target=run, args=(who,)) for who in folders]
    threads[0].start()
    time.sleep(0.1)
    threads[1].start()
    for t in threads:
        t.join(60)
    # Before: {'a': ['b'], 'b': ['b']}: task a ran task b's helper.py, and its record said a's code.
    assert got == {"a": ["a"], "b": ["b"]}
    for who in folders:
        record = last(uc, f"task_{who}")
        assert record.status == "success"
        stored = pd.read_parquet(uc / "data" / f"task_{who}")
        assert stored["who"].tolist() == [who]


def test_a_transform_mutating_its_input_leaves_the_hash_of_what_was_read(tmp_path: Path) -> None:
    uc = tmp_path / "uc"
    src = pd.DataFrame({"a": pd.array([1, 2, 3], dtype="int64[pyarrow]")})
    (uc / "data" / "src").mkdir(parents=True)
    src.to_parquet(uc / "data" / "src" / "part-0.parquet")
    code = """
from ubunye import Task

class T(Task):
    def transform(self, sources):
        df = sources["src"]
        df["a"] = df["a"] * 10
        df.loc[df.index[0], "a"] = -1
        df["b"] = 1
        return {"out": df}
"""
    folder = task(uc, "mutates", code, inputs={"src": {"format": "parquet", "path": "data/src"}})
    result = run_task(folder, engine="pandas")
    record = last(uc, "mutates")
    (inp,) = record.inputs
    (out,) = record.outputs
    assert inp.row_count == 3 and inp.data_hash == hash_frame(src).data_hash
    assert (
        out.row_count == 3
        and out.data_hash != inp.data_hash
        and out.data_hash == hash_frame(result.outputs["out"]).data_hash
    )
    assert out.data_hash == hash_frame(pd.read_parquet(uc / "data" / "mutates")).data_hash
