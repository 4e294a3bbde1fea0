"""Expectation faults found by hunt 18, on the engines without a JVM (the Spark side: tests/spark/test_spark_hunt18.py).

- A task's failing ``expression`` rules were reported as "outputs.o expression: observed 1; outputs.o expression:
  observed 2": which expression failed was not said.
"""

from __future__ import annotations

import pytest

from tests.lineage.usecase import write_task
from tests.optional import LOCAL_ENGINES
from ubunye.exceptions import ExpectationError
from ubunye.runner import run_task

ROWS = [(1, 5), (2, -1), (3, 0)]


@pytest.mark.parametrize("engine", LOCAL_ENGINES)
def test_each_failing_expression_is_named_in_the_error(tmp_path, engine) -> None:
    values = ", ".join(f"({a}, {b})" for a, b in ROWS)
    # the second spans lines as a YAML block would write it; the description is still one line
    expressions = ["a > 1", "b > 0\n  AND a > 0"]
    cfg = {
        "MODEL": "etl",
        "ENGINE": {"backend": engine},
        "CONFIG": {
            "outputs": {"o": {"format": "parquet", "path": "data/o"}},
            "transform": {"type": "sql", "query": f"SELECT * FROM (VALUES {values}) AS t(a, b)"},
            "expectations": {"o": {"expression": expressions}},
        },
    }
    task_dir = write_task(tmp_path, "named", cfg)
    with pytest.raises(ExpectationError) as raised:
        run_task(task_dir, lineage=False)
    message = str(raised.value)
    # the rows each expression refuses, counted here from the rows themselves
    failing = {
        "a > 1": sum(not a > 1 for a, _ in ROWS),
        "b > 0 AND a > 0": sum(not (b > 0 and a > 0) for a, b in ROWS),
    }
    for shown, count in failing.items():
        assert f"outputs.o expression({shown}): observed {count}" in message, message
    assert "\n" not in message, message
