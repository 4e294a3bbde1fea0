"""Config is data: every bad config.yaml is one ConfigError naming the file and the key, never a traceback or a guess.

Each case writes a config.yaml, loads it, and asserts the message starts with the file's path and names the key
(and the problem); the sandbox cases also assert the payload never ran.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from ubunye.cli.main import app
from ubunye.config import load_config
from ubunye.config.yamlfile import MAX_BYTES
from ubunye.exceptions import ConfigError

OUT = 'CONFIG:\n  outputs:\n    out: {format: parquet, path: "%s"}\n'
GOOD = OUT % "data/out"


def inp(spec: str) -> str:
    """A config with one input ``i`` (``spec`` inside its braces) and the good output."""
    return f"CONFIG:\n  inputs:\n    i: {{{spec}}}\n  outputs:\n    out: {{format: parquet, path: o}}\n"


def write(tmp_path: Path, text: str | bytes) -> Path:
    path = tmp_path / "config.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def refused(path: Path, **kwargs: Any) -> str:
    with pytest.raises(ConfigError) as err:
        load_config(path, **kwargs)
    message = str(err.value)
    assert message.startswith(f"{path}: "), message
    assert "Traceback" not in message
    assert "\n" not in message or "not valid YAML" in message  # a YAML error shows the line, masked, below
    return message


# --- templates run in Jinja's sandbox ------------------------------------------------------------------------------

SANDBOX = [
    ("cycler-globals-popen", "{{ cycler.__init__.__globals__.os.popen('touch PWNED').read() }}", "__globals__"),
    ("str-class-mro", "{{ ''.__class__.__mro__ }}", "__class__"),
    ("env-class", "{{ env.__class__ }}", "__class__"),
    ("env-private-state", "{{ env._values }}", "_values"),
    ("self-reference", "{{ self }}", "self"),
    ("self-context", "{{ self._TemplateReference__context }}", "self"),
    ("attr-filter", "{{ dt | attr('__class__') }}", "unsafe"),
    ("format-string", "{{ '{0.__class__}'.format(dt) }}", "unsafe"),
    ("getitem-dunder", "{{ dt['__class__'] }}", "__class__"),
    ("lipsum-globals", "{{ lipsum.__globals__['os'].popen('touch PWNED') }}", "__globals__"),
]


@pytest.mark.parametrize(("text", "what"), [c[1:] for c in SANDBOX], ids=[c[0] for c in SANDBOX])
def test_a_template_cannot_reach_python_internals(tmp_path, text, what):
    pwned = tmp_path / "pwned"
    path = write(tmp_path, OUT % text.replace("PWNED", str(pwned)))
    message = refused(path, dt="2026-12-01")
    assert "CONFIG.outputs.out.path: template tried to reach Python internals" in message
    assert what in message
    assert not pwned.exists()


RENDER_FAILURES = [
    ("division-by-zero", "{{ 1/0 }}", "ZeroDivisionError"),
    ("huge-repetition", "{{ 'x' * 100000000 }}", "repetition longer than"),
    ("huge-exponent", "{{ 2 ** 100000 }}", "exponent above 64"),
    ("endless-recursion", "{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}", "RecursionError"),
    ("whole-environment", "{{ env }}", "write env.NAME"),
    ("method-on-garbage", "{{ dt.nope() }}", "undefined"),
    ("no-jinja-globals", "{{ range(3) | list }}", "'range' is undefined"),
]


@pytest.mark.parametrize(("text", "what"), [c[1:] for c in RENDER_FAILURES], ids=[c[0] for c in RENDER_FAILURES])
def test_any_failure_while_rendering_is_an_error_naming_file_and_key(tmp_path, text, what):
    message = refused(write(tmp_path, OUT % text), dt="2026-12-01")
    assert "CONFIG.outputs.out.path: " in message and what in message


def test_a_template_error_never_quotes_the_password_of_a_url(tmp_path):
    path = write(tmp_path, OUT % "postgresql://app:Tpl-s3cret-77@db/{{ dt")
    message = refused(path, dt="2026-12-01")
    assert "CONFIG.outputs.out.path: bad template" in message and "Tpl-s3cret-77" not in message
    assert "(template: 'postgresql://app:***@db/{{ dt')" in message
    path = write(tmp_path, GOOD.replace("}", ", options: {password: 'Pw-s3cret-{{ 1/0 }}'}}"))
    message = refused(path)  # under a secret-looking key the text is not quoted at all
    assert "CONFIG.outputs.out.options.password: template failed: ZeroDivisionError" in message
    assert "Pw-s3cret" not in message


# --- YAML ---------------------------------------------------------------------------------------------------------

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{k}: &{k} [{', '.join([f'*{p}'] * 9)}]\n" for p, k in zip("abcde", "bcdef", strict=True)
)
DOUBLING = "a0: &a0 [x, x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}]\n" for i in range(1, 25))
MANY_ALIASES = "base: &b x\nitems: [" + ", ".join(["*b"] * 51) + "]\n"

YAML_CASES = [
    ("duplicate-output", GOOD + "    out: {format: csv, path: other}\n", "CONFIG.outputs.out: line 4: duplicate key"),
    (
        "duplicate-nested",
        "CONFIG:\n  outputs:\n    out:\n      format: parquet\n      path: a\n      path: b\n",
        "CONFIG.outputs.out.path: line 6: duplicate key (first at line 5)",
    ),
    ("duplicate-top", "MODEL: etl\nMODEL: ml\n" + GOOD, "MODEL: line 2: duplicate key"),
    ("integer-key", "CONFIG:\n  outputs:\n    1: {format: parquet, path: a}\n", "CONFIG.outputs: line 3: the key '1'"),
    ("null-key", "CONFIG:\n  outputs:\n    null: {format: parquet, path: a}\n", "the key 'null' is read as null"),
    ("list-key", "CONFIG:\n  outputs:\n    [a]: {format: parquet, path: a}\n", "CONFIG.outputs: line 3: a key must"),
    ("boolean-key", "CONFIG:\n  on: 1\n", "CONFIG: line 2: the key 'on' is read as a boolean"),
    ("billion-laughs", LAUGHS, "expands to more than 100000 nodes"),
    ("doubling-aliases", DOUBLING, "expands to more than 100000 nodes"),
    ("too-many-aliases", MANY_ALIASES, "more than 50 aliases"),
    ("recursive-alias", "a: &a [*a]\n", "a[0]: line 1: a recursive alias"),
    ("too-deep", "a: " + "[" * 100 + "]" * 100 + "\n", "nested more than 64 levels"),
    ("python-tag", "CONFIG: !!python/object/apply:os.system ['id']\n", "CONFIG: line 1: the YAML tag"),
    ("set-tag", "CONFIG: !!set {a, b}\n", "CONFIG: line 1: the YAML tag 'tag:yaml.org,2002:set'"),
    ("two-documents", GOOD + "---\n" + GOOD, "not valid YAML: line 4"),
    ("top-is-a-list", "- a\n- b\n", "expected a mapping at the top"),
]


@pytest.mark.parametrize(("text", "what"), [c[1:] for c in YAML_CASES], ids=[c[0] for c in YAML_CASES])
def test_yaml_is_strict(tmp_path, text, what):
    assert what in refused(write(tmp_path, text))


def test_a_yaml_error_quotes_the_line_masked(tmp_path):
    path = write(tmp_path, GOOD.replace("    out:", "    password: YamlPw-7702: oops\n    out:"))
    message = refused(path)
    assert "not valid YAML: line 3" in message and "password: ***" in message and "YamlPw-7702" not in message


def test_a_file_that_is_not_utf8_is_refused(tmp_path):
    message = refused(write(tmp_path, GOOD.replace("data/out", "caf\xe9").encode("latin-1")))
    assert "not UTF-8 text (byte" in message and "line 3" in message


def test_a_huge_file_is_refused_before_parsing(tmp_path):
    path = write(tmp_path, GOOD + "#" * MAX_BYTES + "\n")
    assert "larger than" in refused(path)


def test_few_aliases_merge_keys_and_dates_are_fine(tmp_path):
    text = (
        "CONFIG:\n  inputs:\n    i: {format: delta, path: i, timestamp: 2026-12-01T00:00:00Z}\n"
        "  outputs:\n    out: &d {format: parquet, path: o}\n    out2: {<<: *d, path: o2}\n"
    )
    cfg = load_config(write(tmp_path, text))
    assert (cfg.outputs["out2"].format, cfg.outputs["out2"].path) == ("parquet", "o2")
    assert cfg.inputs["i"].timestamp == "2026-12-01T00:00:00Z"  # a string, as written, not a datetime


# --- every value is type-checked ----------------------------------------------------------------------------------

TYPE_CASES = [
    ("path-list", OUT.replace('"%s"', "[a, b]"), "CONFIG.outputs.out.path: expected a string, got list"),
    ("path-mapping", OUT.replace('"%s"', "{a: b}"), "CONFIG.outputs.out.path: expected a string, got mapping"),
    ("path-number", OUT.replace('"%s"', "3"), "CONFIG.outputs.out.path: expected a string, got integer"),
    ("path-empty", OUT % "", "CONFIG.outputs.out.path: is empty"),
    ("path-null", OUT.replace('"%s"', "null"), "CONFIG.outputs.out.path: expected a string, got null"),
    ("table-list", "CONFIG:\n  outputs:\n    out: {table: [a]}\n", "CONFIG.outputs.out.table: expected a string"),
    ("format-list", GOOD.replace("parquet", "[parquet]"), "CONFIG.outputs.out.format: expected one of"),
    ("mode-number", GOOD.replace("}", ", mode: 1}"), "CONFIG.outputs.out.mode: expected one of"),
    ("model-list", "MODEL: [etl]\n" + GOOD, "MODEL: expected one of etl, ml, got list"),
    ("version-list", "VERSION: [1]\n" + GOOD, "VERSION: expected a string or a number, got list"),
    ("version-bool", "VERSION: true\n" + GOOD, "VERSION: expected a string or a number, got boolean"),
    ("backend-number", "ENGINE: {backend: 3}\n" + GOOD, "ENGINE.backend: expected one of"),
    ("spark-conf-list", "ENGINE: {spark_conf: {a.b: [1]}}\n" + GOOD, "ENGINE.spark_conf.a.b: expected a string"),
    (
        "profile-backend",
        "ENGINE: {profiles: {prod: {backend: flink}}}\n" + GOOD,
        "ENGINE.profiles.prod.backend: 'flink' is not one of",
    ),
    ("options-nested", GOOD.replace("}", ", options: {header: {a: 1}}}"), "CONFIG.outputs.out.options.header"),
    ("options-list", GOOD.replace("}", ", options: [a]}"), "CONFIG.outputs.out.options: expected a mapping"),
    ("storage-options-list", GOOD.replace("}", ", storage_options: [a]}"), "CONFIG.outputs.out.storage_options"),
    ("partition-number", GOOD.replace("}", ", partition_by: [1]}"), "CONFIG.outputs.out.partition_by[0]"),
    ("name-with-dash", GOOD.replace("out:", "my-out:"), "CONFIG.outputs.my-out: a dataset name is letters"),
    ("name-with-digit", GOOD.replace("out:", "1out:"), "CONFIG.outputs.1out: a dataset name"),
    ("name-too-long", GOOD.replace("out:", "o" * 129 + ":"), "a dataset name"),
    ("version-negative", inp("format: delta, path: i, version: -1"), "CONFIG.inputs.i.version: expected an integer"),
    ("version-bool", inp("format: delta, path: i, version: true"), "CONFIG.inputs.i.version: expected an integer"),
    ("version-string", inp("format: delta, path: i, version: '3'"), "CONFIG.inputs.i.version: expected an integer"),
    ("timestamp-garbage", inp("format: delta, path: i, timestamp: yesterday"), "CONFIG.inputs.i.timestamp: not an"),
    ("timestamp-number", inp("format: delta, path: i, timestamp: 5"), "CONFIG.inputs.i.timestamp: expected"),
    ("allow-empty-string", inp("format: csv, path: i, allow_empty: 'true'"), "CONFIG.inputs.i.allow_empty: expected"),
    ("allow-empty-output", GOOD.replace("}", ", allow_empty: true}"), "CONFIG.outputs.out.allow_empty: only inputs"),
    ("transform-type", GOOD + "  transform: {type: [sql]}\n", "CONFIG.transform.type: expected one of task, sql"),
    ("query-list", GOOD + "  transform: {type: sql, query: [a]}\n", "CONFIG.transform.query: expected a string"),
    ("params-list", GOOD + "  transform: {params: [a]}\n", "CONFIG.transform.params: expected a mapping"),
    ("severity-list", GOOD + "  expectations: {out: {severity: [warn]}}\n", "CONFIG.expectations.out.severity"),
    ("row-count-bool", GOOD + "  expectations: {out: {row_count: {min: true}}}\n", "row_count.min: expected an int"),
    ("row-count-order", GOOD + "  expectations: {out: {row_count: {min: 5, max: 2}}}\n", "row_count: min 5 is above"),
    ("not-null-string", GOOD + "  expectations: {out: {not_null: a}}\n", "CONFIG.expectations.out.not_null: expected"),
    ("not-null-item", GOOD + "  expectations: {out: {not_null: [1]}}\n", "CONFIG.expectations.out.not_null[0]"),
    ("unique-nested", GOOD + "  expectations: {out: {unique: [[a, [b]]]}}\n", "CONFIG.expectations.out.unique[0][1]"),
    ("accepted-empty", GOOD + "  expectations: {out: {accepted_values: {a: []}}}\n", "accepted_values.a: is empty"),
    ("accepted-nested", GOOD + "  expectations: {out: {accepted_values: {a: [[1]]}}}\n", "accepted_values.a[0]"),
    ("version-empty", 'VERSION: ""\n' + GOOD, "VERSION: is empty"),
    ("version-escape", 'VERSION: "v1\\x1b[31m"\n' + GOOD, "VERSION: contains a control character (U+001B)"),
    (
        "sep-and-delimiter-any-case",
        GOOD.replace('"}', '", options: {Sep: ";", delimiter: ","}}'),
        "CONFIG.outputs.out.options: gives sep=';' and delimiter=','",
    ),
    (
        "sep-and-delimiter",
        GOOD.replace('"}', '", options: {sep: ";", delimiter: ","}}'),
        "CONFIG.outputs.out.options: gives sep=';' and delimiter=','",
    ),
    (
        "accepted-inf",
        GOOD + "  expectations: {out: {accepted_values: {a: [1, .inf]}}}\n",
        "accepted_values.a[1]: is inf",
    ),
    ("accepted-nan", GOOD + "  expectations: {out: {accepted_values: {a: [.nan]}}}\n", "accepted_values.a[0]: is nan"),
    ("expression-number", GOOD + "  expectations: {out: {expression: 3}}\n", "CONFIG.expectations.out.expression"),
    (
        "hash-inputs-string",
        GOOD + "  monitors: [{type: lineage, params: {hash_inputs: 'false'}}]\n",
        "CONFIG.monitors[0].params.hash_inputs: expected a boolean, got string",
    ),
    (
        "hash-inputs-short-form",
        GOOD + "  monitors: [{lineage: {hash_inputs: 'no'}}]\n",
        "CONFIG.monitors[0].lineage.hash_inputs: expected a boolean",
    ),
    ("monitor-params-list", GOOD + "  monitors: [{type: 'm:C', params: [1]}]\n", "CONFIG.monitors[0].params"),
    ("monitor-unknown", GOOD + "  monitors: [nope]\n", "CONFIG.monitors[0]: unknown monitor 'nope'"),
    ("monitor-type-list", GOOD + "  monitors: [{type: [lineage]}]\n", "CONFIG.monitors[0].type: expected a string"),
]


@pytest.mark.parametrize(("text", "what"), [c[1:] for c in TYPE_CASES], ids=[c[0] for c in TYPE_CASES])
def test_every_value_is_type_checked(tmp_path, text, what):
    assert what in refused(write(tmp_path, text))


def test_right_types_are_kept_and_spark_booleans_spelled_as_spark_does(tmp_path):
    text = (
        "VERSION: 2\nENGINE:\n  spark_conf: {spark.a: true, spark.b: 8, spark.c: x}\n"
        "CONFIG:\n  inputs:\n    i: {format: csv, path: i, allow_empty: true, options: {header: false}}\n"
        "  outputs:\n    out: {format: parquet, path: o, partition_by: day}\n"
        "  monitors: [{type: lineage, params: {hash_inputs: false}}, {type: 'my.mod:Mon', params: {x: [1]}}]\n"
    )
    cfg = load_config(write(tmp_path, text))
    assert cfg.version == "2"
    assert cfg.spark_conf == {"spark.a": "true", "spark.b": "8", "spark.c": "x"}
    assert (cfg.inputs["i"].allow_empty, cfg.inputs["i"].options) == (True, {"header": False})
    assert (cfg.outputs["out"].allow_empty, cfg.outputs["out"].partition_by) == (False, ["day"])
    assert [(m.type, m.params) for m in cfg.monitors] == [
        ("lineage", {"hash_inputs": False}),
        ("my.mod:Mon", {"x": [1]}),
    ]


# --- template variables where they build a path --------------------------------------------------------------------

PATH_VARS = [
    ("dt-parent", "data/{{ dt }}", {"dt": "../.."}, "template variable dt='../..' cannot build a path (contains '/'"),
    ("dt-empty", "data/{{ dt }}", {"dt": ""}, "dt='' cannot build a path (it is empty)"),
    ("dt-empty-default", "data/{{ dt | default('latest') }}", {"dt": ""}, "dt='' cannot build a path"),
    ("dt-dot", "data/{{ dt }}", {"dt": "."}, "dt='.' cannot build a path (it is '.')"),
    ("dt-dotdot", "data/{{ dt }}", {"dt": ".."}, "dt='..' cannot build a path (contains '..')"),
    ("dt-backslash", "data/{{ dt }}", {"dt": "a\\b"}, "cannot build a path (contains '\\\\')"),
    ("dt-nul", "data/{{ dt }}", {"dt": "a\x00b"}, "cannot build a path (contains a control character)"),
    ("dtf-slash", "data/{{ dtf }}", {"dtf": "x/y"}, "template variable dtf='x/y'"),
    ("mode-newline", "data/{{ mode }}", {"mode": "a\nb"}, "template variable mode='a\\nb'"),
    (
        "env-dotdot",
        "{{ env.ROOT }}/x",
        {"env": {"ROOT": "/lake/../etc"}},
        "env.ROOT cannot build a path (contains '..')",
    ),
    ("env-empty", "{{ env.ROOT }}/x", {"env": {"ROOT": ""}}, "environment variable env.ROOT cannot build a path"),
    ("env-control", "{{ env['ROOT'] }}/x", {"env": {"ROOT": "/l\x1bake"}}, "env.ROOT cannot build a path (contains a"),
    ("made-dotdot", "{{ '.' ~ '.' }}/x", {}, "the rendered path has a '..' component the template text does not"),
    ("sliced-dotdot", "{{ dt[0] }}{{ dt[2] }}/x", {"dt": ".a."}, "the rendered path has a '..' component"),
]


@pytest.mark.parametrize(("text", "variables", "what"), [c[1:] for c in PATH_VARS], ids=[c[0] for c in PATH_VARS])
def test_template_variables_cannot_build_a_bad_path(tmp_path, text, variables, what):
    message = refused(write(tmp_path, OUT % text), **variables)
    assert "CONFIG.outputs.out.path: " in message and what in message
    assert "/lake/../etc" not in message  # an environment value is never quoted: it may be a secret


def test_an_input_path_is_checked_too(tmp_path):
    message = refused(write(tmp_path, inp('format: csv, path: "in/{{ dt }}"')), dt="../../..")
    assert "CONFIG.inputs.i.path: template variable dt='../../..' cannot build a path" in message


def test_variables_elsewhere_and_good_values_are_fine(tmp_path):
    text = (
        "ENGINE:\n  profiles: {'{{ mode }}': {backend: pandas}}\n"
        'CONFIG:\n  outputs:\n    out: {format: parquet, path: "../shared/{{ env.ROOT }}/{{ dt }}"}\n'
        "  transform: {params: {m: '{{ mode }}'}}\n"
    )
    cfg = load_config(write(tmp_path, text), dt="2026-12-01", mode="", env={"ROOT": "/lake", "PW": "x"})
    assert cfg.outputs["out"].path == "../shared//lake/2026-12-01"  # '..' written in the template is the author's
    assert cfg.env_used == {"ROOT": "/lake"}


def test_env_used_lists_every_variable_read(tmp_path):
    text = (
        GOOD.replace("data/out", "{{ env.ROOT }}/o") + "  transform: {params: {p: '{{ env.get(\"DB_PASSWORD\") }}'}}\n"
    )
    cfg = load_config(write(tmp_path, text), env={"ROOT": "/lake", "DB_PASSWORD": "pw-1234", "HOME": "/h"})
    assert cfg.env_used == {"ROOT": "/lake", "DB_PASSWORD": "pw-1234"}


# --- the CLI: one line, exit 2 -----------------------------------------------------------------------------------


def test_the_cli_prints_one_error_line_for_a_bad_config(tmp_path):
    task = tmp_path / "uc" / "shop" / "daily" / "t"
    task.mkdir(parents=True)
    (task / "config.yaml").write_text(OUT.replace('"%s"', "[a, b]"))
    result = CliRunner().invoke(app, ["run", "-d", str(tmp_path / "uc"), "-u", "shop", "-p", "daily", "-t", "t"])
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert str(task / "config.yaml") in lines[0] and "CONFIG.outputs.out.path: expected a string, got list" in lines[0]
    assert "Traceback" not in result.output


# --- found by an independent battery ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["{{ env.items() | list }}", "{{ env.values() }}", "{{ env | list }}", "{{ env | length }}"]
)
def test_the_environment_cannot_be_listed_into_a_config(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, GOOD + f"  transform:\n    type: task\n    params:\n      x: '{text}'\n")
    message = refused(path)
    assert "CONFIG.transform.params.x" in message and os.environ.get("PATH", "/usr/bin") not in message


def test_a_template_that_never_ends_is_stopped(tmp_path: Path) -> None:
    loop = '{% for a in "x" * 999999 %}{% for b in "x" * 999999 %}{% endfor %}{% endfor %}'
    path = write(tmp_path, GOOD + f"  transform:\n    type: task\n    params:\n      x: '{loop}'\n")
    message = refused(path)
    assert "CONFIG.transform.params.x: template still rendering after" in message


MONITOR_CODE = """
class Counter:
    def __init__(self, start=0):
        self.start = start
    def task_end(self, **kwargs):
        pass
"""


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("{type: 'os:system', params: {command: 'touch PWNED'}}", "'os:system' is not a monitor class"),
        ("'os:system'", "'os:system' is not a monitor class"),
        ("'subprocess:Popen'", "'subprocess:Popen' is not a monitor class"),
        ("'nomod_ubunye_x:Cls'", "cannot import 'nomod_ubunye_x' for monitor 'nomod_ubunye_x:Cls'"),
        ("'json:NoSuchThing'", "module 'json' has no 'NoSuchThing'"),
        ("{type: 'mon_ubunye_t:Counter', params: {nope: 1}}", "monitor 'mon_ubunye_t:Counter' does not take params"),
    ],
)
def test_a_monitor_from_config_is_a_monitor_class_or_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spec: str, says: str
) -> None:
    from tests.lineage.usecase import write_task
    from ubunye.runner import run_task

    (tmp_path / "mon_ubunye_t.py").write_text(MONITOR_CODE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    cfg = GOOD + "  transform: {type: sql, query: 'SELECT 1 AS a'}\n  monitors: [lineage, " + spec + "]\n"
    task_dir = write_task(tmp_path / "uc", "t", cfg)
    with pytest.raises(ConfigError) as err:
        run_task(task_dir, engine="pandas")
    assert str(err.value).startswith(f"{task_dir / 'config.yaml'}: CONFIG.monitors[1]: "), str(err.value)
    assert says in str(err.value)
    assert not (tmp_path / "PWNED").exists() and not (task_dir / "PWNED").exists()
    assert not (tmp_path / "uc" / "data").exists()  # nothing ran


def test_the_render_time_limit_gives_back_the_hosts_own_timer() -> None:
    import signal
    import time

    from ubunye.config.template import render_value, template_variables

    fired: list[float] = []
    previous = signal.signal(signal.SIGALRM, lambda *_: fired.append(time.monotonic()))
    try:
        start = time.monotonic()
        signal.setitimer(signal.ITIMER_REAL, 0.3)
        assert render_value("d/{{ dt }}", template_variables(dt="x", env={}), "k") == "d/x"
        time.sleep(0.8)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert len(fired) == 1 and 0.25 < fired[0] - start < 0.7, fired
