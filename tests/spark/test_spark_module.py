"""ubunye.spark: choosing the jar of a Spark line, finding it and configuring a builder (no Spark session)."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import ubunye.spark as us
from ubunye import __version__
from ubunye.exceptions import JarNotFoundError
from ubunye.spark import jars as usj
from ubunye.spark import lines as usl

JAR_35 = f"ubunye-spark-3.5_2.12-{__version__}.jar"
JAR_35_213 = f"ubunye-spark-3.5_2.13-{__version__}.jar"
JAR_40 = f"ubunye-spark-4.0_2.13-{__version__}.jar"
JAR_41 = f"ubunye-spark-4.1_2.13-{__version__}.jar"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    package, dev = tmp_path / "jars", tmp_path / "target"
    package.mkdir()
    dev.mkdir()
    monkeypatch.setattr(usj, "_PACKAGE_JARS", package)
    monkeypatch.setattr(usj, "_DEV_JARS", dev)
    monkeypatch.delenv(us.ENV_JAR, raising=False)
    return package, dev


def _fake_jar(path: Path, line: str | None = None, scala: str = "2.13.16") -> Path:
    """A zip with a ubunye manifest (or, without ``line``, an empty file)."""
    if line is None:
        path.write_bytes(b"")
        return path
    manifest = f"Manifest-Version: 1.0\nImplementation-Version: {__version__}\nUbunye-Spark-Line: {line}\n"
    manifest += f"Ubunye-Scala-Version: {scala}\n"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("META-INF/MANIFEST.MF", manifest)
    return path


@pytest.mark.parametrize(
    ("spark", "scala", "name"),
    [
        ("3.5.0", "2.12.18", JAR_35),
        ("3.5.9", "2.12.18", JAR_35),
        ("3.5.2", None, JAR_35),
        ("3.5.1-databricks", "2.12.15", JAR_35),
        ("3.5.0", "2.13.8", JAR_35_213),
        ("4.0.0", "2.13.16", JAR_40),
        ("4.0.5", "2.13.16", JAR_40),
        ("4.1.4", None, JAR_41),
        ("4.2.0", "2.13.18", JAR_41),
        ("4.3.0", "2.13.18", JAR_41),
        ("3.5", None, JAR_35),
        ("4.0", None, JAR_40),
        ("4.1", None, JAR_41),
    ],
)
def test_jar_name_of_each_line(spark: str, scala: str | None, name: str) -> None:
    assert us.jar_name(spark, scala) == name
    assert us.Target(spark, scala).jar_name == name


@pytest.mark.parametrize(
    ("spark", "scala"), [("3.4.1", "2.12.17"), ("2.4.8", None), ("4.2.0", "2.12.18"), ("4", None), ("5.0.0", None)]
)
def test_no_jar_for_other_lines_says_the_jar_free_path_works(spark: str, scala: str | None) -> None:
    with pytest.raises(JarNotFoundError, match="no jar for Spark"):
        us.jar_name(spark, scala)


def test_installed_target_reads_pyspark_and_its_scala_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyspark

    monkeypatch.delenv("SPARK_HOME", raising=False)
    t = us.installed_target()
    assert t.spark_version == pyspark.__version__
    jars = Path(pyspark.__file__).parent / "jars"
    assert t.scala_version is not None and (jars / f"scala-library-{t.scala_version}.jar").is_file()
    # SPARK_HOME, when set, is the Spark pyspark runs: its Scala wins.
    (tmp_path / "jars").mkdir()
    (tmp_path / "jars" / "scala-library-2.12.18.jar").write_bytes(b"")
    monkeypatch.setenv("SPARK_HOME", str(tmp_path))
    assert us.installed_target().scala == "2.12"


def test_packaged_jar_then_dev_build(folders: tuple[Path, Path]) -> None:
    package, dev = folders
    (dev / "spark-4.1_2.13" / "scala-2.13").mkdir(parents=True)
    built = _fake_jar(dev / "spark-4.1_2.13" / "scala-2.13" / JAR_41)
    assert us.jar_path("4.2.0", "2.13.18") == built
    _fake_jar(package / JAR_41)
    assert us.jar_path("4.2.0", "2.13.18") == package / JAR_41


def test_each_line_gets_its_own_jar(folders: tuple[Path, Path]) -> None:
    package, _ = folders
    for name in (JAR_35, JAR_35_213, JAR_40, JAR_41):
        _fake_jar(package / name)
    assert us.jar_path("3.5.9", "2.12.18").name == JAR_35
    assert us.jar_path("3.5.0", "2.13.8").name == JAR_35_213
    assert us.jar_path("4.0.5", "2.13.16").name == JAR_40
    assert us.jar_path("4.1.4", "2.13.17").name == JAR_41
    assert us.jar_path().name == us.installed_target().jar_name  # by default: the installed pyspark's


def test_the_command_line_takes_a_quoted_pair_and_refuses_what_is_no_version(
    folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # `python -m ubunye.spark "$v"` with v="3.5 2.13" printed the 2.12 jar, and 3.5.x or a third word passed too.
    from ubunye.spark.__main__ import main

    for name in (JAR_35, JAR_35_213):
        _fake_jar(folders[0] / name)
    for argv, jar in ((["3.5", "2.13"], JAR_35_213), (["3.5 2.13"], JAR_35_213), (["3.5.0-databricks"], JAR_35)):
        assert main(argv) == 0
        assert capsys.readouterr().out.strip() == str(folders[0] / jar)
    for argv, says in (
        (["3.5.x"], "'3.5.x' is not a Spark version"),
        (["3.5", "2.13", "extra"], "expected a Spark version and, optionally, a Scala version"),
        (["3.5", "latest"], "'latest' is not a Scala version"),
        (["--jar"], "'--jar' is not a Spark version"),
    ):
        assert main(argv) == 2
        err = capsys.readouterr()
        assert err.out == "" and err.err.startswith(says) and "usage: python -m ubunye.spark" in err.err
    assert main(["--help"]) == 0 and capsys.readouterr().out.startswith("usage: python -m ubunye.spark")


def test_no_jar_names_the_jar_and_the_folders(folders: tuple[Path, Path]) -> None:
    _fake_jar(folders[0] / JAR_41)
    with pytest.raises(JarNotFoundError) as err:
        us.jar_path("3.5.9", "2.12.18")
    text = str(err.value)
    assert JAR_35 in text and "Spark 3.5.9 / Scala 2.12.18" in text
    assert str(folders[0]) in text and str(folders[1]) in text
    assert f"ubunye jars found: {JAR_41}" in text and "make jar" in text


def test_env_override_wins_unless_its_manifest_says_another_line(
    folders: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_jar(folders[0] / JAR_41)
    mine = _fake_jar(tmp_path / "mine.jar")  # no manifest: trusted as given
    monkeypatch.setenv(us.ENV_JAR, str(mine))
    assert us.jar_path("4.2.0") == mine
    monkeypatch.setenv(us.ENV_JAR, str(tmp_path / "missing.jar"))
    with pytest.raises(JarNotFoundError, match=r"missing\.jar is not a file"):
        us.jar_path("4.2.0")
    wrong = _fake_jar(tmp_path / "wrong.jar", line="4.1", scala="2.13.17")
    monkeypatch.setenv(us.ENV_JAR, str(wrong))
    with pytest.raises(JarNotFoundError, match=rf"for Spark 4\.1 / Scala 2\.13; .* needs {JAR_35}"):
        us.jar_path("3.5.9", "2.12.18")


def test_built_jars_record_their_line_in_the_manifest(ubunye_jar: Path) -> None:
    """The real jars (make jar): named with their line, the manifest saying the same, Java 8 class files for 3.5."""
    found = {p.name: p for p in us.available_jars() if p.parent.name == "jars"}
    assert set(found) == {JAR_35, JAR_35_213, JAR_40, JAR_41}, "run `make jar`"
    assert ubunye_jar.name in found  # the one this pyspark takes is among them
    expected = {
        JAR_35: ("3.5", "2.12", 52),
        JAR_35_213: ("3.5", "2.13", 52),
        JAR_40: ("4.0", "2.13", 61),
        JAR_41: ("4.1", "2.13", 61),
    }
    for name, (line, scala, major) in expected.items():
        info = us.jar_info(found[name])
        assert info is not None and (info.spark_line, info.scala, info.version) == (line, scala, __version__)
        assert info.name == name
        with zipfile.ZipFile(found[name]) as z:
            props = z.read("ubunye/spark/jar.properties").decode()
            assert f"jar={name}" in props
            cls = z.read("ubunye/spark/RowsV1Aggregate.class")
            assert int.from_bytes(cls[6:8], "big") == major  # 52: Java 8 (Databricks LTS on Spark 3.5), 61: 17


class _Builder:
    def __init__(self, **options: str) -> None:
        self._options = dict(options)

    def config(self, key: str, value: str) -> _Builder:
        self._options[key] = value
        return self


def test_configure_keeps_existing_jars_and_extensions(folders: tuple[Path, Path]) -> None:
    jar = str(_fake_jar(folders[0] / us.installed_target().jar_name))
    b = us.configure(_Builder(**{"spark.jars": "/a.jar", "spark.sql.extensions": "x.Ext"}))
    assert b._options == {"spark.jars": f"/a.jar,{jar}", "spark.sql.extensions": f"x.Ext,{us.EXTENSIONS}"}
    assert us.configure(b)._options == b._options  # idempotent


def test_configure_for_another_line(folders: tuple[Path, Path]) -> None:
    jar = str(_fake_jar(folders[0] / JAR_35))
    assert us.configure(_Builder(), "3.5.2")._options["spark.jars"] == jar


def test_lines_module_has_no_pyspark_import() -> None:
    """Choosing a jar never starts a JVM: the module imports pyspark only inside installed_target."""
    text = (ROOT / "python" / "ubunye" / "spark" / "lines.py").read_text()
    assert "\nimport pyspark" not in text and "\nfrom pyspark" not in text
    assert usl.SCALA_OF_LINE == {"3.5": ("2.12", "2.13"), "4.0": ("2.13",), "4.1": ("2.13",)}
