"""An output URL is compared with the run's inputs and other outputs by its key as written
(``engines.paths.literal_parts``), as every reader takes it: an input at ``s3a://b/t`` and an output at
``s3a://b/t?x`` were refused as one location (``urlsplit`` cut the path at ``?`` and ``#``), though Spark and the
parquet readers write and read two keys. deltalake alone reads them as URL syntax, and is refused such URLs
(tests/engines/test_delta_url_escapes.py). The test failed before the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lineage.usecase import write_task
from ubunye.config import load_config
from ubunye.engines import location
from ubunye.exceptions import ConfigError
from ubunye.paths import check_outputs


def _check(tmp_path: Path, read: str, written: str) -> None:
    uc = tmp_path / "uc"
    config = {
        "inputs": {"src": {"format": "parquet", "path": read}},
        "outputs": {"out": {"format": "parquet", "mode": "overwrite", "path": written}},
        "transform": {"type": "sql", "query": "SELECT * FROM src"},
    }
    cfg = load_config(write_task(uc, "t", {"CONFIG": config}))
    outputs = {n: location(i, uc) for n, i in cfg.outputs.items()}
    check_outputs(cfg, uc, outputs, {n: location(i, uc) for n, i in cfg.inputs.items()})


@pytest.mark.parametrize(
    ("read", "written"),
    [
        ("s3a://b/t", "s3a://b/t?x"),
        ("s3a://b/d/t#x", "s3a://b/d/t#y"),
        ("s3://b/t", "s3://b/t#"),
        ("s3a://b/t x", "s3a://b/t%20x"),
    ],
)
def test_an_output_url_differing_by_a_query_or_fragment_is_another_place(
    tmp_path: Path, read: str, written: str
) -> None:
    _check(tmp_path, read, written)  # was: "s3://b/t is the location of input 'src', which its overwrite would delete"


@pytest.mark.parametrize(("read", "written"), [("s3a://b/t?x", "s3://b/t?x/"), ("s3://b/t#x", "s3a://b//t#x/inner")])
def test_the_same_key_with_a_query_character_is_still_one_place(tmp_path: Path, read: str, written: str) -> None:
    with pytest.raises(ConfigError, match="location of input 'src'"):
        _check(tmp_path, read, written)
