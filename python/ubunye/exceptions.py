"""The errors Ubunye raises on purpose. Anything else escaping is a bug."""

from __future__ import annotations

import re


class UbunyeError(Exception):
    """Base of every error Ubunye raises for bad input or an impossible request."""


class HashError(UbunyeError):
    """A table cannot be hashed by rows-v1 (unsupported type, duplicate column, mixed object column...).

    The message names the column (and the field path inside nested types) and the type.
    """


class JarNotFoundError(UbunyeError):
    """The ubunye JVM jar is not where it is looked for, or the function is not registered in a session."""


# --- configs, engines, task runs and run records ---


class ConfigError(UbunyeError):
    """A task's config.yaml is missing, malformed, or names an unknown key; the message names file and key."""


class EngineError(UbunyeError):
    """An engine cannot read, write or run something (unknown format, missing Delta jars, no catalog...)."""


class SessionStartError(EngineError):
    """The engine's session could not start (Spark: a spark_conf value Spark refuses, Delta jars that cannot be
    fetched, a JVM that cannot start): nothing was read or written. The message carries the engine's reason (the
    JVM's exception, or the Java gateway's words when the JVM died before it could say more: its own lines are then
    on standard error). The runner tells it apart from a monitor's own failure by its type."""


class TaskError(UbunyeError):
    """A task run failed; the message names the task, the stage and, when recorded, the record's path."""


class RunInterrupted(TaskError):
    """A run was stopped by SIGTERM, SIGINT (Ctrl-C) or ``sys.exit`` in its code; its record says so.

    ``exit_code`` is what the CLI exits with: 128 + the signal's number (130 for SIGINT, 143 for SIGTERM), or 2.
    """

    exit_code: int = 2


class ExpectationError(TaskError):
    """One or more expectations of severity ``error`` failed; the record lists each rule."""


class RecordError(UbunyeError):
    """A stored run record cannot be loaded (corrupt JSON, a newer record_version); the message names the path."""


#: Where a native backtrace starts in an exception's message: deltalake (Rust) appends one when RUST_BACKTRACE is
#: set, frame by frame from frame 0 ("   0: <unknown>"), or after anyhow's "Stack backtrace:" (a numbered list of
#: a user's own message, "  1: id=5", is no backtrace).
_BACKTRACE = re.compile(r"\n(?:Stack backtrace:| +0: )")


def without_backtrace(text: str) -> str:
    """``text`` up to the native backtrace a library written in Rust may append to its message (pages of frames
    and build paths, one line of the CLI).

    Example:
        >>> without_backtrace("Invalid data type: Float16\\n   0: <unknown>\\n  10: PyObject_Vectorcall")
        'Invalid data type: Float16'
        >>> without_backtrace("2 rows failed:\\n  1: id=5\\n  2: id=7")  # a list of the user's, no backtrace
        '2 rows failed:\\n  1: id=5\\n  2: id=7'
    """
    found = _BACKTRACE.search(text)
    return text[: found.start()].rstrip() if found else text


def error_text(exc: BaseException) -> str:
    """``Type: message`` of an exception for a record or an error line (:func:`without_backtrace`), never raising:
    an exception whose ``str()`` raises (user code) is named by its type, so reporting it cannot become a second
    failure that stops the run's end.

    Example:
        >>> class Odd(Exception):
        ...     def __str__(self):
        ...         raise ValueError
        >>> error_text(OSError("disk full")), error_text(Odd()), error_text(MemoryError())
        ('OSError: disk full', 'Odd (its message could not be read: ValueError)', 'MemoryError')
    """
    kind = type(exc).__name__
    try:
        text = without_backtrace(str(exc))
    except Exception as err:
        return f"{kind} (its message could not be read: {type(err).__name__})"
    return f"{kind}: {text}" if text.strip() else kind
