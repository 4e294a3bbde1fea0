"""rows-v1: a content hash of every row of a table, the same on every engine (docs/rows-v1.md).

Example:
    >>> import pandas as pd
    >>> from ubunye.hashing import hash_frame
    >>> hash_frame(pd.DataFrame({"id": [1, 2]})).data_hash.startswith("sha256:")
    True
"""

from __future__ import annotations

from ubunye.hashing.digest import HASH_METHOD, FrameHash
from ubunye.hashing.frame import canonical_lines, hash_frame
from ubunye.hashing.profile import PROFILE_METHOD, Buckets, ColumnProfile, FrameProfile, profile_frame

__all__ = [
    "HASH_METHOD",
    "PROFILE_METHOD",
    "Buckets",
    "ColumnProfile",
    "FrameHash",
    "FrameProfile",
    "canonical_lines",
    "hash_frame",
    "profile_frame",
]
