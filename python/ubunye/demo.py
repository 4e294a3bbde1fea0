"""``python -m ubunye.demo``: run the example usecase end to end (pandas engine) and show its records.

The examples (examples/shop/daily: orders, revenue, customers) are copied into a temporary folder, run
there like ``ubunye run -d <tmp> -u shop -p daily -t orders -t revenue -t customers -dt 2026-12-01``, and
the record of each run is printed. Then the story the records are for: one order's amount is corrected in the
generator, orders and revenue run again, and ``ubunye lineage compare`` says what changed and why, and
``ubunye diff`` which row.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

from ubunye.lineage.record import RunRecord
from ubunye.lineage.store import RecordStore
from ubunye.runner import run_pipeline

TASKS = ("orders", "revenue", "customers")


def examples_dir() -> Path:
    """The examples folder of the source tree (examples/ beside python/)."""
    here = Path(str(resources.files("ubunye"))).resolve()
    for candidate in (here.parent.parent / "examples", Path.cwd() / "examples"):
        if (candidate / "shop").is_dir():
            return candidate
    msg = "examples/ not found: run the demo from the source tree"
    raise SystemExit(msg)


def _short(value: str | None) -> str:
    return "-" if value is None else (value[:19] + "…" if value.startswith("sha256:") else value)


def render(record: RunRecord) -> str:
    """A run record in a few readable lines."""
    lines = [
        f"run {record.run_id}  {record.usecase}/{record.package}/{record.task}  {record.status}"
        f"  backend={record.backend}  {record.duration_seconds:.2f}s",
        f"  dt={record.template_vars.get('dt')}  code={_short(record.code_hash)}"
        f"  env={_short(record.environment_hash)}",
    ]
    for side, items in (("in ", record.inputs), ("out", record.outputs)):
        for d in items:
            rows = "-" if d.row_count is None else d.row_count
            lines.append(f"  {side} {d.name:<10} {d.format:<8} rows={rows:<6} data={_short(d.data_hash)}  {d.location}")
            if d.hash_error:
                lines.append(f"      hash_error: {d.hash_error}")
    for e in record.expectations:
        col = f"({e.column})" if e.column else ""
        lines.append(f"  expect {e.target} {e.rule}{col}: {'ok' if e.passed else 'FAILED'} observed={e.observed}")
    steps = ", ".join(f"{t.stage}:{t.name}={t.seconds:.3f}s" for t in record.timings)
    lines.append(f"  timings: {steps}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the demo; returns the exit code."""
    argv = sys.argv[1:] if argv is None else argv
    dt = argv[0] if argv else "2026-12-01"
    with tempfile.TemporaryDirectory(prefix="ubunye-demo-") as tmp:
        usecase_dir = Path(tmp)
        shutil.copytree(examples_dir() / "shop", usecase_dir / "shop", ignore=shutil.ignore_patterns("__pycache__"))
        print(f"ubunye demo: running shop/daily {', '.join(TASKS)} for dt={dt} in {usecase_dir}\n")
        run_pipeline(
            usecase_dir, "shop", "daily", list(TASKS), dt=dt, engine="pandas", lineage=True, entry_point="demo"
        )
        store = RecordStore(usecase_dir)
        for entry in store.entries("shop", "daily"):
            print(render(entry.record) if entry.record else f"{entry.path}: {entry.problem}")
            print()
        last = store.records("shop", "daily", "revenue")[-1]
        path = store.path_of(last)
        assert isinstance(path, Path)  # the usecase's own store, on disk
        print(f"record file: {path.relative_to(usecase_dir)}")
        print(path.read_text()[:1200] + "  ...")
        _story(usecase_dir, dt)
    return 0


_CORRECTION = """

def _corrected(amounts):
    amounts[7] += 100  # order 8 was undercharged by a dollar
    return amounts
"""


def _story(usecase_dir: Path, dt: str) -> None:
    """A second run after a change, its compare verdict, and the diff of the changed rows."""
    from ubunye.cli.diff import diff_runs, render_diff
    from ubunye.cli.render import render_comparison
    from ubunye.lineage.compare import compare_records

    generator = usecase_dir / "shop" / "daily" / "orders" / "generator.py"
    plain = '"amount_cents": rng.integers(199, 25_000, rows).astype("int64"),'
    fixed = '"amount_cents": _corrected(rng.integers(199, 25_000, rows).astype("int64")),'
    generator.write_text(generator.read_text().replace(plain, fixed) + _CORRECTION)
    print("\n--- the story: order 8's amount is corrected in orders/generator.py; orders and revenue run again\n")
    run_pipeline(usecase_dir, "shop", "daily", ["orders", "revenue"], dt=dt, engine="pandas", entry_point="demo")
    store = RecordStore(usecase_dir)
    a, b = store.records("shop", "daily", "revenue")[-2:]
    print("\n$ ubunye lineage compare latest~1 latest -t revenue")
    render_comparison(compare_records(a, b), a, b)
    a, b = store.records("shop", "daily", "orders")[-2:]
    print("\n$ ubunye diff latest~1 latest -t orders")
    render_diff(diff_runs(a, b))


if __name__ == "__main__":
    raise SystemExit(main())
