"""When two names are the same name, and when a name passes for a reserved one.

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
"""

from __future__ import annotations

import unicodedata

from anyascii import anyascii

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
