"""ubunye.spark: finding the jar and configuring a session builder (no Spark session needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ubunye.spark as us
from ubunye.exceptions import JarNotFoundError


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    package, dev = tmp_path / "jars", tmp_path / "target"
    package.mkdir()
    dev.mkdir()
    monkeypatch.setattr(us, "_PACKAGE_JARS", package)
    monkeypatch.setattr(us, "_DEV_JARS", dev)
    monkeypatch.delenv(us.ENV_JAR, raising=False)
    return package, dev


def test_env_override_wins(folders: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    jar = tmp_path / "mine.jar"
    jar.write_bytes(b"")
    (folders[0] / us.JAR_NAME).write_bytes(b"")
    monkeypatch.setenv(us.ENV_JAR, str(jar))
    assert us.jar_path() == jar
    monkeypatch.setenv(us.ENV_JAR, str(tmp_path / "missing.jar"))
    with pytest.raises(JarNotFoundError, match=r"missing\.jar is not a file"):
        us.jar_path()


def test_packaged_jar_then_dev_build(folders: tuple[Path, Path]) -> None:
    package, dev = folders
    (dev / us.JAR_NAME).write_bytes(b"")
    assert us.jar_path() == dev / us.JAR_NAME
    (package / us.JAR_NAME).write_bytes(b"")
    assert us.jar_path() == package / us.JAR_NAME


def test_no_jar_names_the_folders(folders: tuple[Path, Path]) -> None:
    with pytest.raises(JarNotFoundError) as err:
        us.jar_path()
    assert str(folders[0]) in str(err.value) and str(folders[1]) in str(err.value)
    assert "make jar" in str(err.value)


def test_several_jars_fail_loudly(folders: tuple[Path, Path]) -> None:
    (folders[0] / "ubunye-spark_2.13-0.6.0.jar").write_bytes(b"")
    (folders[0] / us.JAR_NAME).write_bytes(b"")
    with pytest.raises(JarNotFoundError, match="several ubunye jars"):
        us.jar_path()


class _Builder:
    def __init__(self, **options: str) -> None:
        self._options = dict(options)

    def config(self, key: str, value: str) -> _Builder:
        self._options[key] = value
        return self


def test_configure_keeps_existing_jars_and_extensions(folders: tuple[Path, Path]) -> None:
    (folders[0] / us.JAR_NAME).write_bytes(b"")
    jar = str(folders[0] / us.JAR_NAME)
    b = us.configure(_Builder(**{"spark.jars": "/a.jar", "spark.sql.extensions": "x.Ext"}))
    assert b._options == {"spark.jars": f"/a.jar,{jar}", "spark.sql.extensions": f"x.Ext,{us.EXTENSIONS}"}
    assert us.configure(b)._options == b._options  # idempotent
