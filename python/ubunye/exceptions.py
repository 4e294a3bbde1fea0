"""The errors Ubunye raises on purpose. Anything else escaping is a bug."""

from __future__ import annotations


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
