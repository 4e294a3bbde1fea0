"""Run records: the record (v2), the LineageRecorder monitor, and the store that finds them.

Example:
    >>> from ubunye.lineage import LineageRecorder, RecordStore, RunRecord
    >>> RunRecord(run_id="r", usecase="u", package="p", task="t").record_version
    2
"""

from __future__ import annotations

from ubunye.lineage.record import (
    RECORD_VERSION,
    DatasetRecord,
    ErrorInfo,
    ExpectationResult,
    RunRecord,
    Timing,
)
from ubunye.lineage.recorder import LineageRecorder
from ubunye.lineage.store import RecordStore, StoredRecord, load_record

__all__ = [
    "RECORD_VERSION",
    "DatasetRecord",
    "ErrorInfo",
    "ExpectationResult",
    "LineageRecorder",
    "RecordStore",
    "RunRecord",
    "StoredRecord",
    "Timing",
    "load_record",
]
