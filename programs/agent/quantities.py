"""Quantities with a unit of measure, as an answer and the passages give them, compared by value.

A capable model writes "2,500 kg" where a passage says "2.5 tonnes", or "about 31 miles" for
"50 km": the same quantity, and its number is in no passage. It also writes "40 miles" for "40 km":
its number is read and its claim is not. pint (a well-kept units library) reads the units and
converts them; which words are units is kept to measures of length, area, volume, mass,
temperature and speed, for pint also knows "in" (inches), "a" (years) and "point" (a printer's
length), and a time ("4 years") is a count of years the checks read otherwise.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from deltaseek.programs.text import in_digits, stopwords

MEASURES = frozenset("""meter kilometer centimeter millimeter mile foot inch yard nautical_mile square_mile
kilogram gram milligram metric_ton ton long_ton pound ounce stone liter milliliter gallon imperial_gallon
acre hectare degree_Celsius degree_Fahrenheit kelvin knot mile_per_hour kilometer_per_hour hour second""".split())
"""pint's names of the units a quantity may be measured in: "hour" and "second" only under a length
("km/h"), for a time alone is not compared here."""
SHORT_UNITS = frozenset("m g l L".split())
"""The one-letter words read as units; others ("C", "t") name other things as often."""

_QUANTITY = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)\s?((?:(?:square|sq\.?|cubic)\s+)?(?:°\s?[CF]\b|[A-Za-z][A-Za-z²³]*)"
                       r"(?:\s?(?:/|per\s+)[a-z]+)?)")
"""A number and the words after it that may be its unit: "40 km", "2.5 tonnes", "12 square miles",
"60 km/h", "-5 °C"."""


@dataclass(frozen=True)
class Quantity:
    written: str
    number: str
    unit: str

    @property
    def magnitude(self) -> float:
        return float(self.number)


@cache
def _registry():
    import pint

    return pint.UnitRegistry()


def quantities(text: str) -> list[Quantity]:
    """The quantities the text gives with a unit of measure, numbers written one way (`in_digits`)."""
    found = []
    for match in _QUANTITY.finditer(in_digits(text.replace("\u2212", "-"))):  # a minus sign is a hyphen's
        unit = _unit(match[2])
        if unit is not None:
            found.append(Quantity(match[0], match[1], unit))
    return found


@cache
def _unit(words: str) -> str | None:
    """pint's unit for the words, or None when they are no measure (`MEASURES`)."""
    words = re.sub(r"°\s?", "deg", words.strip())
    if words not in SHORT_UNITS and (words.lower() in stopwords() or len(words) == 1):
        return None
    try:
        unit = _registry().parse_units(words.replace(" per ", "/"))
    except Exception:  # pint raises several kinds for words that are no unit  # noqa: BLE001
        return None
    names = dict(unit._units)
    if not names or not set(names) <= MEASURES or set(names) <= {"hour", "second"}:
        return None
    return str(unit)


def same_quantity(said: Quantity, read: Quantity) -> bool | None:
    """Whether two quantities are the same to the answer's rounding ("91 m" for "300 feet"); None
    when they measure different things (a length and a mass)."""
    registry = _registry()
    try:
        value = registry.Quantity(read.magnitude, read.unit).to(said.unit).magnitude
    except Exception:  # a length against a mass: pint's DimensionalityError  # noqa: BLE001
        return None
    return abs(value - said.magnitude) <= max(0.015 * abs(value), _rounding(said.number))


def _rounding(number: str) -> float:
    """Half the place of the number's last significant digit: "91" is 91 to 0.5, "2500" to 50."""
    if "." in number:
        return 0.5 * 10 ** -len(number.split(".")[1])
    digits = number.lstrip("-")
    zeros = len(digits) - len(digits.rstrip("0")) if digits.strip("0") else 0
    return 0.5 * 10 ** zeros


def compared_quantities(answer: str, facts_text: str) -> tuple[list[str], list[str]]:
    """The answer's quantities that a quantity read gives, in its unit or another ("60 km/h" for
    "60 kilometres per hour"), and those that contradict the passages: a quantity read measures the
    same thing and none is the same quantity ("40 miles" where a passage gives "40 km")."""
    read = quantities(facts_text)
    matched, contradicted = [], []
    for said in quantities(answer):
        verdicts = [same_quantity(said, other) for other in read]
        if any(verdicts):
            matched.append(said.written)
        elif any(v is False for v in verdicts):
            contradicted.append(said.written)
    return matched, contradicted
