"""Whether two given names may name one person: the same name, a nickname of it ("Jim" and
"James", "Bill" and "William"), or its initial ("F." for "Fitzgerald").

The nicknames are the `nicknames` package's hand-curated table of English given names (Apache-2.0):
a capable model writes "Bill Sund" where a passage says "William Sund", and that is no other person.
"""

from __future__ import annotations

from functools import cache


@cache
def _namer():
    from nicknames import NickNamer  # a table of some 1,000 names, loaded once, only when a surname is in question

    return NickNamer()


@cache
def _forms(name: str) -> frozenset[str]:
    """The name, its nicknames and the names it is a nickname of, in lowercase."""
    name = name.lower()
    namer = _namer()
    return frozenset({name} | namer.nicknames_of(name) | namer.canonicals_of(name))


def same_given_name(one: str, other: str) -> bool:
    """Whether `one` and `other` may be one person's given name: "Jim" and "James", "F" and
    "Fitzgerald", "Ada" and "Ada"; not "Ada" and "Olaf"."""
    one, other = one.rstrip(".").lower(), other.rstrip(".").lower()
    if not one or not other:
        return False
    if len(one) == 1 or len(other) == 1:
        return one[0] == other[0]
    return one == other or bool(_forms(one) & _forms(other))
