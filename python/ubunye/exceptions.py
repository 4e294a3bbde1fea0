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
