"""Secrets are masked by key, by shape and by value: never in a record file, a CLI output, stderr or a log line.

Every way of writing a secret below runs a real task end to end on the pandas engine, made to fail so that the
secret reaches an error message, and then looks for the secret's text in the raw record file, ``lineage show``
(also ``--json``), ``trace`` (also ``--json``), ``list --json`` and the stderr of ``ubunye run``. The readers run
with the process' remembered secrets forgotten: what they print is what is on disk.
"""

from __future__ import annotations

import json
import logging
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from ubunye.cli.errors import error_line
from ubunye.cli.main import app
from ubunye.lineage import RecordStore
from ubunye.lineage.environment import canonical_hash
from ubunye.lineage.record import (
    BucketsRecord,
    ColumnRecord,
    DatasetRecord,
    ErrorInfo,
    ExpectationResult,
    ProcessInfo,
    RunRecord,
    Timing,
)
from ubunye.lineage.redact import (
    MASK,
    forget_secrets,
    mask_text,
    redact_config,
    redact_record,
    remember_secrets,
    remembered_secrets,
)
from ubunye.lineage.secrets import MIN_SECRET_LENGTH, find_secrets, is_secret_name, mask_shapes, secret_values

runner = CliRunner()

# A task that fails on purpose, quoting one config value (or the part of it a regex picks) the way a careless
# error message would: "cannot connect: <the plain secret>". Only masking by value can catch that text.
LEAKY = """
import re

import pandas as pd

from ubunye import Task


class Leaky(Task):
    def transform(self, sources):
        leak = self.params.get("leak")
        if not leak:
            return {"out": pd.DataFrame({"a": [1, 2]})}
        value = self.config.rendered
        for key in leak:
            value = value[key]
        if self.params.get("part"):
            value = re.search(self.params["part"], value, re.S).group(1)
        raise ValueError(f"cannot connect: {value}")
"""


@pytest.fixture(autouse=True)
def _clean_registry():
    # The registry is process-wide: each case must prove its own masking, not ride on an earlier case's.
    forget_secrets()
    yield
    forget_secrets()


@pytest.fixture
def uc(tmp_path):
    (tmp_path / "uc" / "shop" / "daily").mkdir(parents=True)
    return tmp_path / "uc"


def doc(
    out: dict[str, Any] | None = None,
    inputs: dict[str, Any] | None = None,
    leak: list[str] | None = None,
    part: str | None = None,
    params: dict[str, Any] | None = None,
    engine: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A config.yaml document: one parquet output ``out`` (plus ``out`` keys), the Leaky task quoting ``leak``."""
    transform_params = {**(params or {}), **({"leak": leak} if leak else {}), **({"part": part} if part else {})}
    cfg: dict[str, Any] = {
        "MODEL": "etl",
        "CONFIG": {
            "inputs": inputs or {},
            "outputs": {"out": {"format": "parquet", "path": "data/out", **(out or {})}},
            "transform": {"type": "task", "params": transform_params},
            "monitors": ["lineage"],
        },
    }
    if engine:
        cfg["ENGINE"] = engine
    return cfg


OUT = ["CONFIG", "outputs", "out"]
# Secrets in reader or writer options: transform params here, since the in-process engines refuse options they
# would ignore (every one of a parquet output's); masking goes by key name and shape wherever a value sits.
PARAMS = ["CONFIG", "transform", "params"]
# Cases whose output is at a URL say format delta: a plain-file overwrite at a URL is refused before the run
# (test_an_output_refused_before_the_run_masks_its_url), and these cases need the run to reach the transform.


@dataclass
class Case:
    """One way of writing a secret: the config (a document or raw YAML text), the secret texts, where it fails."""

    id: str
    config: dict[str, Any] | str
    secrets: list[str]
    stage: str | None = "transform"  # None: the config does not load (no record)
    env: dict[str, str] = field(default_factory=dict)


CASES = [
    Case("password-key", doc(params={"password": "Pw-key-7781"}, leak=[*PARAMS, "password"]),
         ["Pw-key-7781"]),
    Case("token-key", doc(params={"token": "Tok-key-5512"}, leak=[*PARAMS, "token"]), ["Tok-key-5512"]),
    Case("creds-subtree",
         doc({"storage_options": {"creds": {"user": "svc-user-4411", "pass": "Creds-pw-4412"}}},
             leak=[*OUT, "storage_options", "creds", "pass"]),
         ["svc-user-4411", "Creds-pw-4412"]),
    Case("authorization-header",
         doc({"storage_options": {"headers": {"Authorization": "Bearer AuthTok-9931"}}},
             leak=[*OUT, "storage_options", "headers", "Authorization"], part=r"Bearer (.+)"),
         ["AuthTok-9931"]),
    Case("header-name-value-pair",
         doc({"storage_options": {"headers": [{"name": "Authorization", "value": "Bearer PairTok-3321"}]}},
             leak=[*OUT, "storage_options", "headers", 0, "value"]),
         ["PairTok-3321"]),
    Case("x-api-key-header",
         doc({"storage_options": {"headers": {"x-api-key": "ApiKeyHdr-6610"}}},
             leak=[*OUT, "storage_options", "headers", "x-api-key"]),
         ["ApiKeyHdr-6610"]),
    Case("cookie-header",
         doc({"storage_options": {"headers": {"Cookie": "session=CookieVal-7720"}}},
             leak=[*OUT, "storage_options", "headers", "Cookie"], part=r"session=(.+)"),
         ["CookieVal-7720"]),
    Case("oauth-code-query",
         doc({"format": "delta", "path": "https://api.example.com/export?code=OauthCode-1204&page=2"},
             leak=[*OUT, "path"], part=r"code=([^&]+)"),
         ["OauthCode-1204"]),
    Case("sas-sig-query",
         doc({"format": "delta", "path": "https://acct.blob.core.windows.net/c/x?sv=2022-11-02&ss=b&sig=SasSig%2B8812%3D"},
             leak=[*OUT, "path"], part=r"sig=([^&]+)"),
         ["SasSig%2B8812%3D", "SasSig+8812="]),
    Case("x-amz-signature",
         doc({"format": "delta", "path": "https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIAXX%2F20261201&X-Amz-Signature=AmzSig0553"
                      "&X-Amz-Security-Token=AmzTok0554"},
             leak=[*OUT, "path"], part=r"Signature=([^&]+)"),
         ["AmzSig0553", "AmzTok0554"]),
    Case("url-password-with-at-and-slash",
         doc(params={"url": "postgresql://app:p@ss/w0rd:7731@db.host:5432/x"}, leak=[*PARAMS, "url"],
             part=r"app:(.*)@db"),
         ["p@ss/w0rd:7731"]),
    Case("token-as-url-user",
         doc({"format": "delta", "path": "https://ghp_UrlUser7741abcdefghijkl@github.com/o/r.git"}, leak=[*OUT, "path"],
             part=r"//([^@]+)@"),
         ["ghp_UrlUser7741abcdefghijkl"]),
    Case("jdbc-postgres",
         doc(params={"url": "jdbc:postgresql://h/db?user=u&password=JdbcPg-2201"},
             leak=[*PARAMS, "url"], part=r"password=([^&]+)"),
         ["JdbcPg-2201"]),
    Case("jdbc-sqlserver",
         doc(params={"url": "jdbc:sqlserver://h:1433;databaseName=d;user=u;password=JdbcMs-2202;"},
             leak=[*PARAMS, "url"], part=r"password=([^;]+)"),
         ["JdbcMs-2202"]),
    Case("jdbc-oracle",
         doc(params={"url": "jdbc:oracle:thin:scott/JdbcOra-2203@//db.example.com:1521/ORCL"},
             leak=[*PARAMS, "url"], part=r"scott/([^@]+)@"),
         ["JdbcOra-2203"]),
    Case("jdbc-mysql",
         doc(params={"url": "jdbc:mysql://u:JdbcMy-2204@h:3306/db"}, leak=[*PARAMS, "url"],
             part=r"u:([^@]+)@"),
         ["JdbcMy-2204"]),
    Case("oracle-user-pass-at-host",
         doc(params={"dsn": "app_user/OraPw-2205@db.example.com:1521/ORCL"}, leak=[*PARAMS, "dsn"],
             part=r"user/([^@]+)@"),
         ["OraPw-2205"]),
    Case("account-key-inline",
         doc({"storage_options": {"connection": "DefaultEndpointsProtocol=https;AccountName=acct;"
                                                "AccountKey=AcctKey+3301/xyz==;EndpointSuffix=core.windows.net"}},
             leak=[*OUT, "storage_options", "connection"], part=r"AccountKey=([^;]+)"),
         ["AcctKey+3301/xyz=="]),
    Case("private-key-block",
         doc({"storage_options": {"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvPem4401Body\n"
                                                 "-----END PRIVATE KEY-----\n"}},
             leak=[*OUT, "storage_options", "private_key"], part=r"KEY-----\n(.+?)\n"),
         ["MIIEvPem4401Body"]),
    Case("spark-conf-account-key",
         doc(leak=["ENGINE", "spark_conf", "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net"],
             engine={"spark_conf": {"spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net": "SparkKey-5501"}}),
         ["SparkKey-5501"]),
    Case("client-secret-param", doc(params={"client_secret": "ClientSec-5502"}, leak=["CONFIG", "transform",
                                                                                        "params", "client_secret"]),
         ["ClientSec-5502"]),
    Case("env-var-in-option",
         doc(params={"connect_args": "{{ env.DB_PASSWORD }}"}, leak=[*PARAMS, "connect_args"]),
         ["EnvOpt-6601"], env={"DB_PASSWORD": "EnvOpt-6601"}),
    Case("env-var-in-path",  # a real read failure: the engine's message quotes the path
         doc(inputs={"src": {"format": "parquet", "path": "data/{{ env.DB_PASSWORD }}/orders"}}),
         ["EnvPath-6602"], stage="read", env={"DB_PASSWORD": "EnvPath-6602"}),
    Case("url-password-in-an-input-that-cannot-be-read",
         doc(inputs={"src": {"format": "parquet", "path": "s3://AKIAXX:S3Url-6603@bucket/x?sig=S3Sig-6604"}}),
         ["S3Url-6603", "S3Sig-6604"], stage="read"),
    Case("template-error-quoting-a-url",
         "CONFIG:\n  outputs:\n    out: {format: parquet, path: \"postgresql://u:Tpl@pw-7701@db/{{ dt\"}\n",
         ["Tpl@pw-7701"], stage=None),
    Case("yaml-error-quoting-a-password-line",
         "CONFIG:\n  outputs:\n    out:\n      format: parquet\n      password: YamlPw-7702: oops\n",
         ["YamlPw-7702"], stage=None),
]  # fmt: skip


def invoke(*args: Any):
    return runner.invoke(app, [str(a) for a in args])


def write(uc: Path, case: Case) -> str:
    task = case.id.replace("-", "_")
    task_dir = uc / "shop" / "daily" / task
    task_dir.mkdir(parents=True)
    text = case.config if isinstance(case.config, str) else yaml.safe_dump(case.config, sort_keys=False)
    (task_dir / "config.yaml").write_text(text)
    (task_dir / "transformations.py").write_text(LEAKY)
    return task


def absent(secrets: list[str], text: str, where: str) -> None:
    for secret in secrets:
        for form in {secret, json.dumps(secret)[1:-1]}:
            assert form not in text, f"{secret!r} leaked into {where}:\n{text}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_secret_appears_nowhere(uc, case, monkeypatch):
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    task = write(uc, case)

    run = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", task, "--engine", "pandas")
    assert run.exit_code == 2, run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    absent(case.secrets, run.output + run.stderr, "the stderr of ubunye run")

    files = sorted((uc / ".ubunye").rglob("*")) if (uc / ".ubunye").exists() else []
    for path in files:
        if path.is_file():
            absent(case.secrets, path.read_bytes().decode("utf-8", "replace"), str(path))
    if case.stage is None:  # the config never loaded: no run, no record
        assert not [p for p in files if p.is_file()]
        assert MASK in run.stderr
        return

    (record,) = RecordStore(uc).records("shop", "daily", task)
    assert (record.status, record.error.stage) == ("failed", case.stage)
    assert MASK in record.error.message, record.error.message  # the secret reached the message, and was masked

    forget_secrets()  # the readers show what is on disk, not what this process remembers
    where = ["-d", uc, "-u", "shop", "-p", "daily", "-t", task]
    for command in (["show", "latest"], ["show", "latest", "--json"], ["trace", "latest"],
                    ["trace", "latest", "--json"], ["list", "--json"], ["list"]):  # fmt: skip
        result = invoke("lineage", *command, *where)
        assert result.exit_code == 0, result.output
        absent(case.secrets, result.output, f"lineage {' '.join(command)}")


def test_a_successful_run_records_the_config_masked_and_compare_shows_no_secret(uc, monkeypatch):
    monkeypatch.setenv("API_TOKEN", "OkTok-8801")
    config = doc({"storage_options": {"creds": {"user": "okuser-8803"}}},
                 params={"password": "OkPw-8802", "note": "{{ env.API_TOKEN }}"})  # fmt: skip
    task = write(uc, Case("ok", config, []))
    for _ in range(2):
        assert invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", task, "--engine", "pandas").exit_code == 0
    records = RecordStore(uc).records("shop", "daily", task)
    assert [r.status for r in records] == ["success", "success"]
    out, params = records[-1].config["CONFIG"]["outputs"]["out"], records[-1].config["CONFIG"]["transform"]["params"]
    assert params["password"] == MASK and out["storage_options"] == {"creds": MASK}
    assert records[0].config_hash == records[1].config_hash == canonical_hash(records[1].config)  # of what is shown
    forget_secrets()
    secrets = ["OkTok-8801", "OkPw-8802", "okuser-8803"]
    for path in (uc / ".ubunye").rglob("*.json"):
        absent(secrets, path.read_text(), str(path))
    compare = invoke("lineage", "compare", "latest~1", "latest", "-d", uc, "-t", task, "--json")
    assert compare.exit_code == 0, compare.output
    absent(secrets, compare.output, "lineage compare")


# --- the shapes, by hand --------------------------------------------------------------------------------------------
SHAPES = [
    ("postgresql://u:p@ss/w:rd@db.host:5432/x", "postgresql://u:***@db.host:5432/x"),
    ("https://ghp_xxx@github.com/o/r", "https://***@github.com/o/r"),
    ("read https://user:pw@host/x failed", "read https://user:***@host/x failed"),
    ("redis://:pw@host:6379/0", "redis://:***@host:6379/0"),
    ("http://u:p@[::1]:8080/x", "http://u:***@[::1]:8080/x"),
    ("https://u:p@host/x?email=a@b.com", "https://u:***@host/x?email=a@b.com"),
    ("bad template 'postgresql://u:p@ss@h/{{ dt': unexpected end",
     "bad template 'postgresql://u:***@h/{{ dt': unexpected end"),
    ("https://h/x?sig=abc&code=42&token=t&page=2", "https://h/x?sig=***&code=***&token=***&page=2"),
    ("https://h/x?access_token=a1&client_secret=c2&apikey=k3&key=k4&password=p5",
     "https://h/x?access_token=***&client_secret=***&apikey=***&key=***&password=***"),
    ("https://b/k?X-Amz-Credential=AK%2F1&X-Amz-Date=2026&X-Amz-Security-Token=T&X-Amz-Signature=S",
     "https://b/k?X-Amz-Credential=***&X-Amz-Date=2026&X-Amz-Security-Token=***&X-Amz-Signature=***"),
    ("https://a.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=a%2Bb%3D", "https://a.blob.core.windows.net/c?sv=2022-11-02&ss=b&sig=***"),
    ("jdbc:postgresql://h/db?user=u&password=p", "jdbc:postgresql://h/db?user=u&password=***"),
    ("jdbc:sqlserver://h;user=u;password=p;", "jdbc:sqlserver://h;user=u;password=***;"),
    ("jdbc:sqlserver://h;user=u;password={p;w};", "jdbc:sqlserver://h;user=u;password={***};"),
    ("jdbc:oracle:thin:user/pass@host:1521/svc", "jdbc:oracle:thin:user/***@host:1521/svc"),
    ("jdbc:oracle:thin:scott/tiger@//host:1521/svc", "jdbc:oracle:thin:scott/***@//host:1521/svc"),
    ("jdbc:mysql://u:p@h/db", "jdbc:mysql://u:***@h/db"),
    ("sqlplus scott/tiger@orcl", "sqlplus scott/***@orcl"),
    ('sqlplus scott/"p@ss/w"@db.example.com:1521/ORCL', "sqlplus scott/***@db.example.com:1521/ORCL"),
    ("Authorization: Bearer xyz", "Authorization: Bearer ***"),
    ("Authorization: Basic dXNlcjpw", "Authorization: Basic ***"),
    ("{'Authorization': 'Bearer abc', 'X-Trace': '1'}", "{'Authorization': 'Bearer ***', 'X-Trace': '1'}"),
    ("got Bearer abcdefgh1234 back", "got Bearer *** back"),
    ("X-Api-Key: k-123 rejected", "X-Api-Key: *** rejected"),
    ("Cookie: a=1; b=2", "Cookie: ***"),
    ("DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=K1+/==;EndpointSuffix=core.windows.net",
     "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=***;EndpointSuffix=core.windows.net"),
    ("password=hunter2 user=bob --token=t0k", "password=*** user=bob --token=***"),
    ("Connection(host='h', password='p', port=5)", "Connection(host='h', password='***', port=5)"),
    ('{"password": "p", "user": "u"}', '{"password": "***", "user": "u"}'),
    ("while parsing\n    password: hunter2\n    ^", "while parsing\n    password: ***\n    ^"),
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIE+/=\n-----END RSA PRIVATE KEY-----",
     "-----BEGIN RSA PRIVATE KEY-----***-----END RSA PRIVATE KEY-----"),
    ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl", "jwt ***"),
]  # fmt: skip
UNCHANGED = [
    "abfss://container@account.dfs.core.windows.net/",  # a container name, not a user
    "wasbs://raw@acct.blob.core.windows.net/p",
    "s3://bucket/file@2x.png",
    "https://host/x?email=a@b.com",
    "https://medium.com/@someone",
    "data/orders@v3",  # a Delta version, not user/password@host
    "/tmp/x/config.yaml: CONFIG.outputs.o.options.password: expected a string",  # ubunye naming a key
    "1 expectation(s) failed: outputs.o row_count min=1 observed=0",
    "revenue_cents >= 0 and primary_key=id",
    "token_type=bearer&expires_in=3600",
    "sha256:2d23c84b5f0f, 2026-12-01T00:00:00Z",
]


@pytest.mark.parametrize(("text", "masked"), SHAPES, ids=[s[0][:40] for s in SHAPES])
def test_shapes_are_masked_exactly(text, masked):
    assert mask_shapes(text) == masked
    assert mask_shapes(masked) == masked  # masking is idempotent: a masked text is left alone


@pytest.mark.parametrize("text", UNCHANGED)
def test_look_alikes_are_left_alone(text):
    assert mask_shapes(text) == text
    assert find_secrets(text) == set()


SECRET_NAMES = (
    "password", "passwd", "pwd", "db_pass", "token", "session_token", "secret", "client_secret", "credential",
    "credentials", "creds", "private_key", "privateKey", "api_key", "access_key", "account_key", "AccountKey",
    "sas_key", "sig", "signature", "Authorization", "auth", "cookie", "x-api-key", "bearer", "connection_string",
    "conn_str", "fs.s3a.access.key", "key", "spark.hadoop.fs.azure.account.key.acct.dfs.core.windows.net",
    "AWS_SECRET_ACCESS_KEY",
)  # fmt: skip
PLAIN_NAMES = (
    "primaryKey", "partition_key", "key_columns", "keys", "tokenizer", "max_tokens", "token_url", "auth_type",
    "fs.azure.account.auth.type", "password_file", "path", "user", "code", "options",
)  # fmt: skip


def test_secret_names():
    assert [n for n in SECRET_NAMES if not is_secret_name(n)] == []
    assert [n for n in PLAIN_NAMES if is_secret_name(n)] == []


def test_secret_values_of_a_config_and_its_environment():
    tree = {
        "CONFIG": {
            "outputs": {"credentials": {"path": "data/credentials"}},  # an output NAMED credentials: a table
            "inputs": {"a": {"path": "postgresql://u:p%40ss-1@h/x?sig=sig-22&page=2", "options": {"token": "t"}}},
            "creds": {"user": "svc-user", "pass": ["pw-one", 12345]},
            "headers": {"Authorization": "Bearer hdr-tok-9"},
        }
    }
    env = {"DB_PASSWORD": "env-pw-1", "HOME": "/home/me", "PWD": "/work/main", "URL": "https://x:envurl-2@h/"}
    found = secret_values(tree, env)
    for value in ("p%40ss-1", "p@ss-1", "sig-22", "svc-user", "pw-one", "12345", "Bearer hdr-tok-9", "hdr-tok-9",
                  "env-pw-1", "envurl-2"):  # fmt: skip
        assert value in found, value
    for value in ("t", "data/credentials", "/home/me", "/work/main", "page"):
        assert value not in found, value


def test_values_shorter_than_the_minimum_are_not_masked_by_value():
    # Masking "abc" everywhere would destroy every text holding those letters; masked by key and shape instead.
    assert MIN_SECRET_LENGTH == 4
    assert secret_values({"password": "abc", "token": "abcd", "secret": "true"}) == {"abcd"}
    remember_secrets(["abc", "abcd", "true"])
    assert remembered_secrets() == {"abcd"}
    assert mask_text("abc abcd true") == "abc *** true"
    assert redact_config({"password": "abc"}) == {"password": MASK}


def test_remembered_values_are_masked_longest_first_in_any_text():
    remember_secrets(["s3cret", "s3cret-longer"])
    assert mask_text("a s3cret-longer then s3cret") == "a *** then ***"
    assert redact_config({"note": "uses s3cret", "n": 1}) == {"note": "uses ***", "n": 1}


def test_redact_config_masks_whole_subtrees_and_pairs_but_not_names():
    tree = {
        "creds": {"user": "u", "pass": "p"},
        "headers": {"Authorization": "Bearer abc", "Accept": "json"},
        "list": [{"name": "X-Api-Key", "value": "k"}, {"name": "Accept", "value": "json"}],
        "outputs": {"credentials": {"path": "s3://k:pw@b/x"}},
        "primaryKey": "id",
        "none": {"password": None},
    }
    assert redact_config(tree) == {
        "creds": MASK,
        "headers": {"Authorization": MASK, "Accept": "json"},
        "list": [{"name": "X-Api-Key", "value": MASK}, {"name": "Accept", "value": "json"}],
        "outputs": {"credentials": {"path": "s3://k:***@b/x"}},
        "primaryKey": "id",
        "none": {"password": None},
    }


def test_redact_record_masks_every_string_but_keeps_identity_and_hashes():
    record = RunRecord(
        run_id="r-1", usecase="u", package="p", task="t", config={"token": "tok-0001", "path": "data/x"},
        inputs=[DatasetRecord("in", location="s3://k:pw-0002@b/x", data_hash="sha256:abcd", hash_error="tok-0001")],
        timings=[Timing("read", "in tok-0001", 0.1)],
        expectations=[ExpectationResult("outputs.o", "expression", False, observed="tok-0001", error="bad tok-0001")],
        error=ErrorInfo("Err tok-0001", "cannot connect: tok-0001", "transform"),
        extra={"note": "tok-0001"},
    )  # fmt: skip
    clean = redact_record(record)
    text = json.dumps(clean.to_dict())
    assert "tok-0001" not in text and "pw-0002" not in text
    assert clean.inputs[0].location == "s3://k:***@b/x" and clean.inputs[0].data_hash == "sha256:abcd"
    assert (clean.run_id, clean.error.message, clean.error.type) == ("r-1", "cannot connect: ***", "Err ***")
    assert record.error.message == "cannot connect: tok-0001"  # a copy: the caller's objects are left alone


def test_log_lines_and_warnings_are_masked(caplog):
    remember_secrets(["log-secret-1"])
    with caplog.at_level(logging.WARNING, logger="ubunye"):
        logging.getLogger("ubunye").warning("connect %s with %s", "https://u:pw-7@h/x", "log-secret-1")
    assert caplog.records[-1].getMessage() == "connect https://u:***@h/x with ***"
    # The CLI masks what Python prints for a warning (pytest records warnings itself, so format one directly).
    printed = warnings.formatwarning("reading s3://k:warn-pw-8@b/x", UserWarning, "task.py", 1)
    assert "warn-pw-8" not in printed and "s3://k:***@b/x" in printed


def test_error_line_masks_before_collapsing_whitespace():
    exc = ValueError('not valid YAML: while parsing\n  in "<unicode string>", line 3:\n    password: hunter22\n')
    assert error_line(exc) == 'error: not valid YAML: while parsing in "<unicode string>", line 3: password: ***'


def test_an_output_refused_before_the_run_masks_its_url(uc):
    cfg = doc({"path": "https://api.example.com/export?code=OauthCode-1204&page=2"})
    task = write(uc, Case("refused-url", cfg, ["OauthCode-1204"]))
    run = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", task, "--engine", "pandas")
    assert run.exit_code == 2, run.output
    (line,) = run.stderr.strip().splitlines()
    assert line.startswith("error: output 'out'") and "delta" in line, line
    absent(["OauthCode-1204"], run.output + run.stderr, "the stderr of ubunye run")
    assert not (uc / ".ubunye").exists()  # refused before the run: no record


# --- what ubunye computes is never masked -----------------------------------------------------------------------------

COUNTED = """
import pandas as pd

from ubunye import Task


class Counted(Task):
    def transform(self, sources):
        return {"out": pd.DataFrame({"n": pd.array([1173, 7], dtype="int32"), "api_key": ["k1", "k2"]})}
"""


def _counted(uc: Path, params: dict[str, Any], name: str) -> str:
    task_dir = uc / "shop" / "daily" / name
    task_dir.mkdir(parents=True)
    cfg = doc({"key": ["api_key"]}, params=params)
    (task_dir / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    (task_dir / "transformations.py").write_text(COUNTED)
    return name


def test_a_secret_inside_a_fingerprint_or_bucket_data_leaves_them_as_computed(uc):
    # First run without a secret: what ubunye computes for this data. The second run's password is four
    # characters of that run's column fingerprint, then of its bucket data: the same data gives the same
    # fingerprints, which masking must not touch (a masked digest is no digest: the record would be refused).
    task = _counted(uc, {}, "plain")
    assert invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", task, "--engine", "pandas").exit_code == 0
    (plain,) = RecordStore(uc).records("shop", "daily", task)
    out = plain.outputs[0]
    assert out.columns is not None and out.buckets is not None
    fingerprint, data = out.columns["n"].fingerprint, out.buckets.data
    secrets = [fingerprint[20:24], next(data[i : i + 4] for i in range(len(data)) if data[i : i + 4].isalnum())]
    for i, secret in enumerate(secrets):
        forget_secrets()
        task = _counted(uc, {"db_password": secret}, f"secret{i}")
        run = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", task, "--engine", "pandas")
        assert run.exit_code == 0, run.output
        (rec,) = RecordStore(uc).records("shop", "daily", task)
        got = rec.outputs[0]
        assert got.columns == out.columns and got.buckets == out.buckets and got.key == ["api_key"]
        assert (got.data_hash, got.schema_hash, got.schema) == (out.data_hash, out.schema_hash, out.schema)
        assert rec.config["CONFIG"]["transform"]["params"]["db_password"] == MASK


def test_a_secret_equal_to_a_column_name_keeps_the_columns_and_key_as_computed(uc):
    # A password that happens to be a column's name says nothing of the password's role: the record keeps the
    # column, its fingerprint and the key naming it (masking only some of them made the record contradict itself).
    task = _counted(uc, {"password": "api_key"}, "named")
    run = invoke("run", "-d", uc, "-u", "shop", "-p", "daily", "-t", task, "--engine", "pandas")
    assert run.exit_code == 0, run.output
    (rec,) = RecordStore(uc).records("shop", "daily", task)
    assert rec.outputs[0].key == ["api_key"] and set(rec.outputs[0].columns or {}) == {"n", "api_key"}
    assert rec.config["CONFIG"]["transform"]["params"]["password"] == MASK


def test_redact_record_keeps_every_computed_field():
    digest = "sha256:" + "2024abcd" * 8
    column = ColumnRecord(type="string", nulls=0, fingerprint=digest)
    out = DatasetRecord(
        "o", location="s3://k:2024abcd@b/x", schema_hash=digest, data_hash=digest, schema='struct<"2024abcd":string>',
        columns={"2024abcd": column}, buckets=BucketsRecord(n=1, data="eJxjYMAOAAAYAAE="), key=["2024abcd"],
        profile_method="profile-v1",
    )  # fmt: skip
    record = RunRecord(
        run_id="r-1", usecase="u2024abcd", package="p", task="t", config={"password": "2024abcd", "token": "YMAOAAAY"},
        outputs=[out],
        process=ProcessInfo(host="h2024abcd", pid=7, started="1@2024abcd-0000"), code_hash=digest,
        extra={"openlineage": {"run_id": "01a23616-e5c0-7587-8d80-2024abcd9513", "job": "u2024abcd.p.t",
                                "namespace": "n2024abcd"}, "by 2024abcd": 1},
    )  # fmt: skip
    clean = redact_record(record)
    got = clean.outputs[0]
    assert (got.columns, got.buckets, got.key, got.schema) == (out.columns, out.buckets, out.key, out.schema)
    assert (got.schema_hash, got.data_hash, clean.code_hash, clean.process) == (digest, digest, digest, record.process)
    note = {"run_id": "01a23616-e5c0-7587-8d80-2024abcd9513", "job": "u2024abcd.p.t", "namespace": "n***"}
    assert clean.extra == {"openlineage": note, "by ***": 1}
    assert got.location == "s3://k:***@b/x" and clean.config == {"password": MASK, "token": MASK}


def test_the_type_of_a_secret_is_not_a_secret_value():
    # An auth block is secret as a whole (masked by key), but its type names a kind of auth, one of a few words
    # (api_key, bearer...): remembered as a secret, it was masked in every column name and key that spells it.
    auth = {"auth": {"type": "api_key", "apiKey": "not-a-real-key-123"}, "creds": {"mode": "basic", "user": "u-123"}}
    found = secret_values({"transport": auth})
    assert "not-a-real-key-123" in found and "u-123" in found
    assert "api_key" not in found and "basic" not in found
    assert redact_config({"transport": auth}) == {"transport": {"auth": MASK, "creds": MASK}}


# --- other libraries' log lines on the CLI's stderr ------------------------------------------------------------------

LOGGING = """
import logging

import pandas as pd

from ubunye import Task


class Logging(Task):
    def transform(self, sources):
        try:
            raise ConnectionError("refused by postgresql://app:LibPw-5521@db:5432/x\\n  (second line)")
        except ConnectionError:
            bearer = "Authorization: Bearer LibTok-77123"
            logging.getLogger("somelib.client").error("could not send:\\n%s", bearer, exc_info=True)
        return {"out": pd.DataFrame({"a": [1]})}
"""


@pytest.mark.parametrize("debug", [False, True])
def test_other_libraries_log_lines_are_one_masked_line_without_a_traceback(uc, debug):
    # A library's logger (the openlineage client's, when a transport fails) logged a traceback and its message
    # as written to the CLI's stderr. Now: one line, masked, the exception in a few words; --debug adds the
    # traceback, masked too.
    import subprocess
    import sys

    task_dir = uc / "shop" / "daily" / "logs"
    task_dir.mkdir()
    (task_dir / "config.yaml").write_text(yaml.safe_dump(doc(), sort_keys=False))
    (task_dir / "transformations.py").write_text(LOGGING)
    cli = [sys.executable, "-c", "from ubunye.cli.main import main; main()", *(["--debug"] if debug else [])]
    done = subprocess.run([*cli, "run", "-d", str(uc), "-u", "shop", "-p", "daily", "-t", "logs", "--engine", "pandas"],
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    absent(["LibPw-5521", "LibTok-77123"], done.stdout + done.stderr, "the stderr of ubunye run")
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    if debug:  # as written, and the traceback
        assert lines[:2] == ["ERROR somelib.client: could not send:", "Authorization: Bearer ***"], done.stderr
        assert "Traceback (most recent call last):" in done.stderr and "postgresql://app:***@db:5432/x" in done.stderr
    else:
        assert lines == ["ERROR somelib.client: could not send: Authorization: Bearer *** (ConnectionError: refused "
                         "by postgresql://app:***@db:5432/x (second line))"], done.stderr  # fmt: skip
