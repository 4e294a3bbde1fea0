"""Text at a URL that is not UTF-8 in a csv header or a json key is refused naming the file, in the words a local
folder's refusal uses. pandas checked a URL's text only after a read that succeeded: a header or key that is not
UTF-8 failed the read itself, and the error named the folder (``cannot read csv at s3://b/t: ...``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lineage import s3server
from tests.optional import HAVE_POLARS
from ubunye.config import IOConfig
from ubunye.engines import get_engine
from ubunye.exceptions import EngineError

s3_server = s3server.s3_server  # the fixture
s3 = s3server.s3  # the server, with the environment pointing at it

_ENGINES = ["pandas", pytest.param("polars", marks=pytest.mark.skipif(not HAVE_POLARS, reason="polars"))]

#: A file whose header (csv) or key (json) is not UTF-8, beside a good file before it.
_BAD = {
    "csv": (b"x,y\n1,2\n", b"x,y\xff\n3,4\n"),
    "json": (b'{"x": 1, "y": 2}\n', b'{"x": 3, "y\xff": 4}\n'),
}


def _refusal(engine: str, fmt: str, path: str, base: Path) -> str:
    with pytest.raises(EngineError) as err:
        get_engine(engine).read(IOConfig("i", format=fmt, path=path), base)
    return str(err.value)


@pytest.mark.parametrize("engine", _ENGINES)
@pytest.mark.parametrize("fmt", ["csv", "json"])
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_a_url_header_or_key_not_utf8_is_refused_naming_the_file_as_locally(s3, tmp_path, engine, fmt, compressed):
    import gzip

    folder = tmp_path / "t"
    folder.mkdir()
    good, bad = _BAD[fmt]
    suffix = ".gz" if compressed else ""
    (folder / f"part-0.{fmt}").write_bytes(good)
    (folder / f"part-1.{fmt}{suffix}").write_bytes(gzip.compress(bad) if compressed else bad)
    url = s3.upload(folder)
    local = _refusal(engine, fmt, str(folder), tmp_path)
    assert local.startswith(f"input 'i': {folder}/part-1.{fmt}{suffix} is not UTF-8 text (byte 0xff "), local
    assert _refusal(engine, fmt, url, tmp_path) == local.replace(str(folder), url)
