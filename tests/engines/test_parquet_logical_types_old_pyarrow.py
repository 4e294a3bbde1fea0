"""Parquet columns of a logical type rows-v1 does not hash (JSON, UUID, FLOAT16: docs/rows-v1.md section 11) are
refused by the pandas engine on every pyarrow the package supports, read from the footer: pyarrow 14 (the
Databricks 14.3 stack) has no ``arrow.json``/``arrow.uuid`` types and read such columns as plain binary, which the
pandas engine hashed (Spark reads JSON as a string: another hash), and failed on a FLOAT16 footer with a bare
"Thrift LogicalType that is not recognized".

pyarrow 14 cannot write these logical types, so the files are written by a Python whose pyarrow can (>= 19): this
one, or else the repo's main venv (.venv/bin/python), in a subprocess; with neither the tests skip saying so.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ubunye.config.model import IOConfig
from ubunye.engines.pandas_engine import PandasEngine
from ubunye.engines.parquet_leaves import logical_only
from ubunye.exceptions import EngineError

# Run by the writer: one folder per case, each a part file holding the logical type (and a plain int column)
_WRITE = """
import sys
from pathlib import Path
import numpy as np, pyarrow as pa, pyarrow.parquet as pq
root = Path(sys.argv[1])
uuids = pa.array([b"0123456789abcdef", None], pa.binary(16)).cast(pa.uuid())
tables = {
    "json": pa.table({"j": pa.array(['{"a": 1}', None]).cast(pa.json_()), "i": [1, 2]}),
    "uuid": pa.table({"u": uuids, "i": [1, 2]}),
    "uuid_struct": pa.table({"s": pa.StructArray.from_arrays([uuids], ["u"]), "i": [1, 2]}),
    "json_list": pa.table({"i": [1, 2], "l": pa.ListArray.from_arrays([0, 1, 1], pa.array(['"x"']).cast(pa.json_()))}),
    # of np.float16 values: pyarrow 19 makes no float16 array of Python floats
    "float16": pa.table({"i": [1, 2], "h": pa.array(np.array([1.5, 0], np.float16), mask=np.array([False, True]))}),
}
for name, table in tables.items():
    (root / name).mkdir(parents=True)
    pq.write_table(table, root / name / "part-0.parquet")
"""
# pyarrow 19 (Databricks 17.3) has pa.uuid() but writes it as a plain FIXED_LEN_BYTE_ARRAY(16), no UUID logical type
_CAN_WRITE = """
import io
import pyarrow as pa, pyarrow.parquet as pq
sink = io.BytesIO()
pq.write_table(pa.table({"u": pa.array([b"0123456789abcdef"], pa.binary(16)).cast(pa.uuid())}), sink)
assert pq.ParquetFile(sink).schema.column(0).logical_type.type == "UUID"
"""


def _writer() -> str | None:
    """A Python whose pyarrow writes the JSON, UUID and FLOAT16 logical types: this one, else the main venv's."""
    main = Path(__file__).resolve().parents[2] / ".venv" / "bin" / "python"
    for python in (Path(sys.executable), main):
        if python.exists() and subprocess.run([str(python), "-c", _CAN_WRITE], capture_output=True).returncode == 0:
            return str(python)
    return None


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    writer = _writer()
    if writer is None:
        pytest.skip(f"pyarrow {pa.__version__} cannot write JSON/UUID parquet columns and no .venv/bin/python can")
    root = tmp_path_factory.mktemp("logical")
    subprocess.run([writer, "-c", _WRITE, str(root)], check=True, capture_output=True)
    return root


def _refusal(folder: Path) -> str:
    with pytest.raises(EngineError) as raised:  # refused by the read itself, before any hash
        PandasEngine().read(IOConfig("i", format="parquet", path=str(folder)), folder.parent)
    return str(raised.value)


@pytest.mark.parametrize(
    ("case", "where", "kind"),
    [
        ("json", "column 'j'", "JSON (arrow.json)"),
        ("uuid", "column 'u'", "UUID (arrow.uuid)"),
        ("uuid_struct", "field 's.u'", "UUID (arrow.uuid)"),
        ("json_list", "field 'l.list.element'", "JSON (arrow.json)"),
    ],
)
def test_a_json_or_uuid_column_is_refused_on_every_pyarrow(written: Path, case: str, where: str, kind: str) -> None:
    message = _refusal(written / case)
    file = written / case / "part-0.parquet"
    assert message.startswith(f"input 'i': {where} of {file} is of parquet logical type {kind}"), message
    assert "rows-v1 does not hash (docs/rows-v1.md section 11)" in message, message


def test_a_half_float_column_is_refused_naming_the_file_not_a_bare_footer_error(written: Path) -> None:
    message = _refusal(written / "float16")
    assert str(written / "float16" / "part-0.parquet") in message, message
    assert "FLOAT16" in message and "float32" in message and "docs/rows-v1.md section 11" in message, message


def test_the_footer_names_the_logical_type_whatever_arrow_type_pyarrow_reads(written: Path) -> None:
    schema = pq.ParquetFile(written / "uuid_struct" / "part-0.parquet").schema
    assert logical_only(schema) == ("s.u", "UUID")
    plain = written / "plain"
    plain.mkdir()
    pq.write_table(pa.table({"i": [1], "b": pa.array([b"x"], pa.binary())}), plain / "part-0.parquet")
    assert logical_only(pq.ParquetFile(plain / "part-0.parquet").schema) is None
    assert PandasEngine().read(IOConfig("i", format="parquet", path=str(plain)), written).shape == (1, 2)
