"""``ubunye diff`` on Spark, attacked: a Delta table VACUUMed since the runs it time-travels to.

Spark reads lazily: the missing files show up only when the filtered rows are collected, as a py4j error whose
own first line says nothing ("An error occurred while calling o101.getResult"); it escaped as a traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.cli.test_diff_adversarial import delta_runs
from ubunye.cli.diff import diff_runs
from ubunye.lineage.diff import DiffError


def test_vacuumed_delta_on_spark_is_a_clear_error_not_a_py4j_traceback(spark: Any, tmp_path: Path) -> None:
    a, b = delta_runs(tmp_path)
    with pytest.raises(DiffError) as err:
        diff_runs(a, b, engine="spark")
    text = str(err.value)
    assert text.startswith("run A (r0): cannot read o of run r0 (the data it recorded is gone): ")
    assert "FileNotFoundException" in text and "does not exist" in text and "\n" not in text
