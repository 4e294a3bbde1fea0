"""The ``openlineage`` monitor: START and COMPLETE / FAIL run events for every run, through the official
openlineage-python client and its transports (http, file, console, kafka...).

What an event holds (docs/tasks-and-records.md, "OpenLineage"):

- job: namespace ``params.namespace``, else ``$OPENLINEAGE_NAMESPACE``, else ``ubunye``; name
  ``<usecase>/<package>/<task>`` (:func:`job_name`);
- run id: :func:`run_uuid` of the ubunye run id (deterministic, UUIDv7-shaped so it sorts by start time), kept in
  the record under ``openlineage.run_id``;
- datasets named by the OpenLineage naming spec (:func:`dataset_name`), with the standard ``schema``,
  ``dataSource`` and ``inputStatistics`` / ``outputStatistics`` (rowCount) facets and ubunye's own
  ``ubunye_rows_v1`` facet (data_hash, schema_hash, hash_method, hash_error, columns);
- the run facet ``ubunye_run`` (ubunye run id, code_hash, environment_hash, where the record is) and, on FAIL,
  the standard ``errorMessage`` facet.

A backend that fails (unreachable, refusing the event) never fails the run: the monitor logs it and notes it in
the record (``openlineage.errors``). ``openlineage.sent`` lists only events a transport delivered (an asynchronous
one is waited for); a disabled client (``skipped``) or one with no transport at all (``errors``) is handed no
event; a transport config the client would not use as written is refused (:func:`check_transport`).

Example:
    >>> run_uuid("20261202T093000.000000Z-a1b2c3")  # 0x01a23616e5c0 ms: 2026-12-02T09:30:00Z
    '01a23616-e5c0-7587-8d80-bfd2450f9513'
    >>> dataset_name("s3://bucket/data/orders"), dataset_name("/u/data/orders"), dataset_name("table:db.orders")
    (('s3://bucket', 'data/orders'), ('file', '/u/data/orders'), ('catalog', 'db.orders'))
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import difflib
import functools
import hashlib
import logging
import os
import threading
import time
import uuid
from dataclasses import asdict, is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit, urlunsplit

import ubunye
from ubunye.exceptions import ConfigError

if TYPE_CHECKING:
    from openlineage.client import OpenLineageClient
    from openlineage.client.event_v2 import RunEvent

    from ubunye.context import RunContext, RunOptions
    from ubunye.lineage.record import DatasetRecord, ErrorInfo
    from ubunye.lineage.recorder import LineageRecorder, RunRecords

log = logging.getLogger("ubunye")

#: The producer of every event and facet (a URI, as the spec requires).
PRODUCER = f"https://pypi.org/project/ubunye/{ubunye.__version__}/"
#: Where the JSON Schemas of ubunye's facets are published; the same files ship in ``ubunye/lineage/facets/``.
SCHEMA_BASE = "https://ubunye.dev/spec/openlineage/facets/1-0-0/"
#: The facet names (keys of ``facets``).
ROWS_FACET, RUN_FACET = "ubunye_rows_v1", "ubunye_run"
#: The namespace of UUIDs derived from run ids that hold no time (uuid5).
_RUN_NAMESPACE = uuid.UUID("6f1c1f0e-8c4e-5a57-9a55-75626e796531")


def run_uuid(run_id: str) -> str:
    """The OpenLineage run id (a UUID) of a ubunye run id, the same every time.

    A run id ubunye made (``20261202T093000.000000Z-a1b2c3``) gives a UUIDv7: its first 48 bits are the run's
    start in milliseconds (so backends that sort by run id sort by time), the other 74 free bits the first bits
    of the SHA-256 of the run id. Any other run id gives ``uuid5`` of it.

    Example:
        >>> run_uuid("r1") == run_uuid("r1") != run_uuid("r2")
        True
        >>> uuid.UUID(run_uuid("20261202T093000.000000Z-a1b2c3")).version
        7
    """
    digest = int.from_bytes(hashlib.sha256(run_id.encode("utf-8")).digest()[:10], "big")  # 80 bits
    try:
        started = dt.datetime.strptime(run_id[:23], "%Y%m%dT%H%M%S.%fZ").replace(tzinfo=dt.timezone.utc)
    except ValueError:
        return str(uuid.uuid5(_RUN_NAMESPACE, run_id))
    millis = int(started.timestamp() * 1000) & ((1 << 48) - 1)
    rand_a = (digest >> 68) & 0xFFF  # 12 bits
    rand_b = digest & ((1 << 62) - 1)  # 62 bits
    value = (millis << 80) | (0x7 << 76) | (rand_a << 64) | (0b10 << 62) | rand_b
    return str(uuid.UUID(int=value))


def dataset_name(location: str | None, table_namespace: str = "catalog") -> tuple[str, str]:
    """``(namespace, name)`` of a recorded location, as the OpenLineage naming spec names datasets.

    ``s3://bucket/key`` (and ``s3a://``) -> ``s3://bucket``, ``key``; ``gs://bucket/key`` -> ``gs://bucket``;
    ``abfss://container@account.dfs.core.windows.net/path`` -> that authority and ``path`` (``wasbs://`` alike);
    ``hdfs://host:port/path`` -> ``hdfs://host:port``, ``/path``; a local path or ``file://`` URL -> ``file``, the
    absolute path; ``dbfs:/path`` -> ``dbfs``, ``/path``; a catalog table ``table:db.t`` -> ``table_namespace``
    (e.g. ``hive://metastore:9083``), ``db.t``.

    Example:
        >>> dataset_name("abfss://raw@acct.dfs.core.windows.net/sales/2026")
        ('abfss://raw@acct.dfs.core.windows.net', 'sales/2026')
        >>> dataset_name("file:///u/data/o"), dataset_name("hdfs://nn:8020/data/o")
        (('file', '/u/data/o'), ('hdfs://nn:8020', '/data/o'))
    """
    where = location or ""
    if where.startswith("table:"):
        return table_namespace, where[len("table:") :]
    parts = urlsplit(where)
    scheme = parts.scheme.lower()
    if not scheme or len(scheme) == 1:  # a plain path (a Windows drive letter is no scheme)
        return "file", where
    if scheme == "file":
        return "file", unquote(parts.path)
    host = _host(scheme, parts.netloc)
    if scheme in ("s3", "s3a", "s3n"):
        return f"s3://{host}", parts.path.lstrip("/")
    if scheme in ("gs", "gcs"):
        return f"gs://{host}", parts.path.lstrip("/")
    if scheme in _CONTAINER_SCHEMES:
        return f"{scheme}://{host}", parts.path.lstrip("/")
    if scheme == "dbfs":
        return (f"dbfs://{host}" if host else "dbfs"), parts.path
    return f"{scheme}://{host}", parts.path


#: Schemes whose ``container@account`` names a container, not a user: kept in the namespace, as the spec says.
_CONTAINER_SCHEMES = frozenset({"abfs", "abfss", "wasb", "wasbs"})


def _host(scheme: str, netloc: str) -> str:
    """The authority of a URL without its userinfo (``user:password@``): credentials name no dataset, and a
    dataset read with them or without is one dataset. An Azure ``container@account`` is kept whole."""
    if scheme in _CONTAINER_SCHEMES and ":" not in netloc.rpartition("@")[0]:
        return netloc
    return netloc.rpartition("@")[2]


def source_uri(location: str | None, table_namespace: str = "catalog") -> str:
    """The ``dataSource`` URI of a recorded location: a URL without its userinfo, a local path as a ``file://``
    URI, a catalog table as its namespace.

    Example:
        >>> source_uri("s3://AKIA:pw@bucket/data/o"), source_uri("/u/data/my orders")
        ('s3://bucket/data/o', 'file:///u/data/my%20orders')
    """
    where = location or ""
    namespace, name = dataset_name(where, table_namespace)
    if where.startswith("table:"):
        return namespace
    if namespace == "file":
        return Path(os.path.abspath(name)).as_uri()
    parts = urlsplit(where)
    return urlunsplit(parts._replace(netloc=_host(parts.scheme.lower(), parts.netloc)))


def schema_fields(schema: str | None) -> list[tuple[str, str]]:
    """``(name, type)`` of each top-level column of a rows-v1 schema string (``struct<"a":int64,...>``), read by
    the one parser of schema strings (:func:`ubunye.hashing.types.parse_schema`); ``[]`` for anything else.

    Example:
        >>> schema_fields('struct<"a b":int64,"c":struct<"x,y":list<string>>,"d":decimal(10,2)>')
        [('a b', 'int64'), ('c', 'struct<"x,y":list<string>>'), ('d', 'decimal(10,2)')]
    """
    from ubunye.hashing.types import format_type, parse_schema

    if not schema:
        return []
    try:
        return [(name, format_type(tree)) for name, tree in parse_schema(schema)]
    except (ValueError, RecursionError):  # not a rows-v1 schema string: the facet is left out, not guessed
        return []


@functools.cache
def _facets() -> dict[str, type]:
    """ubunye's custom facet classes (built on first use: openlineage-python is an optional extra)."""
    import attr
    from openlineage.client.facet_v2 import DatasetFacet, RunFacet

    @attr.define
    class UbunyeRowsV1DatasetFacet(DatasetFacet):
        """The rows-v1 fingerprint of a dataset (docs/rows-v1.md): the same data_hash means the same rows."""

        data_hash: str | None = attr.field(default=None)
        schema_hash: str | None = attr.field(default=None)
        hash_method: str | None = attr.field(default=None)
        hash_error: str | None = attr.field(default=None)
        row_count: int | None = attr.field(default=None)
        columns: dict[str, Any] | None = attr.field(default=None)

        @staticmethod
        def _get_schema() -> str:
            return SCHEMA_BASE + "UbunyeRowsV1DatasetFacet.json#/$defs/UbunyeRowsV1DatasetFacet"

    @attr.define
    class UbunyeRunFacet(RunFacet):
        """The ubunye run behind an OpenLineage run, and where its record is."""

        run_id: str
        code_hash: str | None = attr.field(default=None)
        environment_hash: str | None = attr.field(default=None)
        record: str | None = attr.field(default=None)
        ubunye_version: str = attr.field(default=ubunye.__version__)

        @staticmethod
        def _get_schema() -> str:
            return SCHEMA_BASE + "UbunyeRunFacet.json#/$defs/UbunyeRunFacet"

    return {ROWS_FACET: UbunyeRowsV1DatasetFacet, RUN_FACET: UbunyeRunFacet}


def check_transport(transport: object, key: str = "params.transport") -> None:
    """Refuse a transport config the client would not send through as written, rather than let it print events
    to its log or drop a key without a word: not a mapping; empty or without a ``type`` (the client ignores it
    and falls back to the console: ``{url: ...}`` reaches no backend); a ``type`` the client does not know (a
    dotted ``module.Class`` of a transport of your own is not checked); a key the transport of that type does not
    read (``tmeout: 3``: :func:`_keys_ignored`). The transports of a ``composite`` and the ``transport`` of a
    ``transform`` are checked alike. What the client itself refuses (an http transport with no ``url``) is left
    to it: the events are then noted in the record's ``openlineage.errors``.

    Raises:
        ConfigError: naming the key (``params.transport.tmeout: ...``).

    Example:
        >>> check_transport({"type": "http", "url": "http://marquez:5000", "tmeout": 3})
        Traceback (most recent call last):
        ubunye.exceptions.ConfigError: params.transport.tmeout: the http transport does not read this key (the ...
    """
    from openlineage.client.transport import get_default_factory
    from openlineage.client.utils import import_from_string

    if not isinstance(transport, dict):
        raise ConfigError(f"{key}: expected a mapping such as {{type: http, url: ...}}, got {type(transport).__name__}")
    known = get_default_factory().transports
    if not transport:
        msg = f"{key}: empty: give its type ({{type: http, url: ...}}), or leave it out for the client's own settings"
        raise ConfigError(msg)
    kind = transport.get("type")
    if kind is None:
        msg = (
            f"{key}.type: missing: the client ignores a transport with no type and only prints events to its log "
            f"(types: {', '.join(sorted(known))})"
        )
        raise ConfigError(msg)
    if not isinstance(kind, str) or not kind.strip():
        raise ConfigError(f"{key}.type: expected a transport type such as http, got {kind!r}"[:300])
    if kind not in known:
        if "." in kind:  # a transport class of your own, imported by the client when it first sends
            return
        raise ConfigError(f"{key}.type: unknown transport {kind[:60]!r} (types: {', '.join(sorted(known))})")
    found = known[kind]
    transport_class = import_from_string(found) if isinstance(found, str) else found
    config_class = transport_class.config_class
    if isinstance(config_class, str):
        config_class = import_from_string(config_class)
    for name in _keys_ignored(config_class, transport):
        close = difflib.get_close_matches(name, [n for n in _field_names(config_class) if n != name], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; see the client's {config_class.__name__}"
        raise ConfigError(f"{key}.{name}: the {kind} transport does not read this key (the client drops it{hint})")
    children = transport.get("transports") if kind == "composite" else None
    if isinstance(children, list):
        for i, child in enumerate(children):
            check_transport(child, f"{key}.transports[{i}]")
    elif isinstance(children, dict):
        for name, child in children.items():
            if child:  # the client skips an empty one
                check_transport(child, f"{key}.transports.{name}")
    if kind == "transform" and isinstance(transport.get("transport"), dict):
        check_transport(transport["transport"], f"{key}.transport")


#: Keys the client's transport factory takes from every transport config itself.
_FACTORY_KEYS = frozenset({"type", "name", "priority"})


class _Probe:
    """A value no config holds by chance: where it lands tells whether a key was read."""


def _keys_ignored(config_class: type, transport: dict[str, Any]) -> list[str]:
    """The keys of ``transport`` that the client's ``config_class.from_dict`` drops without a word.

    The client's own reading is the oracle (its keys are field names, camelCase aliases, lowercased env
    spellings...): each key in turn is given a :class:`_Probe` value; a key whose probe neither reaches the config
    built nor makes ``from_dict`` refuse it was not read. A config the client refuses as a whole is not probed.
    """
    try:
        config_class.from_dict(dict(transport))  # type: ignore[attr-defined]
    except Exception:  # the client refuses it itself, and says why when it first sends
        return []
    ignored = []
    for name in transport:
        if name in _FACTORY_KEYS:
            continue
        probe = _Probe()
        try:
            made = config_class.from_dict({**transport, name: probe})  # type: ignore[attr-defined]
        except Exception:  # it read the value, and refused a probe
            continue
        if not _holds(made, probe):
            ignored.append(str(name))
    return ignored


def _holds(value: object, probe: _Probe, depth: int = 0) -> bool:
    """Whether ``probe`` is somewhere in ``value`` (fields of attrs or dataclass objects, attributes, mappings,
    sequences), a few levels deep."""
    import attr

    if value is probe:
        return True
    if depth > 6 or isinstance(value, (str, bytes, int, float, type)) or value is None:
        return False
    if isinstance(value, dict):
        parts: list[object] = [*value.keys(), *value.values()]
    elif isinstance(value, (list, tuple, set, frozenset)):
        parts = list(value)
    else:
        cls = type(value)
        parts = [getattr(value, f.name, None) for f in attr.fields(cls)] if attr.has(cls) else []
        if is_dataclass(value):
            parts += [getattr(value, f.name, None) for f in dataclasses.fields(value)]
        parts += list(getattr(value, "__dict__", {}).values())
    return any(_holds(part, probe, depth + 1) for part in parts)


def _field_names(config_class: type) -> list[str]:
    import attr

    names = [f.name for f in attr.fields(config_class)] if attr.has(config_class) else []
    if is_dataclass(config_class):
        names += [f.name for f in dataclasses.fields(config_class)]
    return [n for n in names if n not in ("session", "adapter")]  # set in code, never from a config


class OpenLineageMonitor:
    """Sends the OpenLineage events of every run (``monitors: [{type: openlineage, params: {...}}]``).

    Args:
        namespace: the job namespace (default ``$OPENLINEAGE_NAMESPACE``, else ``ubunye``).
        transport: the client's transport config, e.g. ``{type: http, url: "http://marquez:5000"}`` or
            ``{type: file, log_file_path: events.jsonl}``; by default the client's own settings
            (``OPENLINEAGE_URL``, ``OPENLINEAGE_CONFIG``, ``openlineage.yml``).
        table_namespace: the namespace of catalog tables (``hive://metastore:9083``, a workspace URL...).

    Raises:
        ConfigError: openlineage-python is not installed (``pip install 'ubunye[openlineage]'``); ``transport``
            is one the client would not send through as written (:func:`check_transport`).

    Example:
        >>> OpenLineageMonitor(transport={"type": "console"}).name, OpenLineageMonitor.essential
        ('openlineage', False)
    """

    name = "openlineage"
    #: A failing backend never fails the run (the runner logs it); the record notes it.
    essential = False
    #: The longest one event may take to send, retries included (seconds). The client's own timeouts bound each
    #: read, not the whole request: a backend answering one byte at a time would otherwise hold the run (and
    #: its output locks, and its final record) forever. An event still sending then is given up and noted.
    send_timeout: float = 60.0

    def __init__(
        self, namespace: str | None = None, transport: dict[str, Any] | None = None, table_namespace: str = "catalog"
    ) -> None:
        try:
            import openlineage.client  # noqa: F401
        except ImportError:
            msg = "the openlineage monitor needs openlineage-python: pip install 'ubunye[openlineage]'"
            raise ConfigError(msg) from None
        self.namespace = namespace or os.environ.get("OPENLINEAGE_NAMESPACE") or "ubunye"
        if transport is not None:
            check_transport(transport)
        self.transport = dict(transport) if transport is not None else None
        self.table_namespace = table_namespace
        #: Set by :func:`ubunye.monitors.build_monitors`: where the record of the run in progress is found (the
        #: events are noted in it), :data:`~ubunye.lineage.recorder.RUN_RECORDS`; or a LineageRecorder set by
        #: hand; None: no run is recorded.
        self.recorder: RunRecords | LineageRecorder | None = None
        self._client: OpenLineageClient | None = None
        self.events: list[Any] = []  # the events sent by this monitor, for whoever drives it
        # The notes of runs whose record does not exist yet (or is never kept), by run id: one monitor may serve
        # several runs, in turn or at once, and one run's notes must not reach another's record.
        self._pending: dict[str, dict[str, Any]] = {}
        self._pending_lock = threading.Lock()
        # Held while one event goes through an asynchronous transport (:meth:`_emit`).
        self._queue_lock = threading.Lock()

    def task_start(self, context: RunContext, options: RunOptions | None = None, **_: Any) -> None:  # noqa: ANN401 (ignored)
        """Send START."""
        self._send(context, "START", context.started_at, [], [], None, options)

    def task_end(
        self,
        context: RunContext,
        status: str,
        ended_at: str,
        outputs: list[DatasetRecord],
        error: ErrorInfo | None = None,
        inputs: list[DatasetRecord] | None = None,
        options: RunOptions | None = None,
        **_: Any,  # noqa: ANN401 (the hook arguments this monitor ignores)
    ) -> None:
        """Send COMPLETE (success) or FAIL, with every input and output and their facets."""
        state = "COMPLETE" if status == "success" else "FAIL"
        try:
            self._send(context, state, ended_at, list(inputs or []), list(outputs or []), error, options)
        finally:  # the run is over: notes its record never took are dropped
            with self._pending_lock:
                self._pending.pop(context.run_id, None)

    # --- building ---------------------------------------------------------------------------------------------

    def event(
        self,
        context: RunContext,
        state: str,
        at: str,
        inputs: list[DatasetRecord],
        outputs: list[DatasetRecord],
        error: ErrorInfo | None,
        options: RunOptions | None = None,
    ) -> RunEvent:
        """The RunEvent of one state of a run (the client's own model classes); its facet names the record at
        ``options.record_path(context)`` (none without ``options``)."""
        from openlineage.client.event_v2 import InputDataset, Job, OutputDataset, Run, RunEvent, RunState
        from openlineage.client.facet_v2 import JobFacet, error_message_run, job_type_job

        from ubunye.lineage.redact import mask_text, redact_record

        # Masked as the record is (its own texts, the protected fields kept), before anything is built from them:
        # an event leaves the process like a record, and no backend is trusted with more than the record holds.
        inputs, outputs = [redact_record(d) for d in inputs], [redact_record(d) for d in outputs]
        error = redact_record(error) if error is not None else None
        run_facets: dict[str, Any] = {RUN_FACET: self._run_facet(context, options)}
        if error is not None:
            run_facets["errorMessage"] = error_message_run.ErrorMessageRunFacet(
                message=f"{error.type}: {error.message} (stage {error.stage})", programmingLanguage="python",
                producer=PRODUCER,
            )  # fmt: skip
        job_facets: dict[str, JobFacet] = {
            "jobType": job_type_job.JobTypeJobFacet(
                processingType="BATCH", integration="UBUNYE", jobType="TASK", producer=PRODUCER
            )
        }
        return RunEvent(
            eventType=RunState[state],
            eventTime=at,
            run=Run(runId=run_uuid(context.run_id), facets=run_facets),
            job=Job(namespace=mask_text(self.namespace), name=job_name(context), facets=job_facets),
            inputs=[
                InputDataset(*self._name(d), facets=self._facets(d), inputFacets=self._stats(d, "in")) for d in inputs
            ],
            outputs=[
                OutputDataset(*self._name(d), facets=self._facets(d), outputFacets=self._stats(d, "out"))
                for d in outputs
            ],
            producer=PRODUCER,
        )

    def _name(self, d: DatasetRecord) -> tuple[str, str]:
        from ubunye.lineage.redact import mask_text

        namespace, name = dataset_name(d.location, self.table_namespace)
        return mask_text(namespace), name

    def _facets(self, d: DatasetRecord) -> dict[str, Any]:
        from openlineage.client.facet_v2 import datasource_dataset, schema_dataset

        from ubunye.lineage.redact import mask_text

        namespace, _ = self._name(d)
        out: dict[str, Any] = {
            "dataSource": datasource_dataset.DatasourceDatasetFacet(
                name=namespace, uri=mask_text(source_uri(d.location, self.table_namespace)), producer=PRODUCER
            )
        }
        fields = schema_fields(d.schema)
        if fields:
            out["schema"] = schema_dataset.SchemaDatasetFacet(
                fields=[schema_dataset.SchemaDatasetFacetFields(name=n, type=t) for n, t in fields], producer=PRODUCER
            )
        columns = getattr(d, "columns", None)  # the column fingerprints of a profile (rows-v1 section 12.1)
        if columns:
            columns = {k: (asdict(v) if is_dataclass(v) else v) for k, v in columns.items()}  # type: ignore[arg-type]
        out[ROWS_FACET] = _facets()[ROWS_FACET](
            data_hash=d.data_hash, schema_hash=d.schema_hash, hash_method=d.hash_method, hash_error=d.hash_error,
            row_count=d.row_count, columns=columns or None, producer=PRODUCER,
        )  # fmt: skip
        return out

    def _stats(self, d: DatasetRecord, side: str) -> dict[str, Any]:
        if d.row_count is None:
            return {}
        if side == "in":
            from openlineage.client.facet_v2 import input_statistics_input_dataset as stats

            return {"inputStatistics": stats.InputStatisticsInputDatasetFacet(rowCount=d.row_count, producer=PRODUCER)}
        from openlineage.client.facet_v2 import output_statistics_output_dataset as out_stats

        return {
            "outputStatistics": out_stats.OutputStatisticsOutputDatasetFacet(rowCount=d.row_count, producer=PRODUCER)
        }

    def _run_facet(self, context: RunContext, options: RunOptions | None) -> object:
        from ubunye.lineage.redact import mask_text

        record = getattr(self.recorder, "record", None)
        where = None
        if options is not None:
            try:
                found = options.record_path(context)
            except Exception:  # a name the store refuses: the record's own write says so
                found = None
            where = None if found is None else str(found)
        return _facets()[RUN_FACET](
            run_id=context.run_id,
            code_hash=getattr(record, "code_hash", None),
            environment_hash=getattr(record, "environment_hash", None),
            record=None if where is None else mask_text(where),
            producer=PRODUCER,
        )

    # --- sending ----------------------------------------------------------------------------------------------

    def _client_for(self) -> OpenLineageClient:
        if self._client is None:
            from openlineage.client import OpenLineageClient

            # A copy: the client's factory pops name and priority from the mapping it is given.
            self._client = (
                OpenLineageClient(config={"transport": dict(self.transport)}) if self.transport else OpenLineageClient()
            )
        return self._client

    def _send(
        self,
        context: RunContext,
        state: str,
        at: str,
        inputs: list[DatasetRecord],
        outputs: list[DatasetRecord],
        error: ErrorInfo | None,
        options: RunOptions | None,
    ) -> None:
        from ubunye.lineage.redact import mask_text

        note = self._note(context)
        try:
            event = self.event(context, state, at, inputs, outputs, error, options)
            client = self._client_for()
            unsent = _unsent(client)
            if unsent is None:
                self._emit(event)
        except _ChildFailed as exc:  # the composite sent it; one of its transports did not take it
            why = mask_text(f"{state}: {exc}")[:500]
            log.warning("monitor openlineage: %s", why)
            note.setdefault("errors", []).append(why)
            unsent = None
        except Exception as exc:  # never fails the run: logged, and noted in the record
            why = mask_text(f"{state}: {type(exc).__name__}: {' '.join(str(exc).split())}")[:500]
            log.warning("monitor openlineage could not send %s", why)
            note.setdefault("errors", []).append(why)
            return
        if unsent is not None:  # nothing left the process: not "sent"
            field, reason = unsent
            (log.warning if field == "errors" else log.info)("monitor openlineage did not send %s: %s", state, reason)
            note.setdefault(field, []).append(f"{state}: {reason}")
            return
        self.events.append(event)
        note.setdefault("sent", []).append(state)

    def _emit(self, event: RunEvent) -> None:
        """Send one event, waiting at most :attr:`send_timeout` seconds for it to be taken, retries included (the
        client runs on a daemon thread, so a backend that never answers holds neither the run nor the end of the
        process). An asynchronous transport (``async_http``) only queues the event: the monitor then waits, within
        the same deadline, until the transport has the backend's answer, and counts the event sent only if it took
        it. Events sent through one asynchronous client go one at a time: its counts of events delivered and failed
        are then this event's.

        Raises:
            TimeoutError: the event was still being sent after ``send_timeout`` seconds (the client is then
                dropped: the next event gets a new one rather than share a connection still in use).
            ConnectionError: an asynchronous transport could not deliver the event (the backend refused it or
                could not be reached).
        """
        deadline = time.monotonic() + self.send_timeout
        client = self._client_for()
        queued = bool(_queues(client.transport)) or _may_queue(client.transport)
        if not queued:
            self._emit_within(client, event, deadline)
            return
        if not self._queue_lock.acquire(timeout=max(deadline - time.monotonic(), 0.0)):
            msg = f"another run's event held the transport for {self.send_timeout:g}s; given up"
            raise TimeoutError(msg)
        try:
            before = {id(q): dict(q.get_stats()) for q in _queues(client.transport)}
            state = event.eventType.value if event.eventType is not None else ""
            with _FailureLog(f"{event.run.runId}-{state}") as failures:
                self._emit_within(client, event, deadline)
                queues = _queues(client.transport)  # a transport may make its queue on first use
                done = all(q.wait_for_completion(max(deadline - time.monotonic(), 0.0)) for q in queues)
            failed = sum(q.get_stats().get("failed", 0) - before.get(id(q), {}).get("failed", 0) for q in queues)
        finally:
            self._queue_lock.release()
        if failed:
            why = failures[-1] if failures else "the client logged why"
            if getattr(client.transport, "kind", None) == "composite":
                # One child's failure: the composite's other transports may have taken it (as for a synchronous
                # child, whose failure the composite logs and the event still counts sent): sent, and noted.
                raise _ChildFailed(f"a transport of the composite did not take the event ({why})")
            raise ConnectionError(f"the backend did not take the event ({why})")
        if not done:
            self._client = None
            msg = f"the backend had not taken the event after {self.send_timeout:g}s; given up (it may still arrive)"
            raise TimeoutError(msg)

    def _emit_within(self, client: OpenLineageClient, event: RunEvent, deadline: float) -> None:
        """``client.emit(event)`` on a daemon thread, given up at ``deadline`` (:meth:`_emit`)."""
        failed: list[BaseException] = []

        def send() -> None:
            try:
                client.emit(event)
            except BaseException as exc:  # handed to the run's thread, which decides
                failed.append(exc)

        sender = threading.Thread(target=send, name="ubunye-openlineage-send", daemon=True)
        sender.start()
        sender.join(max(deadline - time.monotonic(), 0.0))
        if sender.is_alive():
            self._client = None
            msg = f"the backend had not taken the event after {self.send_timeout:g}s; given up (it may still arrive)"
            raise TimeoutError(msg)
        if failed:
            if isinstance(failed[0], Exception):
                raise failed[0]
            # a SystemExit or the like inside the client ended its thread, not the run
            raise RuntimeError(f"{type(failed[0]).__name__}: {failed[0]}") from None

    def _note(self, context: RunContext) -> dict[str, Any]:
        """``record.extra["openlineage"]`` of this run (a scratch dict when no record is kept)."""
        base = {"run_id": run_uuid(context.run_id), "namespace": self.namespace, "job": job_name(context)}
        record = self.recorder.record if self.recorder is not None else None
        with self._pending_lock:
            if record is None or record.run_id != context.run_id:
                return self._pending.setdefault(context.run_id, base)
            pending = self._pending.pop(context.run_id, None)
        note: dict[str, Any] = record.extra.setdefault("openlineage", base)
        if pending is not None:  # what happened before the record existed
            for key in ("sent", "errors", "skipped"):
                if pending.get(key):  # no empty list: a key is there only when it says something
                    note.setdefault(key, []).extend(x for x in pending[key] if x not in note.get(key, []))
        return note


def job_name(context: RunContext) -> str:
    """``<usecase>/<package>/<task>``: the task's own path under the usecase folder, one job per task.

    A dot cannot separate the parts: names may hold dots, so ``a.b/c/t`` and ``a/b.c/t`` were one job. A ``/``
    is in no usecase, package or task name (each is a folder's name, and the record store refuses it), so the
    name is the parts as they are; a part given by hand that holds one is written with ``/`` as ``%2F`` (and
    ``%`` as ``%25``), so no two tasks share a name.

    Example:
        >>> from types import SimpleNamespace as Ctx
        >>> job_name(Ctx(usecase="shop.eu", package="daily", task="orders"))
        'shop.eu/daily/orders'
        >>> job_name(Ctx(usecase="a/b", package="100%", task="t"))
        'a%2Fb/100%25/t'
    """
    return "/".join(_job_part(part) for part in (context.usecase, context.package, context.task))


def _job_part(part: str) -> str:
    return part.replace("%", "%25").replace("/", "%2F")


def _unsent(client: OpenLineageClient) -> tuple[str, str] | None:
    """Why an event given to ``client`` would reach no backend, and the note's field that says so, or None.

    ``OPENLINEAGE_DISABLED=true`` (or a ``noop`` transport): the client sends nothing, as asked; noted under
    ``skipped``. No transport anywhere (not in ``params.transport``, ``$OPENLINEAGE_URL``, ``$OPENLINEAGE_CONFIG``
    or ``openlineage.yml``): the client would only print the event to its log; noted under ``errors``. The event
    is not handed to the client in either case. A ``console`` transport asked for by name is sent.
    """
    kind = getattr(client.transport, "kind", None)
    if kind == "noop":
        if os.environ.get("OPENLINEAGE_DISABLED", "").lower().strip() == "true":
            return "skipped", "OPENLINEAGE_DISABLED=true: the client sends no event"
        return "skipped", "the transport is noop: it sends no event"
    if kind == "console" and (client.config.transport or {}).get("type") != "console":
        return "errors", (
            "no OpenLineage transport is configured (params.transport, $OPENLINEAGE_URL, $OPENLINEAGE_CONFIG or "
            "openlineage.yml): the client would only print the event to its log; not sent"
        )
    return None


def _children(transport: object) -> list[object]:
    """The transports inside one: a composite's, a transform's, a datadog transport's asynchronous one."""
    found: list[object] = []
    if getattr(transport, "kind", None) == "composite":
        found += list(getattr(transport, "transports", []))
    for name in ("transport", "async_http"):
        inner = getattr(transport, name, None)
        if inner is not None and hasattr(inner, "emit"):
            found.append(inner)
    return found


def _queues(transport: object, depth: int = 0) -> list[Any]:
    """The asynchronous transports in ``transport`` (itself included): those that queue an event and send it later
    (``async_http``), which have ``wait_for_completion`` and ``get_stats``."""
    own = [transport] if hasattr(transport, "wait_for_completion") and hasattr(transport, "get_stats") else []
    if depth > 4:
        return own
    return own + [q for child in _children(transport) for q in _queues(child, depth + 1)]


def _may_queue(transport: object, depth: int = 0) -> bool:
    """Whether ``transport`` may make an asynchronous transport on first use (datadog's, when its rules say so)."""
    if hasattr(transport, "_async_http_config"):
        return True
    return depth <= 4 and any(_may_queue(child, depth + 1) for child in _children(transport))


class _ChildFailed(ConnectionError):
    """An asynchronous transport inside a composite did not take an event the composite sent (:meth:`_emit`)."""


class _FailureLog(logging.Handler):
    """Collects, while in use, what the client's asynchronous transport logs of one event it could not deliver
    (``Failed to emit event (event_id) <run id>-START to ..., status code: 500``): the reason noted in the record.
    Only the lines naming that event are kept (its id is ``<run id>-<event type>``): other runs log there too."""

    _LOGGER = "openlineage.client.transport"

    def __init__(self, event_id: str) -> None:
        super().__init__(logging.ERROR)
        self.event_id = event_id
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception:  # a message that does not format is no reason
            return
        if self.event_id not in text:
            return
        if record.exc_info and record.exc_info[1] is not None:
            text += f": {type(record.exc_info[1]).__name__}: {record.exc_info[1]}"
        self.messages.append(" ".join(text.split())[:300])

    def __enter__(self) -> list[str]:
        logging.getLogger(self._LOGGER).addHandler(self)
        return self.messages

    def __exit__(self, *_: object) -> None:
        logging.getLogger(self._LOGGER).removeHandler(self)
