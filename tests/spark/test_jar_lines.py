"""The jar of each Spark line in a session: what it says it is, telling "no jar" from "the wrong jar", and
hash_frame never choosing a JVM function that cannot run (other lines run for real in tests/lines/)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ubunye.spark as us
from tests.spark.conftest import to_arrow
from ubunye import __version__
from ubunye.hashing import hash_frame
from ubunye.spark import session as uss

JAR_35 = f"ubunye-spark-3.5_2.12-{__version__}.jar"
JAR_41 = f"ubunye-spark-4.1_2.13-{__version__}.jar"


def _own() -> tuple[str, str, str]:
    """The line, Scala binary and jar of this venv's pyspark (4.1 and the 4.1 jar on the main venv; the tier runs on
    every line we support)."""
    target = us.installed_target()
    return target.line, target.scala, target.jar_name


def test_the_session_runs_the_jar_of_its_line_and_it_knows(spark: Any) -> None:
    line, scala, jar = _own()
    info = spark._jvm.ubunye.spark.JarInfo
    assert (info.sparkLine(), info.scalaBinary(), info.jarName()) == (line, scala, jar)
    assert info.mismatch() is None
    assert us.session_target(spark).jar_name == jar
    assert us.diagnose(spark) is None
    assert us.jvm_usable(spark)


@pytest.mark.parametrize(
    ("spark_version", "scala", "wanted"),
    [
        ("3.5.9", "2.12.18", JAR_35),
        ("3.5.0", "2.13.8", f"ubunye-spark-3.5_2.13-{__version__}.jar"),
        ("4.0.5", "2.13.16", f"ubunye-spark-4.0_2.13-{__version__}.jar"),
    ],
)
def test_jar_info_names_the_jar_to_attach(spark: Any, spark_version: str, scala: str, wanted: str) -> None:
    line, own_scala, jar = _own()
    text = spark._jvm.ubunye.spark.JarInfo.mismatch(spark_version, scala)
    if wanted == jar:  # the jar of this very line: nothing to say
        assert text is None
    else:
        assert f"({jar}) is built for Spark {line} / Scala {own_scala}" in text
        assert f"this session runs Spark {spark_version} / Scala {scala}: attach {wanted} instead" in text
    other = spark._jvm.ubunye.spark.JarInfo.mismatch("3.3.2", "2.12.15")
    assert "jars for Spark 3.5 (Scala 2.12 and 2.13) and 4.0 to 4.3 (Scala 2.13) only" in other
    newest = spark._jvm.ubunye.spark.JarInfo.mismatch("4.3.0", "2.13.18")
    if jar == JAR_41:
        assert newest is None  # 4.1 to 4.3: one jar
    else:
        assert "this session runs Spark 4.3.0 / Scala 2.13.18: attach " + JAR_41 + " instead" in newest


def test_no_jar_is_not_the_wrong_jar(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The diagnosis when ubunye.spark.JarInfo is not on the classpath at all, or only an old jar is."""
    real = uss._jvm_class
    monkeypatch.setattr(uss, "_jvm_class", lambda s, name: None)
    assert us.diagnose(spark) == f"no ubunye jar on this session's classpath: Spark {spark.version} / Scala " + (
        f"{us.session_target(spark).scala_version} needs {_own()[2]}"
    )
    monkeypatch.setattr(uss, "_jvm_class", lambda s, name: real(s, name) if name == "UbunyeFunctions" else None)
    assert "predates the per-line jars" in (us.diagnose(spark) or "")


class _Catalog:
    def __init__(self, registered: bool) -> None:
        self.registered = registered

    def functionExists(self, name: str) -> bool:
        return self.registered


class _Stub:
    """A session without py4j (like Spark Connect) whose ubunye_rows_v1 fails or answers wrong."""

    def __init__(self, version: str, answer: Any, registered: bool = True) -> None:
        self.version = version
        self.catalog = _Catalog(registered)
        self.answer = answer

    def sql(self, query: str) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self

    def first(self) -> Any:
        return self.answer


def test_a_function_that_cannot_run_is_refused_with_a_warning() -> None:
    failing = _Stub("3.5.9", RuntimeError("java.lang.ClassCastException: ArrayBuffer cannot be cast to Seq"))
    with pytest.warns(us.JarWarning, match=rf"ClassCastException.*needs {JAR_35}.*engine='arrow'"):
        assert not us.jvm_usable(failing)
    assert not us.jvm_usable(failing)  # remembered per session: no second probe


def test_a_function_that_answers_wrong_is_refused() -> None:
    with pytest.warns(us.JarWarning, match="where the Python twin gives"):
        assert not us.jvm_usable(_Stub("4.1.4", {**uss._probe_expected(), "profile_v1": "sha256:00"}))
    assert us.jvm_usable(_Stub("4.1.4", uss._probe_expected()))


def test_not_registered_means_the_jar_free_path_quietly() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert not us.jvm_usable(_Stub("4.2.0", None, registered=False))


def test_a_jar_whose_functions_are_not_registered_warns(spark: Any) -> None:
    """The jar on the classpath without spark.sql.extensions: a warning pointing at register(), then the JVM."""
    other = spark.newSession()
    other._jvm.ubunye.spark.UbunyeFunctions.unregisterAll(other._jsparkSession)
    with pytest.warns(us.JarWarning, match=r"not registered \(ubunye.spark.register\(spark\)\)"):
        assert not us.jvm_usable(other)
    us.register(other)
    assert us.jvm_usable(other)


def test_every_spark_method_the_jar_calls_is_in_this_spark(ubunye_jar: Path) -> None:
    """Linkage, read from the class files: the jar of this line links on this pyspark; on 4.1+ the 4.0 jar does not
    (the toPrettySQL signature changed in 4.1), which is why there are two."""
    import pyspark

    from tests.lines.linkage import unresolved

    jars = Path(pyspark.__file__).parent / "jars"
    assert unresolved(ubunye_jar, jars) == []
    if _own()[2] == JAR_41:
        assert any("toPrettySQL" in m for m in unresolved(us.jar_path("4.0"), jars))


def test_hash_frame_takes_the_jar_free_path_when_the_jvm_function_cannot_run(
    spark: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    df = spark.range(50).selectExpr("id", "array(map('k', id)) AS m")
    assert hash_frame(df).engine == "jvm"
    monkeypatch.setattr(us, "jvm_usable", lambda s: False)
    h = hash_frame(df)
    assert h.engine == "arrow"
    assert h.data_hash == hash_frame(to_arrow(df)).data_hash
