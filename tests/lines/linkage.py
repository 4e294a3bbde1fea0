"""Does every Spark and Scala method a ubunye jar calls exist, with the same signature, in a given Spark?

A jar compiled against one Spark release links against another only if every method and field it references
is still there with the same descriptor (Spark 4.1 added a parameter to ``catalyst.util.toPrettySQL``: a jar
built against 4.0 then fails with NoSuchMethodError on the first computed argument). This reads the class files
of the jar and of the Spark's jars (``pyspark/jars``) directly, no JVM, and lists what does not resolve.

Example:
    >>> unresolved("ubunye-spark-4.1_2.13-0.7.0.jar", "pyspark/jars")  # doctest: +SKIP
    []
"""

from __future__ import annotations

import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

_PREFIXES = ("org/apache/spark/", "scala/")
_OBJECT_METHODS = {"<init>", "equals", "hashCode", "toString", "getClass", "clone", "finalize", "notify", "wait"}


@dataclass
class ClassFile:
    """The parts of a class file linkage needs: its name, supertypes, members and the members it references."""

    name: str
    super_name: str | None
    interfaces: list[str]
    members: set[tuple[str, str]] = field(default_factory=set)  # (name, descriptor), methods and fields
    refs: set[tuple[str, str, str]] = field(default_factory=set)  # (class, name, descriptor)


def parse(data: bytes) -> ClassFile:
    """Parse a class file (JVM spec chapter 4) far enough for linkage."""
    pos = 10
    (count,) = struct.unpack_from(">H", data, 8)
    pool: list[object] = [None] * count
    i = 1
    while i < count:
        tag = data[pos]
        if tag == 1:  # Utf8
            (n,) = struct.unpack_from(">H", data, pos + 1)
            pool[i] = data[pos + 3 : pos + 3 + n].decode("utf-8", "replace")
            pos += 3 + n
        elif tag in (3, 4):
            pos += 5
        elif tag in (5, 6):  # long, double: two slots
            pos += 9
            i += 1
        elif tag in (7, 8, 16, 19, 20):  # class, string, method type, module, package
            pool[i] = (tag, struct.unpack_from(">H", data, pos + 1)[0])
            pos += 3
        elif tag in (9, 10, 11, 12, 17, 18):  # field/method/interface refs, name-and-type, dynamic
            pool[i] = (tag, *struct.unpack_from(">HH", data, pos + 1))
            pos += 5
        elif tag == 15:  # method handle
            pos += 4
        else:
            raise ValueError(f"unknown constant pool tag {tag}")
        i += 1

    def class_name(index: int) -> str:
        entry = pool[index]
        assert isinstance(entry, tuple)
        return str(pool[entry[1]])

    _access, this, sup = struct.unpack_from(">HHH", data, pos)
    pos += 6
    (n_if,) = struct.unpack_from(">H", data, pos)
    interfaces = [class_name(struct.unpack_from(">H", data, pos + 2 + 2 * k)[0]) for k in range(n_if)]
    pos += 2 + 2 * n_if
    cf = ClassFile(class_name(this), class_name(sup) if sup else None, interfaces)
    for _ in range(2):  # fields, then methods
        (n,) = struct.unpack_from(">H", data, pos)
        pos += 2
        for _ in range(n):
            _flags, name, desc, n_attr = struct.unpack_from(">HHHH", data, pos)
            cf.members.add((str(pool[name]), str(pool[desc])))
            pos += 8
            for _ in range(n_attr):
                (length,) = struct.unpack_from(">I", data, pos + 2)
                pos += 6 + length
    for entry in pool:
        if isinstance(entry, tuple) and entry[0] in (9, 10, 11):
            nat = pool[entry[2]]
            assert isinstance(nat, tuple)
            cf.refs.add((class_name(entry[1]), str(pool[nat[1]]), str(pool[nat[2]])))
    return cf


class Classpath:
    """The classes of a folder of jars (a Spark's ``jars/``) plus the JDK's, read lazily."""

    def __init__(self, jars: Path) -> None:
        self.index: dict[str, Path] = {}
        for jar in sorted(Path(jars).glob("*.jar")):
            with zipfile.ZipFile(jar) as z:
                for n in z.namelist():
                    if n.endswith(".class") and n.startswith(_PREFIXES):
                        self.index.setdefault(n[: -len(".class")], jar)
        self.cache: dict[str, ClassFile | None] = {}

    def get(self, name: str) -> ClassFile | None:
        if name not in self.cache:
            jar = self.index.get(name)
            if jar is None:
                self.cache[name] = None
            else:
                with zipfile.ZipFile(jar) as z:
                    self.cache[name] = parse(z.read(name + ".class"))
        return self.cache[name]

    def has_member(self, cls: str, name: str, desc: str) -> bool:
        """The member is declared by ``cls`` or a Spark or Scala supertype, or is one of java.lang.Object's (JDK
        supertypes are not read)."""
        if name in _OBJECT_METHODS:
            return True
        seen: set[str] = set()
        todo = [cls]
        while todo:
            c = todo.pop()
            if c in seen or not c.startswith(_PREFIXES):
                continue
            seen.add(c)
            cf = self.get(c)
            if cf is None:
                return False
            if (name, desc) in cf.members:
                return True
            todo += [s for s in [cf.super_name, *cf.interfaces] if s]
        return False


def unresolved(jar: str | Path, spark_jars: str | Path) -> list[str]:
    """Every Spark or Scala class, method or field the jar references that the Spark in ``spark_jars`` lacks."""
    cp = Classpath(Path(spark_jars))
    own: dict[str, ClassFile] = {}
    with zipfile.ZipFile(jar) as z:
        for n in z.namelist():
            if n.endswith(".class"):
                cf = parse(z.read(n))
                own[cf.name] = cf
    missing = set()
    for cf in own.values():
        for cls, name, desc in cf.refs:
            if cls in own or not cls.startswith(_PREFIXES) or cls.startswith("["):
                continue
            if cp.get(cls) is None:
                missing.add(f"class {cls}")
            elif not cp.has_member(cls, name, desc):
                missing.add(f"{cls}.{name}{desc}")
        for sup in [cf.super_name, *cf.interfaces]:
            if sup and sup.startswith(_PREFIXES) and sup not in own and cp.get(sup) is None:
                missing.add(f"class {sup}")
    return sorted(missing)
