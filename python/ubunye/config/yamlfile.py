"""Read config.yaml as plain data: strict YAML, every problem an error naming the file, the key and the line.

Refused: a file that is not UTF-8 or is larger than :data:`MAX_BYTES`; a duplicate key; a key that is not a
string (``1:``, ``null:``, ``on:``, ``[a]:``); a tag other than str, int, float, bool, null, seq and map; more than
:data:`MAX_ALIASES` aliases, a recursive alias, or a document that expands to more than :data:`MAX_NODES` nodes
or :data:`MAX_DEPTH` levels; an integer longer than :data:`MAX_INT_CHARS` characters, or not written in plain
decimal digits (YAML 1.1 reads ``010`` as 8, ``0x10`` as 16, ``1:30`` as 90); a float written in base 60 or with a
``_`` that does not set apart thousands of its whole part (``1:30.5`` is 90.5, ``1_0.5`` is 10.5), or too large or
too small for a float (``1.0e+400`` is inf, ``1.0e-400`` is 0.0); a second merge key ``<<`` in one mapping (YAML
would let it override the first without a word), and a key two mappings merged by one ``<<`` give differently
(YAML readers differ on which wins). Merge keys are applied here, the same on every PyYAML. Dates and times stay
the strings written (a ``datetime`` is not data a record holds).

Example:
    >>> parse_yaml("a: 1\\nb: [x, 2026-12-01]\\n", "config.yaml")
    {'a': 1, 'b': ['x', '2026-12-01']}
    >>> parse_yaml("a: 1\\na: 2\\n", "config.yaml")
    Traceback (most recent call last):
    ubunye.exceptions.ConfigError: config.yaml: a: line 2: duplicate key (first at line 1)
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import ClassVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ubunye.exceptions import ConfigError
from ubunye.lineage.redact import redact_url

MAX_BYTES = 4 * 1024 * 1024
MAX_ALIASES = 50
MAX_NODES = 100_000
MAX_DEPTH = 64
#: The longest integer a config may write (sign, digits, ``_`` and base prefix counted): a Delta version needs 19
#: digits. Past 4,300 decimal digits Python refuses to convert an integer to or from text (a ValueError from
#: inside PyYAML, or from a message quoting the number).
MAX_INT_CHARS = 100

_TAG = "tag:yaml.org,2002:"
_DATA_TAGS = {f"{_TAG}{t}" for t in ("str", "int", "float", "bool", "null", "seq", "map")}
_KINDS = {"int": "an integer", "float": "a number", "bool": "a boolean", "null": "null", "seq": "a list"}
_MERGE = f"{_TAG}merge"


class _Refused(Exception):
    """A problem found while composing; ``key`` ("" for none) and ``line`` say where."""

    def __init__(self, key: str, line: int, problem: str) -> None:
        super().__init__(problem)
        self.key, self.line, self.problem = key, line, problem


class _Loader(yaml.SafeLoader):
    """SafeLoader that keeps timestamps as strings and bounds aliases and nesting while composing."""

    # A class attribute in PyYAML (its stub declares an instance one, hence the ignore).
    yaml_implicit_resolvers: ClassVar[dict[str, list[tuple[str, re.Pattern[str]]]]] = {  # type: ignore[misc]
        first: [(tag, rx) for tag, rx in resolvers if tag != f"{_TAG}timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.aliases = 0
        self.depth = 0

    def compose_node(self, parent: Node | None, index: object) -> Node | None:
        mark = self.peek_event().start_mark  # type: ignore[no-untyped-call]  # unannotated in types-PyYAML
        if self.check_event(yaml.AliasEvent):
            # Counted here, before anything is expanded: "billion laughs" is a few lines of aliases.
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise _Refused("", mark.line + 1, f"more than {MAX_ALIASES} aliases (*name): refused")
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                raise _Refused("", mark.line + 1, f"nested more than {MAX_DEPTH} levels deep: refused")
            # PyYAML passes None (the root), a list position or a mapping's key node; its stub says int only.
            return super().compose_node(parent, index)  # type: ignore[arg-type]
        finally:
            self.depth -= 1


#: An integer as written in decimal: YAML 1.1 also reads octal (``010`` is 8), hex, binary, ``1_0`` and base 60
#: (``1:30`` is 90), so the number kept would not be the text a reader of the file sees.
#: Thousands written apart (``1_000_000``, as in Python) are that number, and a common way to write a limit.
_DECIMAL = re.compile(r"[-+]?(?:0|[1-9][0-9]*|[1-9][0-9]{0,2}(?:_[0-9]{3})+)")


def _int_problem(node: ScalarNode) -> str | None:
    """Why an integer scalar cannot be read as the number its text shows, or None."""
    text = node.value
    if len(text) > MAX_INT_CHARS:
        return f"an integer written with {len(text)} characters (at most {MAX_INT_CHARS})"
    if _DECIMAL.fullmatch(text):
        return None
    try:  # what PyYAML would have made of it, to say why it is refused
        read = f"YAML 1.1 reads it as {yaml.SafeLoader.construct_yaml_int(yaml.constructor.SafeConstructor(), node)}"
    except (ValueError, IndexError, yaml.YAMLError):  # IndexError: PyYAML indexes the text, `!!int ''` has none
        read = "it is not a YAML integer"
    return (
        f"the integer {text!r} is not written in plain decimal digits: {read}; write the number in decimal, or "
        f'quote it ("{text}") for text'
    )


#: A float as a reader reads it: digits with one ``.`` and an optional exponent, or YAML's ``.inf`` / ``.nan``.
#: YAML 1.1 also reads base 60 (``1:30.5`` is 90.5) and drops every ``_`` (``1_0.5`` is 10.5, ``1.5_0`` 1.5): only
#: thousands set apart in the whole part (``1_000.5``) are allowed, as for integers. A leading zero (``01.5``),
#: ``.5`` and ``5.`` are the numbers they show (no octal for floats), so they stay allowed.
_FLOAT = re.compile(
    r"[-+]?(?:[0-9]*|[1-9][0-9]{0,2}(?:_[0-9]{3})+)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|[-+]?\.(?:nan|NaN|NAN)"
)


def _float_problem(node: ScalarNode) -> str | None:
    """Why a float scalar cannot be read as the number its text shows, or None."""
    text = node.value
    try:  # what PyYAML makes of it; an explicit `!!float abc` fails here instead of inside construct_document
        value = yaml.SafeLoader.construct_yaml_float(yaml.constructor.SafeConstructor(), node)
    except (ValueError, IndexError, yaml.YAMLError):  # only an explicit tag gets here: YAML resolves numbers alone
        return f"{text!r} is tagged !!float but is not a number: write a number, or drop the tag for text"
    if not _FLOAT.fullmatch(text):
        grouping = " (_ may only set apart thousands of the whole part, as in 1_000.5)" if "_" in text else ""
        read = f"YAML 1.1 reads it as {value!r}{grouping}"
        return (
            f"the number {text!r} is not written in plain decimal digits: {read}; write the number in decimal, or "
            f'quote it ("{text}") for text'
        )
    written = text.lower().replace("_", "").lstrip("+-")
    # A float holds about 5e-324 to 1.8e308: past either end the number kept is not the one written.
    if math.isinf(value) and written != ".inf":
        return f'the number {text!r} is too large for a float (read as inf, past 1.8e308): quote it ("{text}") for text'
    if value == 0 and re.search(r"[1-9]", written.partition("e")[0]):
        return f'the number {text!r} is too small for a float (read as 0.0, below 5e-324): quote it ("{text}") for text'
    return None


#: The numbers whose text YAML 1.1 may read as another number, with the check of each.
_NUMBER_PROBLEMS = {f"{_TAG}int": _int_problem, f"{_TAG}float": _float_problem}


def _where(key: str, part: str | int) -> str:
    if isinstance(part, int):
        return f"{key}[{part}]"
    return f"{key}.{part}" if key else part


def _key_problem(node: Node) -> str | None:
    if isinstance(node, ScalarNode) and node.tag == f"{_TAG}str":
        return None
    if isinstance(node, ScalarNode):
        kind = _KINDS.get(node.tag.removeprefix(_TAG), node.tag)
        return f"the key {node.value!r} is read as {kind}, not a string: quote it"
    return f"a key must be a string, not {'a list' if isinstance(node, SequenceNode) else 'a mapping'}"


def _pairs(node: MappingNode, key: str) -> list[tuple[str, Node]]:
    """The values of a mapping with their key paths, refusing a key that is not a string or is given twice (a
    second merge key ``<<`` too); the mappings a ``<<`` names are checked at the mapping's own path."""
    children: list[tuple[str, Node]] = []
    first: dict[str, int] = {}
    merged_at = 0  # the line of the merge key: apart from `first`, where a quoted "<<" is a plain key
    for k, v in node.value:
        here, kline = _where(key, str(k.value)), k.start_mark.line + 1
        if k.tag == _MERGE:  # `<<: *base`: keys written beside it override the merged ones
            # A second `<<` is a duplicate key too: PyYAML merges both and the second's keys silently win.
            if merged_at:
                msg = f"duplicate merge key (first at line {merged_at}): merge several with one, <<: [*a, *b]"
                raise _Refused(here, kline, msg)
            merged_at = kline
            children.append((key, v))
            continue
        problem = _key_problem(k)
        if problem:
            raise _Refused(key, kline, problem)
        if k.value in first:
            raise _Refused(here, kline, f"duplicate key (first at line {first[k.value]})")
        first[k.value] = kline
        children.append((here, v))
    return children


def _same(a: Node, b: Node) -> bool:
    """Whether two values are the same node, or the same value however written (``format: parquet`` in two
    mappings; ``options: {sep: ';'}`` in both; ``1.0`` and ``1.00``): every reader then gives the same result."""
    alike = isinstance(a, ScalarNode) and isinstance(b, ScalarNode) and (a.tag, a.value) == (b.tag, b.value)
    if a is b or alike:
        return True
    try:  # each node alone, as a document (checked already: no tag or alias reaches a constructor it should not)
        return bool(yaml.safe_load(yaml.serialize(a)) == yaml.safe_load(yaml.serialize(b)))
    except yaml.YAMLError:
        return False


def _merged(node: MappingNode, key: str) -> list[tuple[Node, Node]]:
    """The pairs of ``node`` with its merge key applied (the mappings it names are merged already: checked first).

    Keys written beside ``<<`` override the merged ones; a key two of the merged mappings give with different
    values is refused, since YAML readers differ on which wins: the merge spec says the first listed, PyYAML 6.0.4
    the last, except for one-letter keys (yaml/pyyaml#953: it tells keys apart by object identity, and Python
    shares one-letter strings). Merging here, with no ``<<`` left for PyYAML, makes the result the same on every
    version; it is also why an override of a one-letter key inside a merged mapping is kept.
    """
    pairs: list[tuple[Node, Node]] = node.value
    merges = [(k, v) for k, v in pairs if k.tag == _MERGE]
    if not merges:
        return pairs
    ((merge_key, value),) = merges  # _pairs refused a second
    here, line = _where(key, "<<"), merge_key.start_mark.line + 1
    own = [(k, v) for k, v in pairs if k.tag != _MERGE]
    written = {k.value for k, _ in own}
    merged: dict[str, tuple[Node, Node]] = {}
    for source in value.value if isinstance(value, SequenceNode) else [value]:
        if not isinstance(source, MappingNode):
            raise _Refused(here, source.start_mark.line + 1, "a merge key takes a mapping or a list of them: <<: *a")
        for k, v in source.value:
            name = k.value
            if name in merged and not _same(merged[name][1], v) and name not in written:
                at = f"lines {merged[name][0].start_mark.line + 1} and {k.start_mark.line + 1}"
                msg = f"{name!r} is given by two merged mappings ({at}), and YAML readers differ on which wins: "
                raise _Refused(here, line, msg + f"write {name} beside the <<")
            merged.setdefault(name, (k, v))
    return [pair for name, pair in merged.items() if name not in written] + own


def _check(node: Node, key: str, depth: int, seen: dict[int, tuple[int, int]], active: set[int]) -> tuple[int, int]:
    """(expanded node count, height) of ``node``, checking keys and tags once per node (aliases share nodes), and
    applying merge keys once each mapping's values are checked."""
    line = node.start_mark.line + 1
    if id(node) in active:
        raise _Refused(key, line, "a recursive alias: refused")
    if id(node) in seen:
        size, height = seen[id(node)]
        if depth + height > MAX_DEPTH:
            raise _Refused(key, line, f"nested more than {MAX_DEPTH} levels deep (through aliases): refused")
        return size, height
    if node.tag not in _DATA_TAGS:
        raise _Refused(key, line, f"the YAML tag {node.tag!r} is not plain data: refused")
    number_problem = _NUMBER_PROBLEMS.get(node.tag)
    if number_problem and isinstance(node, ScalarNode):
        problem = number_problem(node)
        if problem:
            raise _Refused(key, line, problem)
    children: list[tuple[str, Node]] = []
    if isinstance(node, SequenceNode):
        children = [(_where(key, i), child) for i, child in enumerate(node.value)]
    elif isinstance(node, MappingNode):
        children = _pairs(node, key)
    active.add(id(node))
    size, height = 1, 0
    for where, child in children:
        child_size, child_height = _check(child, where, depth + 1, seen, active)
        size, height = size + child_size, max(height, child_height + 1)
        if size > MAX_NODES:  # named where the bound is crossed
            raise _Refused(where, child.start_mark.line + 1, f"expands to more than {MAX_NODES} nodes: refused")
    active.discard(id(node))
    if isinstance(node, MappingNode):
        node.value = _merged(node, key)
    seen[id(node)] = (size, height)
    return size, height


def _yaml_error(where: str, exc: yaml.YAMLError) -> ConfigError:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or type(exc).__name__
    at = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
    context = getattr(exc, "context", None)
    message = f"{where}: not valid YAML: {at}{problem}" + (f" ({context})" if context else "")
    # The quoted source line helps, and may hold a password: masked while it is still a line of its own.
    snippet = mark.get_snippet() if mark is not None else None
    return ConfigError(message + (f"\n{redact_url(snippet)}" if snippet else ""))


def _reader_error(where: str, text: str, exc: yaml.reader.ReaderError) -> ConfigError:
    """A character YAML does not allow (NUL, most other control characters, a lone surrogate), named with its line;
    PyYAML's own message gives only a position in a string the user never saw."""
    line = text[: exc.position].count("\n") + 1
    code = exc.character if isinstance(exc.character, int) else ord(exc.character)
    msg = f"{where}: not valid YAML: line {line}: the character U+{code:04X} is not allowed in YAML: remove it"
    return ConfigError(msg)


def parse_yaml(text: str, where: str) -> object:
    """The data of one YAML document (``None`` when empty); ``where`` (the file) starts every error."""
    text = text.removeprefix("\ufeff")
    try:
        # The reader checks every character as it is built: a NUL byte fails here, not while parsing.
        loader = _Loader(text)
    except yaml.reader.ReaderError as exc:
        raise _reader_error(where, text, exc) from None
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _check(node, "", 0, {}, set())
        return loader.construct_document(node)
    except _Refused as exc:
        key = f" {exc.key}:" if exc.key else ""
        raise ConfigError(f"{where}:{key} line {exc.line}: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise _yaml_error(where, exc) from None
    finally:
        loader.dispose()


def read_yaml(path: Path) -> object:
    """Read and parse one YAML file: its size and encoding are checked before any parsing."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            msg = f"{path}: {size} bytes: larger than {MAX_BYTES} bytes, not a config file"
            raise ConfigError(msg)
        data = path.read_bytes()
    except OSError as exc:
        msg = f"{path}: cannot read: {exc.strerror or exc}"
        raise ConfigError(msg) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        msg = f"{path}: not UTF-8 text (byte {exc.start}, line {line}): save it as UTF-8"
        raise ConfigError(msg) from None
    return parse_yaml(text, str(path))
