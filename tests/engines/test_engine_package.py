"""The engines package: a missing engine library is an EngineError naming the extra, in a Python where the library
really cannot be imported; and the package's face is imported by its parts, never the other way round."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import ubunye.engines
from tests.lineage.usecase import example_usecase
from tests.optional import POLARS_MISSING
from ubunye.cli.errors import DOMAIN_ERROR

PACKAGE = Path(ubunye.engines.__file__).parent
PYPROJECT = Path(__file__).resolve().parents[2] / "python" / "pyproject.toml"


def _extra(name: str) -> list[str]:
    """The requirements of one of pyproject's extras. tomllib is Python 3.11+ (the package runs on 3.10 too): there
    the extra's one-line list is read by pattern."""
    try:
        import tomllib
    except ModuleNotFoundError:
        line = re.search(rf"^{name} = \[(.*)\]$", PYPROJECT.read_text(), re.MULTILINE)
        assert line is not None, f"no one-line extra {name!r} in {PYPROJECT}"
        return re.findall(r'"([^"]+)"', line.group(1))
    extras: dict[str, list[str]] = tomllib.loads(PYPROJECT.read_text())["project"]["optional-dependencies"]
    return extras[name]


def _python(code: str, *, absent: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a new interpreter where ``absent`` cannot be imported (None in sys.modules is how Python
    marks a module as missing: ``import`` raises ModuleNotFoundError, ``find_spec`` finds nothing)."""
    prelude = "import sys\n" + (f"sys.modules[{absent!r}] = None\n" if absent else "")
    return subprocess.run([sys.executable, "-c", prelude + code], capture_output=True, text=True, timeout=120)


@pytest.mark.runs_without_polars  # it makes the library missing itself
@pytest.mark.parametrize(("engine", "module"), [("polars", "polars"), ("spark", "pyspark")])
def test_an_engine_whose_library_is_missing_is_an_engine_error_naming_the_extra(engine: str, module: str):
    code = (
        "from ubunye.engines import get_engine\n"
        "from ubunye.exceptions import EngineError\n"
        f"try:\n    get_engine({engine!r})\n"
        "except EngineError as exc:\n    print(exc)\n"
        f"try:\n    import {module}\nexcept ModuleNotFoundError:\n    print('absent')\n"
    )
    done = _python(code, absent=module)
    assert done.returncode == 0, done.stderr  # no other exception escaped
    message, absent = done.stdout.splitlines()
    assert absent == "absent"  # the library really was unimportable there
    if engine == "polars" and sys.version_info < (3, 11):  # the extra's polars does not install here: none named
        assert message == POLARS_MISSING
        return
    assert message.startswith(f"the {engine} engine needs {module}: "), message
    extra = re.fullmatch(r".*pip install 'ubunye\[(\w+)\]'.*", message)
    assert extra is not None, message
    # The extra named exists and installs the missing module.
    requirements = _extra(extra.group(1))
    assert any(re.match(rf"{module}\b", r) for r in requirements), (extra.group(1), requirements)


def test_cli_run_engine_polars_without_polars_is_a_domain_error_line(tmp_path: Path):
    uc = example_usecase(tmp_path)
    code = (
        "from ubunye.cli.main import main\n"
        f"sys.argv = ['ubunye', 'run', '-d', {str(uc)!r}, '-u', 'shop', '-p', 'daily', '-t', 'orders', "
        "'--engine', 'polars']\n"
        "main()\n"
    )
    done = _python(code, absent="polars")
    assert done.returncode == DOMAIN_ERROR, (done.returncode, done.stderr)
    assert done.stderr.splitlines() == [f"error: {POLARS_MISSING}"]
    assert not (uc / "data" / "orders").exists()  # refused before the task ran: nothing written


def test_importing_the_package_imports_no_engine():
    # The face is light: an engine (and its library) loads only when get_engine asks for it.
    code = (
        "import ubunye.engines\nprint(sorted(m for m in sys.modules if m.startswith(('ubunye.', 'polars', 'pyspark'))))"
    )
    done = _python(code)
    assert done.returncode == 0, done.stderr
    loaded = ast.literal_eval(done.stdout)
    assert not [m for m in loaded if m.endswith("_engine") or m.startswith(("polars", "pyspark"))], loaded


def _imports_of_the_package(source: Path) -> list[str]:
    """The lines of ``source`` that import ``ubunye.engines`` itself (the package's __init__), not a submodule."""
    found = []
    for node in ast.walk(ast.parse(source.read_text(), str(source))):
        if isinstance(node, ast.ImportFrom) and (node.module == "ubunye.engines" or node.level > 0):
            found.append(f"{source.name}:{node.lineno}")
        if isinstance(node, ast.Import) and any(a.name == "ubunye.engines" for a in node.names):
            found.append(f"{source.name}:{node.lineno}")
    return found


def test_no_part_of_the_package_imports_its_face():
    parts = [p for p in PACKAGE.glob("*.py") if p.name != "__init__.py"]
    assert len(parts) > 5, parts
    assert [line for p in parts for line in _imports_of_the_package(p)] == []


def test_the_face_check_finds_a_back_import(tmp_path: Path):
    # The check above is only as good as its parser: it must see each form a back-import can take.
    for line in ["from ubunye.engines import location", "from . import paths", "import ubunye.engines"]:
        (tmp_path / "part.py").write_text(f"def f():\n    {line}\n")
        assert _imports_of_the_package(tmp_path / "part.py") == ["part.py:2"], line
