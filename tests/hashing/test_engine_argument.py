"""Every ``engine=`` of the hashing API refuses a value it does not know, naming it and the allowed ones."""

from __future__ import annotations

import pytest

from ubunye.hashing.digest import ENGINES, finish
from ubunye.hashing.spark import hash_spark, spark_canonical_lines


class _NoSpark:
    """Stands for a DataFrame: any use of it would mean the engine was chosen before it was checked."""

    def __getattr__(self, name):
        raise AssertionError(f"the frame was used ({name}) before engine= was checked")


@pytest.mark.parametrize("call", [hash_spark, spark_canonical_lines], ids=["hash_spark", "spark_canonical_lines"])
@pytest.mark.parametrize("engine", ["jvn", "JVM", "", "pandas"])
def test_spark_functions_refuse_an_unknown_engine(call, engine):
    with pytest.raises(ValueError, match=r"engine='.*' is not one of 'arrow', 'jvm' or None") as info:
        call(_NoSpark(), engine=engine)
    assert repr(engine) in str(info.value)


def test_finish_refuses_an_unknown_engine():
    with pytest.raises(ValueError, match=r"^engine='jvn' is not one of 'arrow', 'jvm'$"):
        finish("struct<>", 0, 0, 0, engine="jvn")
    assert [finish("struct<>", 0, 0, 0, engine=e).engine for e in ENGINES] == list(ENGINES)
