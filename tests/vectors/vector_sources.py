"""The inputs of the rows-v1 conformance vectors (docs/rows-v1.md section 10); derive.py adds the expectations.

``bucket_cases`` lists a vector's own row-bucket cases of profile-v1 (section 12.4), each ``{"n": N, "key": [names]
or None}``, beside the two every vector gets (no key, N = 8 and N = 1). A key is given in the order a user would
write it, not sorted: the key line sorts it (section 12.2).
"""

from __future__ import annotations


def F(x: str) -> dict[str, str]:
    return {"float": x}


def D(x: str) -> dict[str, str]:
    return {"decimal": x}


def TS(x: str) -> dict[str, str]:
    return {"timestamp": x}


def NTZ(x: str) -> dict[str, str]:
    return {"timestamp_ntz": x}


def SB(x: str) -> dict[str, str]:
    """A string value given by its bytes (hex), which need not be UTF-8 (section 4.1)."""
    return {"string_bytes": x}


# Section 4.1's cases, one string value each: invalid, truncated, overlong, surrogate, and valid neighbours.
_INVALID_UTF8 = [
    "61FF62",
    "C3",
    "E282",
    "F09F98",
    "E28241",
    "80",
    "808080",
    "C080",
    "C1BF",
    "E08080",
    "E09F80",
    "F0808080",
    "F4908080",
    "F5808080",
    "FEFF",
    "EDA080",
    "EDBFBF",
    "EDA080EDB080",
    "EDA0",
    "EDA041",
    "EDA0C3A9",
    "ED9F",
    "ED9FBF",
    "E0A0",
    "F0908080",
    "C3A9",
    "22FF5C0A00",
    "6180808062",
]


VECTORS = [
    {
        "name": "scalars",
        "description": "one column of every scalar type, a null in each, an all-null row",
        # a two-column key listed out of order, both with nulls (the all-null row's key line is {}); one with nulls
        "bucket_cases": [{"n": 8, "key": ["s", "i8"]}, {"n": 8, "key": ["i64"]}],
        "columns": [
            {"name": "i8", "type": "int8"},
            {"name": "i16", "type": "int16"},
            {"name": "i32", "type": "int32"},
            {"name": "i64", "type": "int64"},
            {"name": "b", "type": "bool"},
            {"name": "f64", "type": "float64"},
            {"name": "f32", "type": "float32"},
            {"name": "dec", "type": "decimal(10,2)"},
            {"name": "s", "type": "string"},
            {"name": "bin", "type": "binary"},
            {"name": "d", "type": "date"},
            {"name": "ts", "type": "timestamp"},
            {"name": "ntz", "type": "timestamp_ntz"},
        ],
        "rows": [
            [
                -128,
                -32768,
                -2147483648,
                -9223372036854775808,
                True,
                F("0.5"),
                F("0.1"),
                D("1.50"),
                "Ana",
                {"base64": "AAH/"},
                {"date": "2024-02-29"},
                TS("2024-01-01T12:00:00.000000+02:00"),
                NTZ("2024-01-01T12:00:00.000000"),
            ],
            [
                127,
                32767,
                2147483647,
                9223372036854775807,
                False,
                F("-2.5"),
                F("3.0"),
                D("-12345678.99"),
                "",
                {"base64": ""},
                {"date": "1970-01-01"},
                TS("1969-12-31T23:59:59.999999+00:00"),
                NTZ("1969-12-31T23:59:59.999999"),
            ],
            [0, None, 7, None, None, None, F("-0.0"), None, None, None, None, None, None],
            [None] * 13,
        ],
    },
    {
        "name": "floats",
        "description": "NaN vs null, -0.0, infinities, Java layout edges, doubles where JDK 17 and JDK 19+ differ",
        # every bit of u mod N at the largest N; a key of every column, whose key line is the row's own line
        "bucket_cases": [{"n": 65536, "key": None}, {"n": 8, "key": ["x"]}],
        "columns": [{"name": "x", "type": "float64"}],
        "rows": [
            [F(v)]
            for v in [
                "NaN",
                "Infinity",
                "-Infinity",
                "0.0",
                "-0.0",
                "1e23",
                "2.82879384806159E17",
                "1.9400994884341945E25",
                "5e-324",
                "1e-323",
                "2.2250738585072014e-308",
                "1.7976931348623157e308",
                "0.001",
                "9.999999999999998e-4",
                "1e-4",
                "1e7",
                "9999999.999999998",
                "1234567.0",
                "0.1",
                "123.456",
                "-1.5e-5",
                "1e16",
                "1e21",
                "4.35",
                "100.0",
            ]
        ]
        + [[None]],
    },
    {
        "name": "floats32",
        "description": "float32 values: shortest float32 digits, subnormals, layout edges",
        "columns": [{"name": "x", "type": "float32"}],
        "rows": [
            [F(v)]
            for v in [
                "0.1",
                "1.4e-45",
                "3.4028235e38",
                "1.17549435e-38",
                "16777216.0",
                "1e7",
                "9999999.0",
                "0.001",
                "0.00099999993",
                "NaN",
                "-Infinity",
                "-0.0",
                "3.1415927",
                "1e-10",
                "2.7e-44",
            ]
        ]
        + [[None]],
    },
    {
        "name": "decimals",
        "description": "BigDecimal.toString at the column scale: zero at large scales, tiny values, the extremes",
        "bucket_cases": [{"n": 4, "key": ["d38_10"]}],
        "columns": [
            {"name": "d38_18", "type": "decimal(38,18)"},
            {"name": "d38_10", "type": "decimal(38,10)"},
            {"name": "d10_7", "type": "decimal(10,7)"},
            {"name": "d20_10", "type": "decimal(20,10)"},
            {"name": "d38_0", "type": "decimal(38,0)"},
            {"name": "d5_2", "type": "decimal(5,2)"},
        ],
        "rows": [
            [D("0"), D("0"), D("-0.0000001"), D("0.0000000123"), D("99999999999999999999999999999999999999"), D("1.5")],
            [
                D("1"),
                D("-0.000001"),
                D("0.000001"),
                D("1234567890.0123456789"),
                D("-99999999999999999999999999999999999999"),
                D("-999.99"),
            ],
            [D("0.000000000000000001"), None, D("0"), D("-0.0000001000"), D("0"), D("0.01")],
        ],
    },
    {
        "name": "decimals_small",
        "description": "small precisions and scale = precision: decimal(1,1), decimal(18,18), 38 fraction digits",
        "bucket_cases": [{"n": 4, "key": ["d1_0"]}],
        "columns": [
            {"name": "d1_1", "type": "decimal(1,1)"},
            {"name": "d1_0", "type": "decimal(1,0)"},
            {"name": "d2_2", "type": "decimal(2,2)"},
            {"name": "d7_7", "type": "decimal(7,7)"},
            {"name": "d18_18", "type": "decimal(18,18)"},
            {"name": "d38_38", "type": "decimal(38,38)"},
        ],
        "rows": [
            [D("0.5"), D("7"), D("-0.01"), D("0.0000001"), D("0"), D("0.12345678901234567890123456789012345678")],
            [
                D("-0.9"),
                D("-9"),
                D("0.99"),
                D("0.000001"),
                D("0.000000000000000001"),
                D("-0.99999999999999999999999999999999999999"),
            ],
            [D("0"), D("0"), D("0"), D("-0.1234567"), D("0.999999999999999999"), D("0")],
            [D("0.0"), None, D("0.1"), D("0"), D("-0.000001"), D("0.00000000000000000000000000000000000001")],
        ],
    },
    {
        "name": "invalid_utf8",
        "folder": "bytes",
        "description": "string bytes that are not UTF-8 (section 4.1): one U+FFFD per maximal subpart, as Java",
        # values whose bytes differ but read alike (ED A0 80, ED BF BF) are one key; null keys
        "bucket_cases": [{"n": 16, "key": ["s"]}],
        "columns": [
            {"name": "s", "type": "string"},
            {"name": "m", "type": "map<string,int32>"},
            {"name": "l", "type": "list<string>"},
            {"name": "st", "type": 'struct<"t":string>'},
        ],
        "rows": [[SB(h), None, None, None] for h in _INVALID_UTF8]
        + [
            [
                "valid",
                {"map": [[SB("FF"), 3], [SB("EDA080"), 1], ["a", 0], [SB("C3"), 2], [SB("EFBFBD"), None]]},
                {"list": [SB("61FF"), None, "b", SB("EDB080")]},
                {"struct": {"t": SB("E282")}},
            ],
            [None, {"map": [[SB("E2"), 1], ["\ufffe", 2]]}, {"list": []}, {"struct": {"t": None}}],
        ],
    },
    {
        "name": "text",
        "description": "awkward text and column names: escapes, emoji, U+2028, non-BMP names sorted by code point",
        # code point order puts U+FF61 first, UTF-16 order the emoji; U+FF61 is null in one row
        "bucket_cases": [{"n": 8, "key": ["\U0001f600", "\uff61"]}, {"n": 8, "key": ["s"]}],
        "columns": [
            {"name": "s", "type": "string"},
            {"name": "\uff61", "type": "int32"},
            {"name": "\U0001f600", "type": "int32"},
            {"name": "a b", "type": "string"},
            {"name": "a.b", "type": "string"},
            {"name": "é", "type": "string"},
            {"name": "A", "type": "string"},
        ],
        "rows": [
            [
                'quote " backslash \\ slash / tab \t newline \n cr \r ff \f bs \b nul \u0000 us \u001f del \u007f',
                1,
                2,
                "x",
                "y",
                "z",
                "upper",
            ],
            ["emoji 😀 line sep \u2028 para sep \u2029 bom \ufeff accent é", 3, 4, "", " ", "\\", '"quoted"'],
            ["\u0001\u0002\u0003\u001b", None, 5, None, None, None, None],
        ],
    },
    {
        "name": "nested",
        "description": "list<struct<map<string,list<int64>>>>, map entry order, null elements and fields, map keys",
        # maps equal but for insertion order are one key; a struct key
        "bucket_cases": [{"n": 8, "key": ["m_int"]}, {"n": 8, "key": ["st"]}],
        "columns": [
            {"name": "c", "type": 'list<struct<"m":map<string,list<int64>>,"n":int32>>'},
            {"name": "m_int", "type": "map<int64,string>"},
            {"name": "st", "type": 'struct<"z":string,"a":list<float64>,"d":date>'},
        ],
        "rows": [
            [
                {
                    "list": [
                        {"struct": {"m": {"map": [["b", {"list": []}], ["a", {"list": [1, None]}]]}, "n": 1}},
                        {"struct": {"m": None, "n": None}},
                        None,
                    ]
                },
                {"map": [[10, "ten"], [2, "two"], [-1, None]]},
                {"struct": {"z": "zz", "a": {"list": [F("NaN"), None, F("1e23")]}, "d": {"date": "0001-01-01"}}},
            ],
            [
                {
                    "list": [
                        {"struct": {"m": {"map": [["a", {"list": [1, None]}], ["b", {"list": []}]]}, "n": 1}},
                        {"struct": {"m": None, "n": None}},
                        None,
                    ]
                },
                {"map": [[-1, None], [2, "two"], [10, "ten"]]},
                {"struct": {"z": None, "a": None, "d": {"date": "9999-12-31"}}},
            ],
            [{"list": []}, {"map": []}, {"struct": {"z": None, "a": None, "d": None}}],
            [None, None, None],
        ],
    },
    {
        "name": "map_keys",
        "description": "map keys of other types become their text; keys needing escapes; sorting by key text",
        "bucket_cases": [{"n": 4, "key": ["by_bool"]}],
        "columns": [
            {"name": "by_date", "type": "map<date,int32>"},
            {"name": "by_float", "type": "map<float64,string>"},
            {"name": "by_bool", "type": "map<bool,int32>"},
            {"name": "by_text", "type": "map<string,float32>"},
            {"name": "by_dec", "type": "map<decimal(5,2),bool>"},
        ],
        "rows": [
            [
                {"map": [[{"date": "2024-12-31"}, 1], [{"date": "2024-01-02"}, None]]},
                {"map": [[F("1e23"), "big"], [F("NaN"), "nan"], [F("-0.0"), "negzero"], [F("10.0"), "ten"]]},
                {"map": [[True, 1], [False, 0]]},
                {"map": [['q"uote', F("1.5")], ["back\\slash", F("NaN")], ["tab\t", None], ["\u00e9", F("2.0")]]},
                {"map": [[D("10.00"), True], [D("-1.50"), False], [D("9.99"), None]]},
            ],
            [None, {"map": []}, None, {"map": [["z", F("1.0")], ["a", F("1.0")]]}, None],
        ],
    },
    {
        "name": "timestamps",
        "description": "one instant given in several zones is one line; wall clocks never shift; microseconds",
        # one instant in three zones is one key; every column, out of order, gives the buckets of no key
        "bucket_cases": [{"n": 8, "key": ["ts"]}, {"n": 8, "key": ["ntz", "ts"]}],
        "columns": [{"name": "ts", "type": "timestamp"}, {"name": "ntz", "type": "timestamp_ntz"}],
        "rows": [
            [TS("2024-03-10T12:30:45.123456+00:00"), NTZ("2024-03-10T12:30:45.123456")],
            [TS("2024-03-10T09:30:45.123456-03:00"), NTZ("2024-03-10T12:30:45.123456")],
            [TS("2024-03-10T18:00:45.123456+05:30"), NTZ("2024-03-10T12:30:45.123456")],
            [TS("1900-01-01T00:00:00.000001+00:00"), NTZ("0001-01-01T00:00:00.000000")],
            [TS("9999-12-31T23:59:59.999999+00:00"), NTZ("9999-12-31T23:59:59.999999")],
        ],
    },
    {
        "name": "empty",
        "description": "no rows: sums are zero, the hash still depends on the schema",
        "bucket_cases": [{"n": 8, "key": ["id"]}],
        "columns": [{"name": "id", "type": "int64"}, {"name": "name", "type": "string"}],
        "rows": [],
    },
    {
        "name": "duplicates",
        "description": "two equal rows both count (a multiset, not a set)",
        "bucket_cases": [{"n": 8, "key": ["id"]}],
        "columns": [{"name": "id", "type": "int64"}],
        "rows": [[1], [1], [2]],
    },
    {
        "name": "profile_keys",
        "description": "a natural key (region, day) for profile-v1 buckets; NaN and null counted apart (section 12)",
        "columns": [
            {"name": "region", "type": "string"},
            {"name": "day", "type": "date"},
            {"name": "id", "type": "int64"},
            {"name": "amount", "type": "float64"},
        ],
        "rows": [
            ["EU", {"date": "2024-01-01"}, 1, F("0.5")],
            ["EU", {"date": "2024-01-01"}, 2, F("NaN")],
            ["US", {"date": "2024-01-01"}, None, None],
            [None, {"date": "2024-01-02"}, 3, F("-0.0")],
            [None, None, 4, F("NaN")],
            [None, None, 5, None],
        ],
        # the key listed as a user writes it: its line is {"day":"2024-01-01","region":"EU"} (section 12.2)
        "bucket_cases": [
            {"n": 2, "key": ["region", "day"]},
            {"n": 256, "key": ["region", "day"]},
            {"n": 8, "key": ["amount"]},
        ],
    },
]
