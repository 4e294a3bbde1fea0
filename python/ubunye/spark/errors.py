"""What a Spark error says, in one line: py4j's own first line ("An error occurred while calling o35.load.") says
nothing, and a task failure's text is pages of JVM stack.

Example:
    >>> spark_reason(ValueError("bad\\nmore"))
    'ValueError: bad'
"""

from __future__ import annotations

import re
from typing import Any

#: Spark names the file a failed read was at in an outer cause ("Encountered error while reading file f.").
_FILE = re.compile(r"while reading file (\S+?)\.?(?:\s|$)")
_CAUSES = 20  # bounded: a cycle in the chain must not hang the caller
_TRACEBACK = "Traceback (most recent call last):"


def spark_reason(exc: BaseException) -> str:
    """One line for ``exc``: a JVM error's innermost cause (with the file Spark names in an outer one), else the
    exception's type and first line. Never raises: if the JVM is gone, Python's own text.

    Example:
        >>> spark_reason(RuntimeError())
        'RuntimeError'
    """
    java = getattr(exc, "java_exception", None)
    if java is not None:
        try:
            return _java_reason(java)
        except Exception:  # the JVM is gone, or a cause's message cannot be read: fall back on Python's text
            pass
    text = str(exc).strip()
    return f"{type(exc).__name__}: {_line(text)}" if text else type(exc).__name__


def _line(text: str) -> str:
    """The line of a message that says what happened: its first, or, for a Python worker's error (a UDF that
    raised), the exception the task raised, which Spark puts after its own header and the worker's traceback
    ("An exception was thrown from the Python worker. Please see the stack trace below." says nothing).

    Example:
        >>> _line("An exception was thrown.\\nTraceback (most recent call last):\\n  File ...\\nValueError: bad row")
        'ValueError: bad row'
    """
    lines = text.strip().splitlines()
    if _TRACEBACK in text:
        after = lines[next(i for i, line in enumerate(lines) if _TRACEBACK in line) + 1 :]
        raised = [line.strip() for line in after if line.strip() and not line[:1].isspace()]
        if raised:  # the traceback's last unindented line: "ValueError: ..." (a chained one's last)
            return raised[-1]
    return lines[0] if lines else text


def _java_reason(java: Any) -> str:  # noqa: ANN401 (a py4j JavaObject: a Throwable)
    cause, text = java, ""
    file: str | None = None
    for _ in range(_CAUSES):
        message = cause.getMessage()
        if message:
            text = f"{cause.getClass().getSimpleName()}: {message}"
            found = _FILE.search(str(message))
            file = file or (found.group(1) if found else None)
        nxt = cause.getCause()
        if nxt is None:
            break
        cause = nxt
    if not text:
        raise ValueError("no message in the chain")
    line = _line(text)
    return f"{line} (file {file})" if file and file not in line else line


__all__ = ["spark_reason"]
