"""When two names are the same name, when a name passes for a reserved one, and when it shows
nothing.

``folded``: a name compared "whatever its case" is compared as its NFKC normal form, case-folded
(Unicode's caseless matching): 'Émile' and 'émile', 'Straße' and 'STRASSE', 'ＡＮＡ' (full-width)
and 'ana' are one name. ASCII-only lowercasing, as SQLite's ``NOCASE`` does, leaves the first
three pairs apart.

``looks_like``: a name *passes for* a reserved prefix when its *skeleton* starts with the
prefix's. The skeleton is the folded name transliterated to ASCII (``anyascii``: a Cyrillic
'а' or a Greek 'Α' becomes 'a', every dash and hyphen '-') with the ASCII look-alikes of this
module's ``_ASCII_LOOKALIKES`` replaced ('0' reads as 'o'). It is not Unicode's full confusables
skeleton (UTS #39), which would need its data file; it is enough to keep a reserved prefix such
as ``anchor-`` for the server's own accounts: 'аnchor-expert' (Cyrillic а), 'ａｎｃｈｏｒ-expert'
(full-width) and 'anchor‐expert' (U+2010 hyphen) all pass for it.

``shows_blank``: Python counts the Hangul fillers and the blank Braille pattern as printable
letters, and a combining mark as printable, yet they print as nothing (a mark alone, as an
accent over nothing): a name of them is a blank in every seat list and chat line, and 'Ana'
followed by a filler is another name that looks like 'Ana' to everyone at the table.
"""

from __future__ import annotations

import unicodedata

from anyascii import anyascii

#: Letters that print as nothing: the Hangul fillers (choseong, jungseong, compatibility,
#: half-width) and the Braille pattern without dots.
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
#: ASCII characters read as another one in a name's skeleton.
_ASCII_LOOKALIKES = str.maketrans({"0": "o", "_": "-"})


def folded(name: str) -> str:
    """``name`` as compared whatever its case: NFKC, then case-folded."""
    return unicodedata.normalize("NFKC", name).casefold()


def skeleton(name: str) -> str:
    """What ``name`` looks like, in lowercase ASCII (see the module's docstring)."""
    return anyascii(folded(name)).casefold().translate(_ASCII_LOOKALIKES)


def looks_like(name: str, prefix: str) -> bool:
    """Whether ``name`` starts with ``prefix``, or with something that passes for it."""
    return skeleton(name).startswith(skeleton(prefix))


def shows_blank(name: str) -> bool:
    """Whether ``name`` holds a letter that prints as nothing, or nothing but combining marks
    (see the module's docstring)."""
    return (not _BLANK_LETTERS.isdisjoint(name)
            or all(unicodedata.category(ch).startswith("M") for ch in name))
