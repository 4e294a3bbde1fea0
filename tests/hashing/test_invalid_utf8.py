"""Strings whose bytes are not UTF-8 (docs/rows-v1.md section 4.1): read as Java reads them, on every path.

The twin's reading (ubunye.hashing.text) is checked against the vectors' derivation (tests/vectors/derive.py, a
byte-by-byte reading of the spec written apart from it); tests/spark checks both against the JVM itself.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from tests.conftest import VECTOR_DIR
from tests.hashing.compat import VIEWS, view_type
from tests.vectors.derive import text_of_bytes
from ubunye.hashing import canonical_lines, hash_frame
from ubunye.hashing.text import as_text, decode_text
from ubunye.testing.vectors import load_vectors

BYTE_VECTORS = load_vectors(VECTOR_DIR / "bytes")
R = "\ufffd"


def _strings(values: list[bytes | None]) -> pa.Array:
    """An Arrow string array holding exactly these bytes (an unchecked cast, as Spark's toArrow hands them)."""
    return pa.array(values, pa.binary()).cast(pa.string(), safe=False)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        ("61FF62", f"a{R}b"),
        ("C3", R),
        ("E282", R),
        ("F09F98", R),
        ("E28241", f"{R}A"),
        ("808080", R * 3),
        ("C080", R * 2),
        ("E08080", R * 3),
        ("F0808080", R * 4),
        ("F4908080", R * 4),
        ("EDA080", R),  # one, where Python's "replace" and WHATWG give three
        ("EDBFBF", R),
        ("EDA080EDB080", R * 2),
        ("EDA0", R),
        ("EDA041", f"{R}A"),
        ("ED9FBF", "\ud7ff"),
        ("F0908080", "\U00010000"),
    ],
)
def test_section_4_1_table(raw, text):
    b = bytes.fromhex(raw)
    assert decode_text(b) == text
    assert text_of_bytes(b) == text


def _byte_strings() -> list[bytes]:
    out = [bytes([a]) for a in range(256)] + [bytes([a, b]) for a in range(256) for b in range(256)]
    out += [bytes([a, b, c]) for a in range(0xE0, 0x100) for b in range(0x70, 0xC8, 3) for c in (0x41, 0x80, 0xBF)]
    rng = random.Random(15)
    pool = [0x41, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xE1, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
    out += [bytes(rng.choice(pool) for _ in range(rng.randint(1, 9))) for _ in range(20_000)]
    return out


def test_twin_and_derivation_agree_on_every_byte_string():
    # Two readings of section 4.1 written apart: Python's decoder with the surrogate rule, and a state machine.
    diffs = [b.hex() for b in _byte_strings() if decode_text(b) != text_of_bytes(b)]
    assert diffs == []


def test_as_text_passes_valid_arrays_through_and_repairs_only_invalid_values():
    valid = pa.array(["a", None, "é😀"])
    assert as_text(valid) is valid
    arr = _strings([b"ok", None, b"a\xffb", b"\xed\xa0\x80", "é".encode()])
    assert as_text(arr).to_pylist() == ["ok", None, f"a{R}b", R, "é"]
    as_text(arr).validate(full=True)
    assert as_text(arr.slice(2, 2)).to_pylist() == [f"a{R}b", R]
    for t in (pa.large_string(), *([pa.string_view()] if VIEWS else [])):
        assert as_text(_strings([b"\xc3", b"x"]).cast(t)).to_pylist() == [R, "x"]


@pytest.mark.parametrize("t", [pa.string(), pa.large_string(), view_type("string_view")])
def test_invalid_bytes_hash_as_their_replaced_text(t):
    raw = [b"a\xffb", b"\xc3", b"\x80", b"\xe2\x82", b"\xed\xa0\x80", None, b'"\xff\\\n']
    got = pa.table({"s": _strings(raw).cast(t)})
    text = pa.table({"s": pa.array([None if b is None else decode_text(b) for b in raw], t)})
    assert canonical_lines(got) == canonical_lines(text)
    assert canonical_lines(got)[-1] == '{"s":"\\"' + R + '\\\\\\n"}'
    assert hash_frame(got) == hash_frame(text)
    # C3, 80, E282 and EDA080 alone are four one-value tables that print one line: one hash.
    assert len({hash_frame(got.slice(i, 1)).data_hash for i in range(1, 5)}) == 1


def test_nested_strings_and_map_keys_are_read_alike():
    keys = pa.array([b"\xff", b"a", b"\xed\xa0\x80"], pa.binary()).cast(pa.string(), safe=False)
    m = pa.MapArray.from_arrays(pa.array([0, 3], pa.int32()), keys, pa.array([3, 1, 2], pa.int32()))
    lst = pa.ListArray.from_arrays(pa.array([0, 2], pa.int32()), _strings([b"x\xff", None]))
    st = pa.StructArray.from_arrays([_strings([b"\xe2\x82"])], names=["t"])
    table = pa.table({"m": m, "l": lst, "st": st})
    assert canonical_lines(table) == [f'{{"l":["x{R}",null],"m":{{"a":1,"{R}":2,"{R}":3}},"st":{{"t":"{R}"}}}}']


def test_dictionary_of_invalid_strings():
    d = pa.DictionaryArray.from_arrays(pa.array([1, 0, None], pa.int32()), _strings([b"\xff", b"ok"]))
    assert canonical_lines(pa.table({"c": d})) == ['{"c":"ok"}', f'{{"c":"{R}"}}', "{}"]


@pytest.mark.parametrize("vector", BYTE_VECTORS, ids=lambda v: v.name)
def test_byte_vectors_through_the_twin(vector):
    table = vector.arrow()
    assert canonical_lines(table) == vector.expected["lines"]
    h = hash_frame(table)
    assert (h.schema, h.row_count, h.data_hash) == (
        vector.expected["schema"],
        vector.expected["row_count"],
        vector.expected["data_hash"],
    )


def test_byte_vectors_exist_and_hold_invalid_utf8():
    assert [v.name for v in BYTE_VECTORS] == ["invalid_utf8"]
    with pytest.raises(pa.ArrowInvalid, match="UTF8"):
        BYTE_VECTORS[0].arrow().validate(full=True)
