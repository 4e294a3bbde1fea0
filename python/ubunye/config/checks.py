"""Strict checks of one config value each (used by :mod:`ubunye.config.model`): a wrong type is an error naming
the file and the key, never coerced. A value is quoted only where it is one of a few known words.

Example:
    >>> boolean(Path("c.yaml"), "CONFIG.outputs.o.allow_empty", "false")
    Traceback (most recent call last):
    ubunye.exceptions.ConfigError: c.yaml: CONFIG.outputs.o.allow_empty: expected a boolean, got string (write ...)
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from ubunye.exceptions import ConfigError
from ubunye.isotime import parse_time
from ubunye.visible import invisible

#: A config value that is text, a number or a boolean (``bool`` is an ``int``); None where null is allowed.
Scalar = str | int | float | None

_TYPES = {dict: "mapping", list: "list", str: "string", bool: "boolean", int: "integer", float: "number"}


def fail(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {problem}")


def _kind(value: object) -> str:
    return "null" if value is None else _TYPES.get(type(value), type(value).__name__)


def expected(path: Path, key: str, what: str, value: object) -> ConfigError:
    hint = " (write true or false without quotes)" if what == "a boolean" and isinstance(value, str) else ""
    return fail(path, key, f"expected {what}, got {_kind(value)}{hint}")


def mapping(path: Path, key: str, value: object) -> dict[str, object]:
    if value is None:  # an empty section (`inputs:`) is an empty mapping
        return {}
    if not isinstance(value, dict):
        raise expected(path, key, "a mapping", value)
    return value


def string(path: Path, key: str, value: object, choices: tuple[str, ...] = ()) -> str:
    if not isinstance(value, str):
        raise expected(path, key, f"one of {', '.join(choices)}" if choices else "a string", value)
    if choices and value not in choices:
        raise fail(path, key, f"{value[:60]!r} is not one of {', '.join(choices)}")
    if not value.strip():
        raise fail(path, key, "is empty")
    return value


def boolean(path: Path, key: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise expected(path, key, "a boolean", value)
    return value


def integer(path: Path, key: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        got = f"{value}" if isinstance(value, int) and not isinstance(value, bool) else _kind(value)
        raise fail(path, key, f"expected an integer >= 0, got {got}")
    return value


def number(path: Path, key: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise expected(path, key, "a number", value)
    return value


def scalar(path: Path, key: str, value: object, null: bool = False) -> Scalar:
    if not (isinstance(value, str | int | float) or (null and value is None)):
        raise expected(path, key, "a string, number or boolean", value)
    return value


def scalars(path: Path, key: str, value: object) -> dict[str, Scalar]:
    return {k: scalar(path, f"{key}.{k}", v) for k, v in mapping(path, key, value).items()}


def strings(path: Path, key: str, value: object) -> list[str]:
    if not isinstance(value, list):
        raise expected(path, key, "a list of column names", value)
    return [string(path, f"{key}[{i}]", v) for i, v in enumerate(value)]


def known(path: Path, key: str, value: Mapping[str, object], allowed: set[str]) -> None:
    unknown = sorted(set(value) - allowed, key=str)
    if unknown:
        raise fail(
            path, f"{key}.{unknown[0]}" if key else unknown[0], f"unknown key (allowed: {', '.join(sorted(allowed))})"
        )


def spark_conf(path: Path, key: str, value: object) -> dict[str, str]:
    # Spark reads conf values as text; a YAML boolean means what Spark spells "true"/"false".
    return {
        k: ("true" if v else "false") if isinstance(v, bool) else str(v) for k, v in scalars(path, key, value).items()
    }


def timestamp(path: Path, key: str, value: object) -> str:
    text = string(path, key, value)
    try:
        parse_time(text)
    except ValueError:
        raise fail(path, key, "not an ISO 8601 time such as 2026-12-01T00:00:00Z") from None
    return text


#: ``$NAME`` / ``${NAME}``: what a shell would expand, and nothing here does.
_SHELL_VARIABLE = re.compile(r"\$(\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")


def location(path: Path, key: str, value: str) -> str:
    """A rendered ``path`` of an input or output, refused where it would name another place than the one meant.

    Refused: a control or invisible character; a leading ``~`` or a ``$HOME``/``${HOME}``, which a shell expands
    and nothing here does (a folder literally named ``~`` or ``$HOME`` would be made under the usecase folder);
    a ``file://`` URL naming a host (``file://data/x`` is host ``data``, path ``/x``: no local file).

    Example:
        >>> location(Path("c.yaml"), "CONFIG.outputs.o.path", "~/lake/o")
        Traceback (most recent call last):
        ubunye.exceptions.ConfigError: c.yaml: CONFIG.outputs.o.path: starts with '~', which nothing expands here: ...
    """
    odd = invisible(value)
    if odd:
        raise fail(path, key, f"contains {odd}")
    if value.startswith("~"):
        msg = "starts with '~', which nothing expands here: write the full path, or {{ env.HOME }}/..."
        raise fail(path, key, msg)
    # In a URL only its path: a user and password (s3://u:pa$s@...) are not quoted back, and no shell ran there.
    variable = _SHELL_VARIABLE.search(urlsplit(value).path if "://" in value else value)
    if variable:
        name = variable.group(1).strip("{}")
        msg = f"holds {variable.group(0)!r}, which nothing expands here: write {{{{ env.{name} }}}} to use the variable"
        raise fail(path, key, msg)
    if value[:7].lower() == "file://":
        parts = urlsplit(value)
        if parts.netloc not in ("", "localhost"):
            # Only the host is quoted: the rest of the netloc may be a user and a password.
            msg = (
                f"a file:// URL names the host {(parts.hostname or '?')[:60]!r}, not a local folder: write "
                "file:///absolute/path (three slashes) or a plain path"
            )
            raise fail(path, key, msg)
    return value
