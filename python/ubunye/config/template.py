"""Jinja templating of config values: ``dt``, ``dtf``, ``mode`` and ``env``, strictly and in Jinja's sandbox.

A template cannot reach Python internals (``__class__``, ``self``, ``cycler.__init__``...): that, and any other
failure while rendering, is a :class:`~ubunye.exceptions.ConfigError` naming the file and the key; it quotes the
template only with its secrets masked (it may hold a password). Where a value is an input's or output's ``path``,
the variables building it are checked too (see :func:`path_problem`).
"""

from __future__ import annotations

import os
import re
import signal
import threading
import time
import unicodedata
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import FrameType

import jinja2
from jinja2 import meta, nodes
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ubunye.exceptions import ConfigError
from ubunye.lineage.redact import redact_url
from ubunye.lineage.secrets import DATASET_MAPS, secret_key

_INTERNALS = "template tried to reach Python internals"
_NAMES = ("inputs", "outputs", "expectations", "profiles", "accepted_values")
_MAX_REPEAT = 1_000_000  # `'x' * 10**9` would fill the memory before anything could check the result


class _Env:
    """The process environment as a template variable; a missing name is an error naming it.

    Not a Mapping: ``env.items()``, ``env | list`` or a loop over it would copy the whole environment into the
    config (and the record); only ``env.NAME``, ``env['NAME']``, ``env.get('NAME', default)`` and ``in`` work.

    Every name read is logged, in order (:func:`used_env`; a slice tells which variables built one value). The
    state is in ``_`` attributes, which the sandbox hides: ``env.reads`` is a variable named ``reads``.
    """

    def __init__(self, values: Mapping[str, str]) -> None:
        self._values = dict(values)
        self._reads: list[str] = []

    def __getitem__(self, key: str) -> str:
        if not isinstance(key, str) or key not in self._values:
            msg = f"environment variable {key!r} is not set"
            raise jinja2.UndefinedError(msg)
        self._reads.append(key)
        return self._values[key]

    def __getattr__(self, key: str) -> str:
        if key.startswith("_"):
            raise AttributeError(key)
        return self[key]

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def get(self, key: str, default: object = None) -> object:  # Mapping.get would turn the missing-name error into one
        return self[key] if key in self._values else default

    def __iter__(self) -> Iterator[str]:
        msg = "env cannot be listed: write env.NAME"
        raise TypeError(msg)

    def __repr__(self) -> str:
        return "<env>"

    def __str__(self) -> str:  # `{{ env }}` would print the whole environment, or garbage
        msg = "env is the environment, not a value: write env.NAME"
        raise TypeError(msg)


class _Sandbox(ImmutableSandboxedEnvironment):
    """The sandbox, with no globals (``cycler``, ``lipsum``...: a config needs none) and bounded repetition."""

    intercepted_binops = frozenset({"*", "**"})

    def call_binop(self, context: Context, operator: str, left: object, right: object) -> object:
        sized = [v for v in (left, right) if isinstance(v, str | list | tuple)]
        counts = [v for v in (left, right) if isinstance(v, int) and not isinstance(v, bool)]
        if operator == "*" and sized and counts and len(sized[0]) * counts[0] > _MAX_REPEAT:
            raise OverflowError(f"a repetition longer than {_MAX_REPEAT} is refused")
        if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
            raise OverflowError("an exponent above 64 is refused")
        return super().call_binop(context, operator, left, right)


_JINJA = _Sandbox(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
_JINJA.globals.clear()


#: How long one value may take to render. Nested loops fit in the repetition bound and still never end.
RENDER_SECONDS = 5


class _TooSlow(Exception):
    """Raised by the render timer, caught in render_value."""

    pass


@contextmanager
def _time_limit(seconds: float) -> Iterator[None]:
    """Raise :class:`_TooSlow` in the block after ``seconds`` (a real-time timer: main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # signals reach only the main thread; elsewhere the repetition bounds are all there is
        return

    def _alarm(_signum: int, _frame: FrameType | None) -> None:
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, _alarm)
    started = time.monotonic()
    old_delay, old_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if old_delay > 0:  # the host process had its own timer running: give it back what is left of it
            left = max(old_delay - (time.monotonic() - started), 1e-3)
            signal.setitimer(signal.ITIMER_REAL, left, old_interval)


def template_variables(
    dt: str | None = None, dtf: str | None = None, mode: str | None = None, env: Mapping[str, str] | None = None
) -> dict[str, object]:
    """The variables a config sees. An omitted ``dt``/``dtf``/``mode`` is *undefined*, not ``None``.

    So ``{{ dt | default('latest') }}`` renders ``latest`` when dt is omitted, and a bare ``{{ dt }}`` is an error.

    Example:
        >>> sorted(template_variables(dt="2026-12-01"))
        ['dt', 'env']
    """
    out: dict[str, object] = {"env": _Env(os.environ if env is None else env)}
    for name, value in (("dt", dt), ("dtf", dtf), ("mode", mode)):
        if value is not None:
            out[name] = value
    return out


def used_env(variables: Mapping[str, object]) -> dict[str, str]:
    """The environment variables the templates rendered with ``variables`` have read so far, name -> value.

    Example:
        >>> variables = template_variables(env={"ROOT": "/lake", "HOME": "/home/me"})
        >>> render_value("{{ env.ROOT }}/x", variables, "x"), used_env(variables)
        ('/lake/x', {'ROOT': '/lake'})
    """
    env = variables.get("env")
    return {name: env._values[name] for name in env._reads} if isinstance(env, _Env) else {}


def _reaches_internals(ast: nodes.Template) -> list[str]:
    """The names and attributes that lead into Python internals, found before anything renders."""
    found = []
    for node in ast.find_all((nodes.Getattr, nodes.Getitem, nodes.Name)):
        if isinstance(node, nodes.Name) and node.name == "self":
            found.append("self")
        elif isinstance(node, nodes.Getattr) and node.attr.startswith("_"):
            found.append(node.attr)
        # `x['__class__']` falls back to an attribute; `x['_a']` is a plain key of a mapping.
        elif isinstance(node, nodes.Getitem) and isinstance(node.arg, nodes.Const):
            if isinstance(node.arg.value, str) and node.arg.value.startswith("__"):
                found.append(node.arg.value)
    return sorted(set(found))


def path_problem(value: str, *, slashes: bool = False) -> str | None:
    """Why ``value`` cannot build a path, or None: empty, ``.``/``..``, a separator, a control character.

    ``slashes=True`` (an ``env`` value such as ``/lake``) allows separators but still refuses ``..`` components.

    Example:
        >>> path_problem("../.."), path_problem("2026-12-01"), path_problem("/lake/x", slashes=True)
        ("contains '/', '..'", None, None)
    """
    if value == "" or (value == "." and not slashes):
        return "it is empty" if value == "" else "it is '.'"
    found = [] if slashes else [f"{s!r}" for s in ("/", "\\") if s in value]
    # A variable may not hold '..' at all (x..y is harmless, but no date or mode needs it); a longer env value
    # such as /lake may, just not as a component.
    if (".." in value) if not slashes else (".." in re.split(r"[/\\]", value)):
        found.append("'..'")
    if any(unicodedata.category(c) == "Cc" for c in value):
        found.append("a control character")
    return f"contains {', '.join(found)}" if found else None


def _dotdots(text: str) -> int:
    return re.split(r"[/\\]", text).count("..")


def _check_path(text: str, ast: nodes.Template, rendered: str, variables: Mapping[str, object], env: list[str]) -> None:
    # Only where a value builds a path: `mode` naming a profile may be anything.
    for name in sorted(meta.find_undeclared_variables(ast) & {"dt", "dtf", "mode"}):
        value = variables.get(name)
        problem = path_problem(value) if isinstance(value, str) else None
        if problem:
            raise ConfigError(f"template variable {name}={value!r} cannot build a path ({problem})")
    env_var = variables.get("env")
    values = env_var._values if isinstance(env_var, _Env) else {}
    for name in dict.fromkeys(env):
        problem = path_problem(values.get(name, ""), slashes=True)
        if problem:  # the value is not quoted: it may be a secret
            raise ConfigError(f"environment variable env.{name} cannot build a path ({problem})")
    literal = "".join(v if kind == "data" else "\0" for _, kind, v in _JINJA.lex(text))
    if _dotdots(rendered) > _dotdots(literal):
        raise ConfigError("the rendered path has a '..' component the template text does not: refused")


def render_value(text: str, variables: Mapping[str, object], where: str, path: bool = False, quote: bool = True) -> str:
    """Render one string; ``where`` ("config.yaml: CONFIG.inputs.x.path") starts any error.

    ``path=True``: the value is a location, so the variables building it are checked (see :func:`path_problem`).
    ``quote=False``: an error does not quote the text, even masked (a value under a secret-looking key).

    Example:
        >>> render_value("in/{{ dt | default('latest') }}", template_variables(env={}), "x")
        'in/latest'
        >>> render_value("{{ ''.__class__ }}", template_variables(env={}), "c.yaml: k")
        Traceback (most recent call last):
        ubunye.exceptions.ConfigError: c.yaml: k: template tried to reach Python internals ('__class__')
    """
    if "{" not in text:
        return text
    env = variables.get("env")
    start = len(env._reads) if isinstance(env, _Env) else 0
    try:
        ast = _JINJA.parse(text)
        reached = _reaches_internals(ast)
        if reached:
            msg = f"{_INTERNALS} ({', '.join(map(repr, reached))})"
            raise ConfigError(msg)
        with _time_limit(RENDER_SECONDS):
            rendered = _JINJA.from_string(ast).render(**variables)
        if path:
            _check_path(text, ast, rendered, variables, env._reads[start:] if isinstance(env, _Env) else [])
        return rendered
    except ConfigError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except SecurityError as exc:
        raise ConfigError(f"{where}: {_INTERNALS} ({exc})") from None
    except _TooSlow:
        problem = f"template still rendering after {RENDER_SECONDS} s: refused (a loop that never ends?)"
    except jinja2.UndefinedError as exc:
        problem = f"undefined template variable: {exc.message}"
    except jinja2.TemplateSyntaxError as exc:
        problem = f"bad template (line {exc.lineno}): {exc.message}"
    except Exception as exc:  # 1/0, a filter given garbage, a deep recursion...: all the config's fault
        problem = f"template failed: {type(exc).__name__}: {exc}"
    # The text helps find the mistake, but may hold a password: quoted with secrets masked (URL userinfo,
    # query tokens...), and not at all under a secret-looking key. Python's message might quote a value too.
    shown = f" (template: {redact_url(text)[:160]!r})" if quote else ""
    raise ConfigError(f"{where}: {redact_url(problem)}{shown}") from None


def _key(keys: tuple[str | int, ...]) -> str:
    return "".join(f"[{k}]" if isinstance(k, int) else (f".{k}" if i else str(k)) for i, k in enumerate(keys))


def _is_path(keys: tuple[str | int, ...]) -> bool:
    return len(keys) == 4 and keys[0] == "CONFIG" and keys[1] in ("inputs", "outputs") and keys[3] == "path"


def _is_secret(keys: tuple[str | int, ...]) -> bool:
    # Dataset, expectation and profile names are names, not keys saying what a value is.
    return any(
        isinstance(k, str)
        and secret_key(k, names=i > 0 and keys[i - 1] in _NAMES, dataset=i > 1 and keys[i - 2] in DATASET_MAPS)
        for i, k in enumerate(keys)
    )


def render_tree(doc: dict[str, object], variables: Mapping[str, object], file: str) -> dict[str, object]:
    """Render every string value (never a key) inside a document's nested dicts and lists; errors start with
    ``file``.

    Example:
        >>> render_tree({"a": ["in/{{ dt }}", 1]}, template_variables(dt="2026-12-01", env={}), "c.yaml")
        {'a': ['in/2026-12-01', 1]}
    """
    return {k: _render(v, variables, file, (k,)) for k, v in doc.items()}


def _render(node: object, variables: Mapping[str, object], file: str, keys: tuple[str | int, ...]) -> object:
    if isinstance(node, str):
        where = f"{file}: {_key(keys)}"
        return render_value(node, variables, where, path=_is_path(keys), quote=not _is_secret(keys))
    if isinstance(node, dict):
        return {k: _render(v, variables, file, (*keys, k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_render(v, variables, file, (*keys, i)) for i, v in enumerate(node)]
    return node
