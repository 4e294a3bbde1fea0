"""The one rule for characters a name, a path or a value written by hand may not hold: those a terminal would act
on or show as nothing. Config paths, template variables, table names, versions and the store's own names (usecase,
package, task, run id) all refuse what :func:`invisible` finds, and messages escape it.

Example:
    >>> invisible("2026-12-01"), invisible("2026-12-01\u3164")
    (None, 'U+3164 (an invisible or formatting character)')
"""

from __future__ import annotations

import unicodedata

#: Characters that show as nothing yet pass ``str.isprintable()``, as (first, last) code points: Unicode's
#: Default_Ignorable_Code_Point (DerivedCoreProperties.txt, 15.1; the Cf ones among them are not printable
#: anyway: listed whole so the rule reads as Unicode states it), which ``unicodedata`` does not expose, and the
#: blank-looking letters and symbols a font draws as empty space (U+2800 BRAILLE PATTERN BLANK, U+16FE4 KHITAN
#: SMALL SCRIPT FILLER). ``2026-12-01\u3164`` would name a folder that looks exactly like ``2026-12-01``.
_BLANK = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),  # Mongolian variation selectors
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x2800, 0x2800),  # braille pattern blank
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors (VS16 turns a character into its emoji form)
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),
    (0x16FE4, 0x16FE4),  # Khitan small script filler
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),  # tags and variation selectors 17-256
)


def shows_nothing(char: str) -> bool:
    """Whether a terminal would act on ``char`` or show it as nothing (or as blank space other than " ").

    Example:
        >>> shows_nothing("a"), shows_nothing(" "), shows_nothing("\u3164"), shows_nothing("\x1b")
        (False, False, True, True)
    """
    if not char.isprintable():  # controls, formatting, separators other than " ", private use, unassigned
        return True
    code = ord(char)
    return any(first <= code <= last for first, last in _BLANK)


def invisible(text: str) -> str | None:
    r"""The first character of ``text`` a terminal would act on or not show, described, or None: the one rule for
    the characters a path, a template variable that builds one, a table name or a version may not hold.

    A control character (C0 or C1), an invisible formatting character (U+202E shows a folder's name reversed,
    U+200B hides in it), a line separator, a character Unicode says to show as nothing (a variation selector, the
    Hangul filler U+3164) or one drawn blank (U+2800): the characters a record's names refuse (``printable``
    escapes them). Visible text in any script and an accent written as a combining mark pass, and so does an
    emoji written without a variation selector or joiner (U+2764 alone, a flag, a skin tone); U+2764 U+FE0F (the
    emoji form of the heart) and a family joined by U+200D are refused for the selector and the joiner.

    Example:
        >>> invisible("data/x"), invisible("a\x00b"), invisible("a\u202eb")
        (None, 'a control character (U+0000)', 'U+202E (an invisible or formatting character)')
        >>> invisible("2026-12-01\u3164"), invisible("\u65e5\u4ed8 e\u0301 \U0001f600 \u2764")
        ('U+3164 (an invisible or formatting character)', None)
        >>> invisible("\u2764\ufe0f")
        'U+FE0F (an invisible or formatting character)'
    """
    odd = next((c for c in text if shows_nothing(c)), None)
    if odd is None:
        return None
    if unicodedata.category(odd) == "Cc":
        return f"a control character (U+{ord(odd):04X})"
    return f"U+{ord(odd):04X} (an invisible or formatting character)"
