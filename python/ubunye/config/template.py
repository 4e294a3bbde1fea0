"""Jinja templating of config values: ``dt``, ``dtf``, ``mode`` and ``env``, strictly and in Jinja's sandbox.

A template cannot reach Python internals (``__class__``, ``self``, ``cycler.__init__``...): that, and any other
failure while rendering, is a :class:`~ubunye.exceptions.ConfigError` naming the file and the key; it quotes the
template only with its secrets masked (it may hold a password). Where a value is an input's or output's ``path``,
the variables building it are checked too (see :func:`path_problem`).
"""

from __future__ import annotations

import functools
import os
import re
import signal
import threading
import time
import unicodedata
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from types import FrameType
from urllib.parse import unquote

import jinja2
from jinja2 import meta, nodes
from jinja2.compiler import CodeGenerator, Frame
from jinja2.exceptions import SecurityError
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment

from ubunye.engines.paths import is_url
from ubunye.exceptions import ConfigError
from ubunye.lineage.redact import redact_url
from ubunye.lineage.secrets import DATASET_MAPS, secret_key
from ubunye.visible import invisible

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


def _size(value: object, what: str) -> None:
    """Refuse a width, count or size above :data:`_MAX_REPEAT`: what a one-line template may make."""
    if isinstance(value, int) and not isinstance(value, bool) and value > _MAX_REPEAT:
        raise OverflowError(f"{what} above {_MAX_REPEAT} is refused")


# The widths and precisions of %-formatting (`%0999999999d`, `%*d`) and of str.format specs (`{:>999999999}`).
_PERCENT = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")
_BRACES = re.compile(r"\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}")


def _check_format(text: object, args: object) -> None:
    """Refuse a format string whose widths or precisions, written or passed (``*``, ``{:{w}}``), are too big.

    The arguments count only where the text takes a width from them: ``'%d' % 20261201`` is a value, not a width.
    """
    if not isinstance(text, str):
        return
    percent = list(_PERCENT.finditer(text))
    numbers = [int(n) for m in percent for n in m.groups() if n and n != "*"]
    passed = any("*" in m.groups() for m in percent)
    for field in _BRACES.findall(text):
        spec = field.partition(":")[2]
        numbers += [int(n) for n in re.findall(r"\d+", re.sub(r"\{[^{}]*\}", "", spec))]
        passed = passed or "{" in spec
    if passed:
        values = args.values() if isinstance(args, Mapping) else args if isinstance(args, tuple | list) else (args,)
        numbers += [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    for n in numbers:
        _size(n, "a format width or precision")


def _weight(value: object, limit: int = _MAX_REPEAT) -> int:
    """The characters of a text, or of a list the weights of its items (each at least 1), everything nested
    counted (a list holding the same long list a million times is a million long lists once rendered); counted
    only to just past ``limit``.

    Example:
        >>> _weight("abc"), _weight([1, "ab", [3, 4], []]), _weight([["x" * 10**6]] * 3) > _MAX_REPEAT
        (3, 6, True)
    """
    if isinstance(value, str):
        return len(value)
    if isinstance(value, Mapping):
        value = list(value.values())
    if not isinstance(value, list | tuple):
        return 1
    total = 0
    for item in value:
        sized = isinstance(item, str | list | tuple | Mapping)
        total += max(_weight(item, limit - total), 1) if sized else 1
        if total > limit:
            break
    return total


def _joined(sep: object, items: object) -> None:
    if isinstance(items, list | tuple) and isinstance(sep, str):
        _size(_weight(items) + len(sep) * max(len(items) - 1, 0), "a joined text")


def _replaced(text: object, old: object, new: object) -> None:
    if isinstance(text, str) and isinstance(old, str) and isinstance(new, str):
        hits = len(text) + 1 if old == "" else text.count(old)
        _size(len(text) + hits * max(len(new) - len(old), 0), "a replaced text")


def _summed(items: object, start: object) -> None:
    if isinstance(start, str | list | tuple):  # `sum(start=[])` concatenates the items
        _size(_weight(start) + _weight(items), "a summed list")


def _indented(text: object, width: object) -> None:
    if isinstance(text, str):
        per_line = len(width) if isinstance(width, str) else width if isinstance(width, int) else 0
        _size(len(text) + (text.count("\n") + 1) * per_line, "an indented text")


#: Checks of the filters that take a size, given the filter's arguments after any context: each raises before
#: the filter allocates (`'x' | center(1000000000)` would take 1 GB, `%0999999999d` 4 GB).
_FILTER_CHECKS: dict[str, Callable[..., None]] = {
    "center": lambda value, width=80, *_a, **_k: _size(width, "a width"),
    "indent": lambda s, width=4, *_a, **_k: _indented(s, width),
    "wordwrap": lambda s, width=79, *_a, **_k: _size(width, "a width"),
    "truncate": lambda s, length=255, *_a, **_k: _size(length, "a length"),
    "format": lambda value, *args, **kwargs: _check_format(value, (*args, *kwargs.values())),
    "replace": lambda s, old, new, *_a, **_k: _replaced(s, old, new),
    "join": lambda value, d="", *_a, **_k: _joined(d, value),
    "batch": lambda value, linecount, *_a, **_k: _size(linecount, "a batch size"),
    "slice": lambda value, slices, *_a, **_k: _size(slices, "a number of slices"),
    "tojson": lambda value, indent=None, *_a, **_k: _size(indent, "an indent"),
    "sum": lambda value, attribute=None, start=0, *_a, **_k: _summed(value, start),
}


def _bounded_filter(name: str, func: Callable[..., object]) -> Callable[..., object]:
    check = _FILTER_CHECKS[name]
    passes_context = getattr(func, "jinja_pass_arg", None) is not None  # eval_context / environment first

    @functools.wraps(func)  # keeps jinja_pass_arg: Jinja still passes the context
    def bounded(*args: object, **kwargs: object) -> object:
        check(*(args[1:] if passes_context else args), **kwargs)
        return func(*args, **kwargs)

    return bounded


#: str methods that take a size: the check gets the string and the call's arguments.
_METHOD_CHECKS: dict[str, Callable[..., None]] = {
    "center": lambda s, width=0, *_a, **_k: _size(width, "a width"),
    "ljust": lambda s, width=0, *_a, **_k: _size(width, "a width"),
    "rjust": lambda s, width=0, *_a, **_k: _size(width, "a width"),
    "zfill": lambda s, width=0, *_a, **_k: _size(width, "a width"),
    "expandtabs": lambda s, tabsize=8, *_a, **_k: _size(s.count("\t") * tabsize, "an expanded text"),
    "replace": lambda s, old="", new="", *_a, **_k: _replaced(s, old, new),
    "join": lambda s, items=(), *_a, **_k: _joined(s, list(items) if isinstance(items, list | tuple) else items),
    "format": lambda s, *args, **kwargs: _check_format(s, (*args, *kwargs.values())),
    "format_map": lambda s, mapping=None, *_a, **_k: _check_format(s, mapping or {}),
}


class _CodeGenerator(CodeGenerator):
    """Jinja's code generator, with ``a ~ b`` joined by the sandbox's checked join (Jinja's own joins at once:
    ``{% set s = s ~ s %}`` thirty times is a text of 2**30 times the first)."""

    def visit_Concat(self, node: nodes.Concat, frame: Frame) -> None:
        self.write("environment.checked_concat((")
        for arg in node.nodes:
            self.visit(arg, frame)
            self.write(", ")
        self.write("))")


class _Sandbox(ImmutableSandboxedEnvironment):
    """The sandbox, with no globals (``cycler``, ``lipsum``...: a config needs none) and bounded sizes.

    Whatever takes a size (``*``, ``+`` and ``~`` on texts and lists, ``%`` on text, ``**``, the filters of
    :data:`_FILTER_CHECKS`, the str methods of :data:`_METHOD_CHECKS`) is checked before it runs, lists counted
    with what they hold (:func:`_weight`): a one-line template cannot fill the memory.
    """

    code_generator_class = _CodeGenerator
    intercepted_binops = frozenset({"*", "**", "%", "+"})

    def checked_concat(self, values: tuple[object, ...]) -> str:
        """``a ~ b ~ ...``, as Jinja's ``str_join``, once the size of the result is known to be bounded."""
        parts = [str(v) for v in values]
        _size(sum(len(p) for p in parts), "a joined text")
        return "".join(parts)

    def call_binop(self, context: Context, operator: str, left: object, right: object) -> object:
        sized = [v for v in (left, right) if isinstance(v, str | list | tuple)]
        counts = [v for v in (left, right) if isinstance(v, int) and not isinstance(v, bool)]
        if operator == "*" and sized and counts and _weight(sized[0]) * counts[0] > _MAX_REPEAT:
            raise OverflowError(f"a repetition longer than {_MAX_REPEAT} is refused")
        if operator == "+" and len(sized) == 2 and _weight(left) + _weight(right) > _MAX_REPEAT:
            raise OverflowError(f"a text or list longer than {_MAX_REPEAT} is refused")
        if operator == "**" and isinstance(right, int | float) and abs(right) > 64:
            raise OverflowError("an exponent above 64 is refused")
        if operator == "%" and isinstance(left, str):
            _check_format(left, right)
        return super().call_binop(context, operator, left, right)

    def wrap_str_format(self, value: object) -> Callable[..., str] | None:
        """Jinja's sandboxed ``str.format``/``format_map``, with the widths checked first."""
        wrapped = super().wrap_str_format(value)
        if wrapped is None:
            return None
        text, name = getattr(value, "__self__", ""), getattr(value, "__name__", "")

        def checked(*args: object, **kwargs: object) -> str:
            _METHOD_CHECKS[name](text, *args, **kwargs)
            return wrapped(*args, **kwargs)

        return checked

    def call(__self, __context: Context, __obj: object, *args: object, **kwargs: object) -> object:
        owner, name = getattr(__obj, "__self__", None), getattr(__obj, "__name__", "")
        if isinstance(owner, str) and name in _METHOD_CHECKS:
            _METHOD_CHECKS[name](owner, *args, **kwargs)
        return super().call(__context, __obj, *args, **kwargs)


_JINJA = _Sandbox(undefined=jinja2.StrictUndefined, keep_trailing_newline=True, autoescape=False)
_JINJA.globals.clear()
_JINJA.filters.update({name: _bounded_filter(name, _JINJA.filters[name]) for name in _FILTER_CHECKS})


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


def path_problem(value: str, *, slashes: bool = False, url: bool = False) -> str | None:
    """Why ``value`` cannot build a path, or None.

    Refused: empty, blank, ``.``/``..``, a separator, a control or invisible character (``U+202E`` would show the
    folder's name reversed, ``U+3164`` shows as nothing: :func:`~ubunye.visible.invisible`), a value
    starting with ``-`` (read as an option by a shell tool) or with a space at either end. ``url=True`` (the path
    is a URL, which is percent-decoded): also ``%``, ``#`` and ``?``, since ``%2e%2e%2f`` decodes to ``../`` and
    ``#``/``?`` would cut the path short.

    ``slashes=True`` (an ``env`` value such as ``/lake``) allows separators but still refuses ``..`` components
    (decoded first when ``url``) and control characters; nothing else (it may be a whole URL, with a query).

    Example:
        >>> path_problem("../.."), path_problem("2026-12-01"), path_problem("/lake/x", slashes=True)
        ("contains '/', '..'", None, None)
        >>> path_problem("%2e%2e", url=True), path_problem("-"), path_problem(" ")
        ("contains '%'", "starts with '-'", 'it is blank')
    """
    if value == "" or (value == "." and not slashes):
        return "it is empty" if value == "" else "it is '.'"
    if not slashes and not value.strip():
        return "it is blank"
    found = [] if slashes else [f"{s!r}" for s in ("/", "\\", *(("%", "#", "?") if url else ())) if s in value]
    # A variable may not hold '..' at all (x..y is harmless, but no date or mode needs it); a longer env value
    # such as /lake may, just not as a component (decoded as a URL path would be).
    decoded = unquote(value) if url else value
    if (".." in value) if not slashes else (".." in re.split(r"[/\\]", decoded)):
        found.append("'..'")
    if any(unicodedata.category(c) == "Cc" for c in decoded):
        found.append("a control character")
    elif not slashes:
        odd = invisible(value)  # the rule of a path as written: U+3164 shows as nothing, as U+200B does
        if odd is not None:
            found.append(odd)
    if found:
        return f"contains {', '.join(found)}"
    if not slashes and value.startswith("-"):
        return "starts with '-'"
    if not slashes and value != value.strip():
        return "starts or ends with a space"
    return None


def _dotdots(text: str) -> int:
    return re.split(r"[/\\]", text).count("..")


def _check_path(text: str, ast: nodes.Template, rendered: str, variables: Mapping[str, object], env: list[str]) -> None:
    # Only where a value builds a path: `mode` naming a profile may be anything. A URL's path is percent-decoded
    # by whatever opens it (file:// here, fsspec for the others), so a value is checked as it will be decoded.
    url = is_url(rendered)
    for name in sorted(meta.find_undeclared_variables(ast) & {"dt", "dtf", "mode"}):
        value = variables.get(name)
        problem = path_problem(value, url=url) if isinstance(value, str) else None
        if problem:
            where = (
                " (the path is a URL: percent-decoded, ended by '?' or '#')"
                if url and isinstance(value, str) and any(c in value for c in "%#?")
                else ""
            )
            raise ConfigError(f"template variable {name}={value!r} cannot build a path ({problem}){where}")
    env_var = variables.get("env")
    values = env_var._values if isinstance(env_var, _Env) else {}
    for name in dict.fromkeys(env):
        problem = path_problem(values.get(name, ""), slashes=True, url=url)
        if problem:  # the value is not quoted: it may be a secret
            raise ConfigError(f"environment variable env.{name} cannot build a path ({problem})")
    literal = "".join(v if kind == "data" else "\0" for _, kind, v in _JINJA.lex(text))
    if _dotdots(rendered) > _dotdots(literal) or (url and _dotdots(unquote(rendered)) > _dotdots(unquote(literal))):
        raise ConfigError("the rendered path has a '..' component the template text does not: refused")
    # A '?' or '#' a value brought into a URL ends its path there: the data would land somewhere else.
    for mark in ("?", "#") if url else ():
        if rendered.count(mark) > literal.count(mark):
            raise ConfigError(f"a template value put {mark!r} into the URL (its path would end there): refused")


#: What a template variable may not bring into SQL: a quote or backslash ends or escapes a literal, ``;`` starts
#: another statement, ``--`` and ``/*`` comment the rest out.
_SQL_ACTIVE = ("'", '"', "`", "\\", ";", "--", "/*", "*/")
_SQL_VARS = frozenset({"dt", "dtf", "mode"})
#: What a value may be outside a quoted literal: one constant (a number, a date such as 2026-12-01: constants
#: joined by '-', which no other token can join), or a word joined to a name the query writes (orders_{{ mode }}).
_SQL_LITERAL = re.compile(r"[0-9]+(?:[-.][0-9]+)*")
_SQL_WORD = re.compile(r"[A-Za-z0-9_]+")
#: The text before a quoted alias (``AS "..."``): a name defined there refers to nothing, whatever it holds.
_AS = re.compile(r"(?i)(?<![\w$])AS\s*$")
_LITERAL_RULE = "it must be a number or a date"


def _code_rule(name: str) -> str:
    return (
        f"outside a quoted literal {_LITERAL_RULE}, or a word joined to a name the query writes, as in "
        f"orders_{{{{ {name} }}}}; a word alone names a column (id = {{{{ {name} }}}} with {name}=id is true on "
        f"every row); to compare with text, quote it: '{{{{ {name} }}}}'"
    )


def _name_rule(name: str) -> str:
    return (
        f'a value alone in double quotes or backticks is a column\'s name to DuckDB and polars (s = "{{{{ {name} }}}}" '
        f"with {name}=s is true on every row): to compare with text, write a string literal in single quotes, "
        f"'{{{{ {name} }}}}' ('...' is a string on every engine); to name a column, join it to characters the "
        f'config writes ("col_{{{{ {name} }}}}")'
    )


#: Private-use characters marking, while a query renders, what each expression using dt, dtf or mode wrote there:
#: open, the variables' names, separator, the text, close. sql_problem refuses them in a value (not printable).
_OPEN, _SEP, _CLOSE = "\ue000", "\ue001", "\ue002"
#: The filter that marks an expression's text: a name no template can write (a '-' ends a filter's name there).
_MARK_FILTER = "ubunye-sql-mark"
#: Statements whose body is written where it stands: an expression inside one writes straight into the query.
#: Any other (set, macro, call, filter blocks) captures text that a later expression may cut up.
_IN_PLACE = (nodes.Template, nodes.If, nodes.For, nodes.With, nodes.Scope, nodes.ScopedEvalContextModifier)
#: What each scanner state means for a value written there: "quoted" in a string literal ('...'), "named" in
#: double quotes or backticks (a string to Spark, a column's name to DuckDB and polars); "unknown" covers comments
#: and what follows text that the engines read differently ('$$' strings, a backslash before a literal's own quote,
#: '#' comments, a comment opened inside another).
_CONTEXTS = {"code": "code", "'": "quoted", '"': "named", "`": "named"}
#: Expressions whose value is a boolean: a name inside one decides something, its text reaches nothing.
_BOOLEAN = (nodes.Compare, nodes.Test, nodes.Not)


def sql_problem(value: str) -> str | None:
    """Why ``value`` (a ``dt``, ``dtf`` or ``mode``) cannot go into a SQL query or expression, or None.

    A business date or a mode never needs a quote: one that holds it is a mistake or an injection
    (``-dt "2026-12-01' OR '1'='1"`` would read every day). This is the rule everywhere in SQL; outside a quoted
    literal a value must also be one literal (see :func:`render_value`).

    Example:
        >>> sql_problem("2026-12-01"), sql_problem("a;b")
        (None, "contains ';'")
        >>> print(sql_problem("x' OR '1'='1"))
        contains "'"
    """
    found = [mark for mark in _SQL_ACTIVE if mark in value]
    if found:
        return f"contains {', '.join(repr(m) for m in found)}"
    if any(unicodedata.category(c) == "Cc" for c in value):
        return "contains a control character"
    odd = invisible(value)
    if odd is not None:
        return f"contains {odd}"
    return None


def _mark(value: object, names: str) -> str:
    return f"{_OPEN}{names}{_SEP}{value}{_CLOSE}"


_JINJA.filters[_MARK_FILTER] = _mark


def _mark_outputs(ast: nodes.Template, names: frozenset[str]) -> set[str]:
    """Wrap each expression written in place that uses one of ``names`` in the marking filter; the names also
    used another way (``{% set q = dt %}``, ``{% for c in dt %}``, a macro), whose text is not marked.

    A name whose value cannot reach the text as text is not a use: in a comparison, a test (``is defined``) or a
    ``not`` (each a boolean), or in what only decides (an ``{% if %}``'s or ``{% elif %}``'s test, the test of
    ``x if mode == 'a' else y``, a loop's ``if``): a value only tested may be anything. ``and``/``or`` give an
    operand (``mode or 'x'`` writes mode), a filter a text made from the value: those are uses. Of a ``~`` or
    ``x if t else y`` written in place, each part that uses a name is marked on its own: the template's own
    parts (``'orders_' ~ mode``) are written by the config.
    """
    seen: set[int] = set()
    for node in ast.find_all((*_BOOLEAN, nodes.If, nodes.CondExpr, nodes.For)):
        decides = node if isinstance(node, _BOOLEAN) else getattr(node, "test", None)  # If, CondExpr, For
        if decides is not None:
            seen.update(id(n) for n in (decides, *decides.find_all(nodes.Name)) if isinstance(n, nodes.Name))
    tested = frozenset(seen)

    def uses(expr: nodes.Node) -> list[nodes.Name]:
        found = [expr] if isinstance(expr, nodes.Name) else []
        return [
            n
            for n in [*found, *expr.find_all(nodes.Name)]
            if n.name in names and n.ctx == "load" and id(n) not in tested
        ]

    def marked(expr: nodes.Expr) -> nodes.Expr:
        if isinstance(expr, nodes.Concat):
            expr.nodes = [marked(part) for part in expr.nodes]
            return expr
        if isinstance(expr, nodes.CondExpr):  # its test is in `tested`
            expr.expr1 = marked(expr.expr1)
            expr.expr2 = None if expr.expr2 is None else marked(expr.expr2)
            return expr
        used = uses(expr)
        if not used or isinstance(expr, nodes.TemplateData):
            return expr
        seen.update(id(n) for n in used)
        joined = nodes.Const(",".join(sorted({n.name for n in used})))
        return nodes.Filter(expr, _MARK_FILTER, [joined], [], None, None, lineno=expr.lineno)

    def walk(node: nodes.Node, in_place: bool) -> None:
        for child in node.iter_child_nodes():
            if isinstance(child, nodes.Output) and in_place:
                child.nodes = [marked(expr) for expr in child.nodes]
            elif isinstance(child, nodes.Stmt):
                walk(child, in_place and isinstance(child, _IN_PLACE))

    walk(ast, True)
    return {n.name for n in ast.find_all(nodes.Name) if n.name in names and n.ctx == "load" and id(n) not in seen}


def _unmark(text: str) -> tuple[str, list[tuple[str, int, int]]] | None:
    """The text without its marks, and (names, start, end) of each marked part in it; None when the marks are
    not where the marking put them (a mark character in the template or an env value, a filter that moved one)."""
    parts: list[str] = []
    spans: list[tuple[str, int, int]] = []
    size, at = 0, 0
    while True:
        opened = text.find(_OPEN, at)
        plain = text[at:] if opened < 0 else text[at:opened]
        if _SEP in plain or _CLOSE in plain:
            return None
        parts.append(plain)
        size += len(plain)
        if opened < 0:
            return "".join(parts), spans
        sep, close = text.find(_SEP, opened), text.find(_CLOSE, opened)
        if sep < 0 or close < sep or _OPEN in text[opened + 1 : close] or _SEP in text[sep + 1 : close]:
            return None
        names, value = text[opened + 1 : sep], text[sep + 1 : close]
        spans.append((names, size, size + len(value)))
        parts.append(value)
        size += len(value)
        at = close + 1


def _sql_contexts(text: str, starts: list[int]) -> list[tuple[str, int]]:
    """Where each position of ``starts`` (ascending) lies in the SQL ``text``: "code", "quoted" (in '...'),
    "named" (in "..." or `...`) or "unknown"; with, when quoted or named, where its opening quote is (else -1).

    Read as every engine here reads it (Spark SQL, DuckDB, polars), failing towards "unknown" where they differ:
    after a '$' ('$$' strings: DuckDB), a '#' (a comment to some), a backslash before a literal's own quote
    (`'a\\'` is open to Spark, which reads escapes, and closed to DuckDB; a backslash before another backslash
    or any other character leaves both inside the literal), a carriage return or backslash in a '--' comment,
    or a comment opened inside another (nested in DuckDB and Spark, not in polars). A doubled quote (`'it''s'`)
    stays inside the literal.

    Example:
        >>> bs = chr(92)  # a backslash
        >>> text = f"a = '{bs}d' AND b = '' AND c = 'x{bs}{bs}' AND d = '' AND e = 'x{bs}' AND f = ''"
        >>> _sql_contexts(text, [text.index("''") + 1, text.index("d = '") + 5, text.index("f = '") + 5])
        [('quoted', 17), ('quoted', 42), ('unknown', -1)]
    """
    out: list[tuple[str, int]] = []
    state, i, opened = "code", 0, -1
    for start in starts:
        while i < start and state != "unknown":
            ch, two = text[i], text[i : i + 2]
            step = 1
            if state == "code":
                if ch in "'\"`":
                    state, opened = ch, i
                elif two in ("--", "/*"):
                    state, step = ("line" if two == "--" else "block"), 2
                elif ch in "$#\\":
                    state = "unknown"
            elif state in ("'", '"', "`"):
                after = text[i + 1 : i + 2]
                if ch == "\\":
                    state, step = ("unknown", 1) if after == state else (state, 2 if after == "\\" else 1)
                elif ch == state:
                    state, step = (state, 2) if after == state else ("code", 1)
            elif state == "line":
                state = "code" if ch == "\n" else "unknown" if ch in "\r\\" else state
            elif two == "/*":  # in a block comment
                state = "unknown"
            elif two == "*/":
                state, step = "code", 2
            i += step
        context = _CONTEXTS.get(state, "unknown") if i == start else "unknown"
        out.append((context, opened if context in ("quoted", "named") else -1))
    return out


def _is_name_char(ch: str) -> bool:
    return ch.isascii() and (ch.isalnum() or ch == "_")


def _one_literal(text: str, start: int, end: int, written: bytearray) -> bool:
    """Whether the value at ``text[start:end]``, outside any quoted literal, is one literal.

    A word counts only joined to name characters the config wrote (``written`` marks the values' own), the
    name it makes starting with a letter or '_': `orders_{{ mode }}` is one name, `{{ mode }}` alone any column.
    """
    value = text[start:end]
    if not value or _SQL_LITERAL.fullmatch(value):
        return True
    if _SQL_WORD.fullmatch(value):
        left, right = start, end
        while left > 0 and _is_name_char(text[left - 1]):
            left -= 1
        while right < len(text) and _is_name_char(text[right]):
            right += 1
        joined = any(not written[j] for j in (*range(left, start), *range(end, right)))
        return joined and not text[left].isdigit()
    return False


def _alone_in_quotes(text: str, opened: int, start: int, end: int, written: bytearray) -> str | None:
    """What the quotes opened at ``opened`` hold, when it is all the values' own text (``written``) around
    ``text[start:end]``, nothing the config wrote (a doubled quote ends nothing); else None.

    Example:
        >>> text = 'a = "id" AND "c_id"'
        >>> written = bytearray(len(text))
        >>> written[5:7] = written[16:18] = b"ww"
        >>> _alone_in_quotes(text, 4, 5, 7, written), _alone_in_quotes(text, 13, 16, 18, written)
        ('id', None)
    """
    quote, left, right = text[opened], start, end
    while left > opened + 1 and written[left - 1]:
        left -= 1
    while right < len(text) and written[right]:
        right += 1
    closed = text[right : right + 1] == quote and text[right + 1 : right + 2] != quote
    return text[left:right] if left == opened + 1 and closed else None


def _sql_error(names: list[str], variables: Mapping[str, object], problem: str, made: str | None = None) -> ConfigError:
    shown = ", ".join(f"{name}={str(variables.get(name))[:60]!r}" for name in names)
    those = "template variable" + ("s" if len(names) > 1 else "")
    built = f" made {made[:60]!r} there, which" if made is not None else ""
    return ConfigError(
        f"{those} {shown}{built} cannot go into SQL ({problem}): it would change the statement the config wrote "
        "(a query must be exactly one SELECT, a value only a value in it)"
    )


def _render_sql(text: str, ast: nodes.Template, variables: Mapping[str, object], limit: int) -> str:
    """Render a query or expression, checking what dt, dtf and mode write into it, where they write it.

    Every value: :func:`sql_problem`. Then what each expression using one writes (marked while rendering; a
    value only tested writes nothing, see :func:`_mark_outputs`): inside quotes, nothing that could end them, and
    in double quotes or backticks not a value that is all they hold, bar a number or a date (a column's name to
    DuckDB and polars);
    outside, one literal (:func:`_one_literal`); where the engines may read the text before it differently, or
    where the value went through a variable, a loop or a macro first (not marked), a number or a date.
    """
    names = frozenset(
        name for name in meta.find_undeclared_variables(ast) & _SQL_VARS if isinstance(variables.get(name), str)
    )
    for name in sorted(names):
        problem = sql_problem(str(variables[name]))
        if problem:
            raise _sql_error([name], variables, problem)
    if not names:
        return _bounded_render(_JINJA.from_string(ast), variables, limit)
    marked_ast = _JINJA.parse(text)
    loose = _mark_outputs(marked_ast, names)
    # The marks take room of their own: the bound on the text without them is checked below.
    unmarked = _unmark(_bounded_render(_JINJA.from_string(marked_ast), variables, 2 * limit))
    spans: list[tuple[str, int, int]] = []
    if unmarked is None:  # what was written where cannot be told: every value is held to the strictest rule
        plain, loose = _bounded_render(_JINJA.from_string(ast), variables, limit), set(names)
    else:
        plain, spans = unmarked
        if len(plain) > limit:
            raise OverflowError(f"a rendered value longer than {limit} characters is refused")
    for name in sorted(loose):
        if not _SQL_LITERAL.fullmatch(str(variables[name])):
            rule = f"used through a set, a loop or a macro rather than written in place by {{{{ }}}}, {_LITERAL_RULE}"
            raise _sql_error([name], variables, rule)
    written = bytearray(len(plain))
    for _, start, end in spans:
        written[start:end] = b"\x01" * (end - start)
    contexts = _sql_contexts(plain, [s for _, s, _ in spans])
    for (span_names, start, end), (context, opened) in zip(spans, contexts, strict=True):
        value, used = plain[start:end], span_names.split(",")
        if context in ("quoted", "named"):
            problem = sql_problem(value)
            whole = _alone_in_quotes(plain, opened, start, end, written) if context == "named" and value else None
            # any text that is all the quotes hold is a name there ("order date" names a column too), bar a number
            # or a date (a string to Spark, a name no table is likely to have) and an alias being defined
            if not problem and whole and not _SQL_LITERAL.fullmatch(whole) and not _AS.search(plain[:opened]):
                problem = _name_rule(used[0])
        elif context == "code":
            problem = None if _one_literal(plain, start, end, written) else _code_rule(used[0])
        else:
            problem = (
                None
                if _SQL_LITERAL.fullmatch(value) or not value
                else (
                    f"where the engines may read the query's text before it differently (in a comment, after '$', "
                    f"'#' or a backslash before a literal's own quote), {_LITERAL_RULE}"
                )
            )
        if problem:
            same = len(used) == 1 and value == variables.get(used[0])
            raise _sql_error(used, variables, problem, None if same else value)
    return plain


def _bounded_render(template: jinja2.Template, variables: Mapping[str, object], limit: int) -> str:
    """``template.render``, piece by piece, stopped once the text passes ``limit`` characters: each piece is
    bounded, and ``{{ s }}`` written ten thousand times would still be ten thousand of them."""
    parts, size = [], 0
    for part in template.generate(**variables):
        size += len(part)
        if size > limit:
            raise OverflowError(f"a rendered value longer than {limit} characters is refused")
        parts.append(part)
    return "".join(parts)


def render_value(
    text: str,
    variables: Mapping[str, object],
    where: str,
    path: bool = False,
    quote: bool = True,
    sql: bool = False,
) -> str:
    """Render one string; ``where`` ("config.yaml: CONFIG.inputs.x.path") starts any error.

    ``path=True``: the value is a location, so the variables building it are checked (see :func:`path_problem`).
    ``sql=True``: the value is SQL (a query, an expectation's expression), so the variables in it are checked
    (see :func:`sql_problem`).
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
            if sql:
                rendered = _render_sql(text, ast, variables, len(text) + _MAX_REPEAT)
            else:
                rendered = _bounded_render(_JINJA.from_string(ast), variables, len(text) + _MAX_REPEAT)
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


def _is_sql(keys: tuple[str | int, ...]) -> bool:
    # CONFIG.transform.query, and CONFIG.expectations.<target>.expression (a string, or a list of them).
    if keys == ("CONFIG", "transform", "query"):
        return True
    return len(keys) in (4, 5) and keys[:2] == ("CONFIG", "expectations") and keys[3] == "expression"


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
        sql = _is_sql(keys)
        return render_value(node, variables, where, path=_is_path(keys), quote=not _is_secret(keys), sql=sql)
    if isinstance(node, dict):
        return {k: _render(v, variables, file, (*keys, k)) for k, v in node.items()}
    if isinstance(node, list):
        return [_render(v, variables, file, (*keys, i)) for i, v in enumerate(node)]
    return node
