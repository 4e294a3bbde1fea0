"""What a secret looks like: secret key names, secret shapes in text, and the secret values of a config.

Pure functions only (the process-wide registry of remembered values is in :mod:`ubunye.lineage.redact`).

Three ways a secret is recognised:

- by the name of its key (:func:`is_secret_name`): ``password``, ``token``, ``api_key``, ``creds``, ...;
- by its shape in any text (:func:`mask_shapes`): URL passwords, secret query parameters, ``key=value`` pairs,
  JDBC and Oracle connection strings, ``Authorization`` headers, private key blocks, well-known token formats;
- by its value (:func:`secret_values`): every value found the first two ways, plus environment variables with
  secret-looking names, so that the same text is masked wherever else it appears.

Example:
    >>> mask_shapes("postgresql://u:p@ss/w:rd@db.host:5432/x")
    'postgresql://u:***@db.host:5432/x'
    >>> sorted(secret_values({"creds": {"user": "alice", "pass": "hunter22"}}, {"DB_PASSWORD": "s3cr3t-pw"}))
    ['alice', 'hunter22', 's3cr3t-pw']
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from urllib.parse import quote, unquote

MASK = "***"

#: Values shorter than this are never masked by value: masking "a" or "42" everywhere would destroy every text
#: it occurs in. (They are still masked where their key or shape says so.)
MIN_SECRET_LENGTH = 4

# Values that are never secrets whatever their key says (``token: "none"``): masking them everywhere would hurt.
_NOT_VALUES = {"true", "false", "none", "null", "yes", "no"}

# --- names ----------------------------------------------------------------------------------------------------------

# camelCase, snake_case, kebab-case, dotted and UPPER_CASE names all split into lower-case words.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_SECRET_WORDS = {
    "pwd", "passphrase", "sig", "signature", "auth", "authorization", "cookie", "cookies", "bearer", "creds",
    "cred", "apikey", "sas", "jwt", "connectionstring", "connstr", "privatekey", "otp",
}  # fmt: skip
_SECRET_PARTS = ("password", "passwd", "secret", "credential")  # anywhere in a word: dbpassword, clientsecret
_KEY_COMPOUND = re.compile(
    r"(api|access|account|secret|private|sas|master|shared|signing|encryption|storage|subscription|client|app|"
    r"service|ssh|session|consumer|auth|license|admin|host|function)key"
)
# ``primary_key: id`` names a column, not a secret: a *key after these words is a data key.
_DATA_KEY = {
    "primary", "partition", "partitioning", "sort", "sorting", "join", "merge", "cluster", "clustering", "foreign",
    "unique", "business", "natural", "surrogate", "dedup", "dedupe", "group", "grouping", "order", "hash", "range",
    "row", "composite", "lookup", "match", "distribution", "dist", "shard", "sharding", "index", "bucket", "z",
}  # fmt: skip
_AFTER_DATA_KEY = {"column", "columns", "col", "cols", "field", "fields", "by"}
# ``token_url``, ``auth_type``, ``password_file`` say something *about* a secret; their values are not one.
_DESCRIPTORS = {
    "type", "types", "method", "mode", "kind", "scheme", "enabled", "enable", "required", "url", "uri", "endpoint",
    "provider", "class", "length", "len", "count", "ttl", "expiry", "expires", "expiration", "version", "format",
    "algorithm", "alg", "header", "name", "file", "path", "dir", "location", "env", "var", "user", "username",
    "prefix", "suffix", "pattern", "interval", "timeout", "seconds", "minutes", "policy", "mechanism", "min", "max",
}  # fmt: skip
# Environment variables whose names look secret but hold none (the working directory).
_NOT_SECRET_ENV = {"PWD", "OLDPWD"}
# Mappings whose keys are names chosen by the user (inputs, outputs, profiles, columns), never secret keys:
# an output called ``credentials`` is a table, and its path must stay readable.
NAME_MAPS = {"inputs", "outputs", "expectations", "profiles", "accepted_values"}
#: Mappings of datasets (``CONFIG.inputs``, ``CONFIG.outputs``), and the fields of a dataset's own mapping that
#: name columns, not secrets: ``key: [order_id]`` is its profile's row key (docs/rows-v1.md section 12.2). Deeper
#: down (``storage_options.key``, an S3 access key) ``key`` is a secret again.
DATASET_MAPS = {"inputs", "outputs"}
DATASET_FIELDS = {"key"}


def secret_key(key: str, names: bool = False, dataset: bool = False) -> bool:
    """True when a config key holds a secret at its place: never in a mapping of user-chosen names (``names``),
    nor a dataset field of :data:`DATASET_FIELDS` in a dataset's mapping (``dataset``).

    Example:
        >>> secret_key("key"), secret_key("key", dataset=True), secret_key("password", dataset=True)
        (True, False, True)
    """
    if names or (dataset and key in DATASET_FIELDS):
        return False
    return is_secret_name(key)


def _is_secret_word(words: list[str], i: int) -> bool:
    w = words[i]
    if w in _SECRET_WORDS or any(p in w for p in _SECRET_PARTS) or _KEY_COMPOUND.fullmatch(w):
        return True
    if w == "token" or (w.endswith("token") and len(w) > 5):  # token, sastoken, accesstoken (not tokenizer)
        return True
    if w == "pass":  # db_pass, user/pass; not pass_through
        return i == len(words) - 1
    if w == "key":
        before = words[i - 1] if i else ""
        after = words[i + 1] if i + 1 < len(words) else ""
        return before not in _DATA_KEY and after not in _AFTER_DATA_KEY
    return False


def is_secret_name(name: str) -> bool:
    """True for key names that hold secrets: ``password``, ``token``, ``api_key``, ``fs.s3a.secret.key``, ...

    Matched on words (``sortKey`` is sort + key), so ``tokenizer``, ``primaryKey``, ``partition_key`` and
    ``key_columns`` are not secrets, nor names that describe a secret (``token_url``, ``auth_type``).

    Example:
        >>> [is_secret_name(n) for n in ("password", "AccountKey", "x-api-key", "creds", "Authorization", "key")]
        [True, True, True, True, True, True]
        >>> [is_secret_name(n) for n in ("primaryKey", "tokenizer", "token_url", "partition_by", "keys")]
        [False, False, False, False, False]
    """
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or (words[-1] in _DESCRIPTORS and len(words) > 1):
        return False
    for i in range(len(words)):
        if _is_secret_word(words, i):
            return True
    # compounds split over two words: connection_string, conn_str, private_key (private + key is caught above)
    pairs = {a + b for a, b in itertools.pairwise(words)}
    return bool(pairs & {"connectionstring", "connstr", "connstring"})


def is_secret_env(name: str) -> bool:
    """True for environment variable names whose values are secrets (``DB_PASSWORD``; not ``PWD``).

    Example:
        >>> is_secret_env("DB_PASSWORD"), is_secret_env("GITHUB_TOKEN"), is_secret_env("PWD"), is_secret_env("HOME")
        (True, True, False, False)
    """
    return name.upper() not in _NOT_SECRET_ENV and is_secret_name(name)


# --- shapes in text -------------------------------------------------------------------------------------------------
# Each rule masks what it recognises and reports the values it masked (for masking by value).
Found = list[str]

_SCHEME = re.compile(r"(?<![A-Za-z0-9+.-])([A-Za-z][A-Za-z0-9+.-]*)://")
# A URL ends at whitespace, an angle bracket or backtick, or a quote that closes it (followed by punctuation or
# the end): a quote inside a password (``it's``) does not end it.
_URL_END = re.compile(r"\s|[<>`]|[\"'](?=[\s,:;.)\]}]|$)")
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_~%-][A-Za-z0-9_.~%-]*)(?::\d*)?(?=$|[/?#;,)\]}])")
_CONTAINER_SCHEMES = {"abfs", "abfss", "wasb", "wasbs"}  # container@account: a container name, no credential
_TOKEN_PREFIX = re.compile(r"(gh[pousr]_|github_pat_|glpat-|xox[abprs]-|sk-|AKIA|ASIA)")


def _looks_like_token(user: str) -> bool:
    """A URL user that is a credential (``ghp_...``) rather than a login name (``postgres``, ``git``)."""
    has_digit, has_alpha = any(c.isdigit() for c in user), any(c.isalpha() for c in user)
    return bool(_TOKEN_PREFIX.match(user)) or len(user) >= 20 or (len(user) >= 8 and has_digit and has_alpha)


def _authority_at(token: str) -> int:
    """Index of the ``@`` ending the userinfo of a URL (the text after ``scheme://``), or -1.

    A password may hold ``@``, ``/`` and ``:``, so the host is after the LAST ``@`` that is followed by a host
    (and optional port) and then the end, ``/``, ``?`` or ``#``. One exception keeps ``?email=a@b.com`` in a
    query from swallowing the host: a userinfo without ``?``/``#`` is preferred when there is one.
    """
    candidates = []
    for i in (i for i, c in enumerate(token) if c == "@"):
        info = token[:i]
        if not _HOST.match(token, i + 1):
            continue
        user, colon, _ = info.partition(":")
        if (colon and not re.search(r"[/?#@]", user)) or (not colon and info and not re.search(r"[/?#@]", info)):
            candidates.append(i)
    if not candidates:
        return -1
    plain = [i for i in candidates if not re.search(r"[?#]", token[:i])]
    return (plain or candidates)[-1]


def _mask_userinfo(text: str, found: Found) -> str:
    out, pos = [], 0
    for m in _SCHEME.finditer(text):
        start = m.end()
        if start < pos:
            continue  # a "scheme://" inside a password already masked
        end = _URL_END.search(text, start)
        token = text[start : end.start() if end else len(text)]
        at = _authority_at(token)
        if at < 0:
            continue
        info = token[:at]
        user, colon, password = info.partition(":")
        if colon:
            masked = f"{user}:{MASK}"
            found.append(password)
        elif m.group(1).lower() in _CONTAINER_SCHEMES:
            continue
        else:
            masked = MASK
            if _looks_like_token(info):
                found.append(info)
        out += [text[pos:start], masked]
        pos = start + at
    return "".join(out) + text[pos:]


# user/password@host[:port][/service] (SQL*Plus, Oracle JDBC thin), not a path segment (``data/x@y``) and not
# a Delta version (``orders@v3``). The user starts a word, or follows ``thin:`` / ``oci:``.
_ORACLE = re.compile(
    r"(?:(?<=thin:)|(?<=oci:)|(?<=oci8:)|(?<![\w$#/.:@\\-]))"
    r"(?P<user>[A-Za-z][\w$#]*)/(?P<pw>\"[^\"]*\"|[^\s/@'\"]+)@"
    r"(?P<host>//[\w.-]+|(?!v?\d+(?![\w.-]))[A-Za-z][\w.-]*)(?=$|[\s:/;,)'\"\]])"
)


def _mask_oracle(text: str, found: Found) -> str:
    def sub(m: re.Match[str]) -> str:
        found.append(m.group("pw").strip('"'))
        return f"{m.group('user')}/{MASK}@{m.group('host')}"

    return _ORACLE.sub(sub, text)


_PEM = re.compile(
    r"(-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----)(?:(?!-----END).)+(-----END [A-Z0-9 ]*PRIVATE KEY-----|$)", re.S
)
_TOKENS = re.compile(
    r"\beyJ[\w-]{5,}\.eyJ[\w-]{5,}\.[\w-]*"  # a JWT
    r"|\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_\w{20,}|glpat-[\w-]{20,}|xox[abprs]-[\w-]{10,}|sk-[\w-]{20,})"
)


def _mask_tokens(text: str, found: Found) -> str:
    def pem(m: re.Match[str]) -> str:
        found.extend([m.group(0), *_lines(m.group(0))])
        return f"{m.group(1)}{MASK}{m.group(2)}"

    def token(m: re.Match[str]) -> str:
        found.append(m.group(0))
        return MASK

    return _TOKENS.sub(token, _PEM.sub(pem, text))


# Authorization headers: the scheme is kept (it says what kind of credential it was), the credential masked.
_ONE_TOKEN_SCHEMES = "bearer|basic|token|bot|apikey|key|jwt"
_PARAM_SCHEMES = "digest|negotiate|ntlm|oauth|hawk|aws4-hmac-sha256|aws|sharedkeylite|sharedkey|sharedaccesssignature"
_AUTH_HEADER = re.compile(
    r"(?P<head>\b(?:proxy-)?authorization[\"']?\s*[:=]\s*[\"']?)"
    rf"(?:(?P<s1>(?:{_ONE_TOKEN_SCHEMES})\s+)(?P<v1>[^\s'\",;]+)"
    rf"|(?P<s2>(?:{_PARAM_SCHEMES})\s+)(?P<v2>[^\r\n'\"]+)"
    r"|(?P<v3>[^\s'\",;]+))",
    re.I,
)
# Other credential headers, written ``Name: value`` in the middle of a text (logs, error messages).
_HEADER = re.compile(
    r"(?P<head>\b(?:x-api-key|api-key|x-auth-token|x-access-token|x-amz-security-token|x-goog-api-key|"
    r"ocp-apim-subscription-key|private-token|x-functions-key)[\"']?\s*:\s*[\"']?)(?P<v>[^\s'\",;]+)"
    r"|(?P<chead>\b(?:set-)?cookie[\"']?\s*:\s*[\"']?)(?P<cv>[^\r\n'\"]+)",
    re.I,
)
_BEARER = re.compile(r"\b(?P<head>Bearer\s+)(?P<v>[A-Za-z0-9._~+/=-]{8,})")


def _mask_headers(text: str, found: Found) -> str:
    def auth(m: re.Match[str]) -> str:
        value = m.group("v1") or m.group("v2") or m.group("v3")
        found.append(value.rstrip())
        return m.group("head") + (m.group("s1") or m.group("s2") or "") + MASK

    def header(m: re.Match[str]) -> str:
        head, value = (m.group("head"), m.group("v")) if m.group("head") else (m.group("chead"), m.group("cv"))
        found.append(value.rstrip())
        return head + MASK

    def bearer(m: re.Match[str]) -> str:
        found.append(m.group("v"))
        return m.group("head") + MASK

    text = _AUTH_HEADER.sub(auth, text)
    text = _HEADER.sub(header, text)
    return _BEARER.sub(bearer, text)


def _split_quotes(value: str) -> tuple[str, str]:
    """A value without its quotes (or SQL Server braces), and its masked form keeping them: ``'***'``."""
    if len(value) > 1 and (value[0], value[-1]) in {('"', '"'), ("'", "'"), ("{", "}")}:
        return value[1:-1], value[0] + MASK + value[-1]
    return value, MASK


# name=value pairs: query parameters (?sig=, &code=), JDBC properties (;password=), connection strings
# (AccountKey=...;), CLI flags (--password=x), Python reprs (password='x').
_PAIR = re.compile(
    r"(?<!\w)(?P<name>[A-Za-z_][\w.-]*)(?P<eq>\s*=(?!=)\s*)"
    r"(?P<value>\{[^}]*\}|\"[^\"]*\"|'[^']*'|[^\s;&'\"]+)"
)
_QUERY_ONLY = {"code"}  # ?code= is an OAuth code; a key named "code" elsewhere is not a secret


def _mask_pairs(text: str, found: Found) -> str:
    def sub(m: re.Match[str]) -> str:
        name, start = m.group("name"), m.start()
        in_query = start > 0 and text[start - 1] in "?&"
        inner, masked = _split_quotes(m.group("value"))
        if MASK in inner or not (is_secret_name(name) or (in_query and name.lower() in _QUERY_ONLY)):
            return m.group(0)
        found.append(inner)
        return f"{name}{m.group('eq')}{masked}"

    return _PAIR.sub(sub, text)


# name: value, where a colon is a key-value separator for sure: JSON/repr ("password": "x"), a quoted value
# (password: 'x'), or a YAML line (a config line quoted by a YAML error). Never "...password: expected a string",
# which is how ubunye names a key in its own messages.
_QUOTED_KEY = re.compile(
    r"(?P<q>[\"'])(?P<name>[A-Za-z_][\w .-]*)(?P=q)(?P<sep>\s*:\s*)"
    r"(?P<value>\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|(?![{\[])[^\s,}\]]+)"
)
_QUOTED_VALUE = re.compile(r"(?<![\w\"'.-])(?P<name>[A-Za-z_][\w.-]*)(?P<sep>\s*:\s*)(?P<value>\"[^\"]*\"|'[^']*')")
_YAML_LINE = re.compile(
    r"^(?P<lead>[ \t]*(?:-[ \t]+)?)(?P<name>[A-Za-z_][\w.-]*)(?P<sep>[ \t]*:[ \t]+)(?P<value>\S.*?)[ \t]*$", re.M
)


def _mask_colons(text: str, found: Found) -> str:
    def sub(m: re.Match[str]) -> str:
        inner, masked = _split_quotes(m.group("value"))
        if MASK in inner or not is_secret_name(m.group("name")):
            return m.group(0)  # already masked by a more precise rule (Authorization: Bearer ***)
        found.append(inner)
        return m.group(0)[: m.start("value") - m.start()] + masked

    for rule in (_QUOTED_KEY, _QUOTED_VALUE, _YAML_LINE):
        text = rule.sub(sub, text)
    return text


_RULES: tuple[Callable[[str, Found], str], ...] = (
    _mask_tokens,  # first: a private key block holds "/" and "+" the other rules would cut through
    _mask_userinfo,
    _mask_oracle,
    _mask_headers,
    _mask_pairs,
    _mask_colons,
)


def _apply(text: str) -> tuple[str, Found]:
    found: Found = []
    for rule in _RULES:
        text = rule(text, found)
    return text, found


def mask_shapes(text: str) -> str:
    """Mask every secret recognised by its shape in ``text`` (a location, an error message, a log line).

    Example:
        >>> mask_shapes("jdbc:sqlserver://h;user=u;password=p4ss;")
        'jdbc:sqlserver://h;user=u;password=***;'
        >>> mask_shapes("jdbc:oracle:thin:scott/tiger@db:1521/orcl")
        'jdbc:oracle:thin:scott/***@db:1521/orcl'
        >>> mask_shapes("curl -H 'Authorization: Bearer abc.def' https://h/x?code=42&page=2")
        "curl -H 'Authorization: Bearer ***' https://h/x?code=***&page=2"
        >>> mask_shapes("abfss://raw@acct.dfs.core.windows.net/p")  # a container, not a user
        'abfss://raw@acct.dfs.core.windows.net/p'
    """
    return _apply(text)[0] if text else text


def find_secrets(text: str) -> set[str]:
    """The secret values :func:`mask_shapes` would mask in ``text`` (URL passwords, tokens, header values...).

    Example:
        >>> sorted(find_secrets("postgresql://u:p@ss/w:rd@db/x?sslmode=require&password=two22"))
        ['p@ss/w:rd', 'two22']
    """
    return {v for v in _apply(text)[1] if v and MASK not in v} if text else set()


# --- values of a config ---------------------------------------------------------------------------------------------


# In a secret block, ``type: api_key`` (``mode: basic``, ``method: oauth``) names the kind of credential, a word
# every config of that kind spells alike: no secret, and remembered as one it would be masked in every column
# name, key and text that spells it. Only a plain word is passed over: anything else under such a key is a value.
_KIND_KEYS = {"type", "types", "kind", "method", "mode", "scheme", "mechanism", "algorithm", "alg"}
_KIND_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,63}")


def _names_a_kind(key: object, value: object) -> bool:
    words = _WORDS.findall(str(key))
    return (
        bool(words) and words[-1].lower() in _KIND_KEYS and isinstance(value, str) and bool(_KIND_WORD.fullmatch(value))
    )


def _leaves(node: object) -> Iterable[str]:
    """Every string (and number) leaf of a subtree: the whole subtree of ``creds:`` is secret, but for the words
    naming the kind of credential (``auth: {type: api_key, ...}``)."""
    if isinstance(node, dict):
        for k, v in node.items():
            if not _names_a_kind(k, v):
                yield from _leaves(v)
    elif isinstance(node, list | tuple):
        for v in node:
            yield from _leaves(v)
    elif isinstance(node, str):
        yield node
    elif isinstance(node, int | float) and not isinstance(node, bool):
        yield str(node)


_SCHEME_VALUE = re.compile(rf"(?:{_ONE_TOKEN_SCHEMES}|{_PARAM_SCHEMES})\s+(?P<credential>.+)", re.I | re.S)


_ASSIGNED = re.compile(r"[\w.-]+=([^;&\s]+)")


def _secret_leaves(node: object) -> Iterable[str]:
    """The leaves of a secret subtree, and the parts an error message may quote alone: the credential of
    ``Bearer abc``, the values of ``session=abc; id=def``, the lines of a key or certificate."""
    for leaf in _leaves(node):
        yield leaf
        m = _SCHEME_VALUE.fullmatch(leaf.strip())
        if m:
            yield m.group("credential")
        yield from _ASSIGNED.findall(leaf)
        yield from _lines(leaf)


def _lines(text: str) -> list[str]:
    """The lines of a multi-line secret (a PEM body), without its ``-----BEGIN/END-----`` armour."""
    return [ln.strip() for ln in text.splitlines() if "-----" not in ln] if "\n" in text.strip() else []


def secret_pair(node: Mapping[str, object]) -> bool:
    """True for ``{name: Authorization, value: ...}``: a header (or option) written as a name/value pair.

    Example:
        >>> secret_pair({"name": "Authorization", "value": "Bearer x"}), secret_pair({"name": "a", "value": "b"})
        (True, False)
    """
    if "value" not in node:
        return False
    names = (node.get(k) for k in ("name", "key", "header"))
    return any(isinstance(name, str) and is_secret_name(name) for name in names)


def _collect(node: object, found: set[str], names: bool = False, datasets: bool = False, dataset: bool = False) -> None:
    if isinstance(node, dict):
        if secret_pair(node):
            found.update(_secret_leaves(node["value"]))
        for k, v in node.items():
            key = str(k)
            found.update(find_secrets(key))
            if secret_key(key, names, dataset):
                found.update(_secret_leaves(v))
            else:
                mapping = isinstance(v, dict)
                _collect(v, found, key in NAME_MAPS and mapping, key in DATASET_MAPS and mapping, datasets and mapping)
    elif isinstance(node, list | tuple):
        for v in node:
            _collect(v, found)
    elif isinstance(node, str):
        found.update(find_secrets(node))


def _variants(value: str) -> set[str]:
    """The forms a value takes in other texts: as given, stripped, URL-decoded and -encoded, repr-escaped."""
    out = {value, value.strip(), unquote(value), quote(value, safe="")}
    out.add(repr(value)[1:-1])
    return out


def worth_masking(value: str) -> bool:
    """False for values too short or too plain to mask everywhere (see :data:`MIN_SECRET_LENGTH`).

    Example:
        >>> worth_masking("hunter22"), worth_masking("abc"), worth_masking("true"), worth_masking("***")
        (True, False, False, False)
    """
    v = value.strip()
    return len(v) >= MIN_SECRET_LENGTH and v.lower() not in _NOT_VALUES and set(v) != {"*"}


def secret_values(tree: object, env_used: Mapping[str, object] | None = None) -> set[str]:
    """Every secret value of a rendered config and of the environment variables its templates used.

    Collected: every string (or number) leaf under a secret-named key (the whole subtree), the value of a
    ``{name: Authorization, value: ...}`` pair, every secret :func:`find_secrets` finds in any string (URL
    passwords, query values, header values, JDBC and Oracle passwords, tokens), and the value of each used
    environment variable whose name looks secret (``DB_PASSWORD``), plus the secrets inside any used one
    (``DATABASE_URL``). Each also in its URL-encoded, URL-decoded and repr-escaped forms. Values shorter than
    :data:`MIN_SECRET_LENGTH` characters, and ``true``/``false``/``none``/``null``, are left out.

    Example:
        >>> sorted(secret_values({"path": "s3://k:abc%40def@b/x", "token": "t"}, {"HOME": "/home/me"}))
        ['abc%2540def', 'abc%40def', 'abc@def']
    """
    found: set[str] = set()
    _collect(tree, found)
    for name, value in (env_used or {}).items():
        if value is None:
            continue
        text = str(value)
        if is_secret_env(str(name)):
            found.add(text)
        found.update(find_secrets(text))
    return {v for raw in found for v in _variants(raw) if worth_masking(v)}
