"""Helpers: a throw-away usecase_dir holding the example usecase, and small tasks written on the fly."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import yaml

from ubunye.lineage import RecordStore, RunRecord

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def example_usecase(tmp_path: Path) -> Path:
    """A copy of examples/shop in ``tmp_path/uc``; returns the usecase_dir."""
    usecase_dir = tmp_path / "uc"
    shutil.copytree(EXAMPLES / "shop", usecase_dir / "shop", ignore=shutil.ignore_patterns("__pycache__"))
    return usecase_dir


def write_task(
    usecase_dir: Path, task: str, config: dict[str, Any] | str, code: str | None = None, package: str = "daily"
) -> Path:
    """Create ``<usecase_dir>/shop/<package>/<task>`` with config.yaml (and transformations.py)."""
    task_dir = usecase_dir / "shop" / package / task
    task_dir.mkdir(parents=True, exist_ok=True)
    text = config if isinstance(config, str) else yaml.safe_dump(config, sort_keys=False)
    (task_dir / "config.yaml").write_text(text)
    if code is not None:
        (task_dir / "transformations.py").write_text(code)
    return task_dir


def records(usecase_dir: Path, task: str | None = None) -> list[RunRecord]:
    """Records of the shop/daily package (or one task), oldest first."""
    return RecordStore(usecase_dir).records("shop", "daily", task)


def last(usecase_dir: Path, task: str) -> RunRecord:
    """The newest record of a task, loaded from disk."""
    found = records(usecase_dir, task)
    assert found, f"no record for {task}"
    return found[-1]


def fingerprints(record: RunRecord) -> list[tuple[Any, ...]]:
    """What must match between two runs of the same data: name, rows, schema hash, data hash per dataset."""
    return [(d.name, d.row_count, d.schema_hash, d.data_hash) for d in record.inputs + record.outputs]
