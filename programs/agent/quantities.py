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

from deltaseek.programs.text import DIGITS_OF_NUMBER_WORDS, in_digits, stopwords

MEASURES = frozenset("""meter kilometer centimeter millimeter mile foot inch yard nautical_mile square_mile
kilogram gram milligram metric_ton ton long_ton pound ounce stone liter milliliter gallon imperial_gallon
acre hectare degree_Celsius degree_Fahrenheit kelvin knot mile_per_hour kilometer_per_hour hour second""".split())
"""pint's names of the units a quantity may be measured in: "hour" and "second" only under a length
("km/h"), for a time alone is not compared here."""
SHORT_UNITS = frozenset("m g l L".split())
"""The one-letter words read as units; others ("C", "t") name other things as often."""

_QUANTITY = re.compile(r"(?<![\w.])((?:-|\bminus\s+)?\d+(?:\.\d+)?)\s?((?:(?:square|sq\.?|cubic)\s+)?"
                       r"(?:°\s?[CF]\b|degrees?\s+(?:Celsius|centigrade|Fahrenheit)\b|[A-Za-z][A-Za-z²³]*)"
                       r"(?:\s?(?:/|per\s+)[a-z]+)?)", re.I)
"""A number and the words after it that may be its unit: "40 km", "2.5 tonnes", "12 square miles",
"60 km/h", "-5 °C", "minus 5 degrees Celsius"."""
_DEGREES = re.compile(r"^(?:°\s?|degrees?\s+)([CF])\w*", re.I)
"""How a temperature's unit is written ("°C", "degrees Celsius"), for pint's "degC"."""


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
            found.append(Quantity(match[0], re.sub(r"(?i)minus\s+", "-", match[1]), unit))
    return found


@cache
def _unit(words: str) -> str | None:
    """pint's unit for the words, or None when they are no measure (`MEASURES`)."""
    words = _DEGREES.sub(lambda m: f"deg{m[1].upper()}", words.strip())
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
    """Whether two quantities are the same to the answer's rounding, at most `ROUNDED_BY` off ("91 m"
    for "300 feet", not "20 km" for "25 km"); None when they measure different things (a length and
    a mass)."""
    registry = _registry()
    try:
        value = registry.Quantity(read.magnitude, read.unit).to(said.unit).magnitude
    except Exception:  # a length against a mass: pint's DimensionalityError  # noqa: BLE001
        return None
    near = min(_rounding(said.number), ROUNDED_BY * abs(value))
    return abs(value - said.magnitude) <= max(0.015 * abs(value), near)


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


_NUMBER = re.compile(r"(?<![\d.])\d+(?:\.\d+)?")


def numbers_in(text: str) -> list[str]:
    """The numbers of a text whose numbers are digits (`in_digits`), in order: "40", "2.5"."""
    return _NUMBER.findall(text)


_APPROXIMATELY = re.compile(r"(?:\b(?:about|around|approximately|approx\.|roughly|nearly|almost|over|under|some|"
                            r"circa|c\.|close to|more than|less than|fewer than|upwards of|an estimated|estimated|"
                            r"just over|just under)\s+|~\s?)(?:[A-Z]{0,2}\$|£|€|¥)?"
                            r"(\d+(?:\.\d+)?)(?![\d.]*\d)", re.I)
"""A number the answer says is near: "about 1200000" ("about 1.2 million" in digits), "~48000"."""
_SCALED = re.compile(r"\b\d+(?:\.\d+)?\s?(?:thousand|million|billion|trillion|mn|bn|tn)\b", re.I)
"""A number written with a scale, which rounds it: "1.2 million", "3.5bn"."""


def rounded_numbers(answer: str, facts_text: str) -> list[str]:
    """The answer's numbers written as a rounding ("about 48,000", "1.2 million") that a number read
    rounds to, to the place of their last significant digit: "about 1.2 million" where a passage
    says "1,194,782", "over 48,000" where it says "48,213". A number written whole is not rounded,
    and a number read must be written more precisely than the answer's."""
    said = {m[1] for m in _APPROXIMATELY.finditer(in_digits(answer))}
    said |= {in_digits(m[0]).strip() for m in _SCALED.finditer(answer)}
    said = {n for n in said if float(n) >= ROUNDED_FROM}
    if not said:
        return []
    read = numbers_in(in_digits(facts_text))
    return sorted(n for n in said if any(_significant(r) > _significant(n) and abs(float(n) - float(r))
                                         <= min(_rounding(n), ROUNDED_BY * float(r)) for r in read))


ROUNDED_FROM = 100
"""The least number read as a rounding: "about 10" is no rounding of a "7" or a "14" read."""
ROUNDED_BY = 0.05
"""The most a rounding may be off, as a share of the number read, as far as two significant digits
take it: "about 300" is no rounding of a "234" read, nor "about 2 million" of "1.9 million"
(passages hold many numbers, and a coarse rounding would find one)."""


def _significant(number: str) -> int:
    """How many significant digits the number is written with: "48000" 2, "48213" 5, "1.19" 3."""
    digits = number.replace(".", "").lstrip("0")
    return len(digits if "." in number else digits.rstrip("0")) or 1


_FRACTION = re.compile(r"\b(?:(a|an|one|two|three|four)[\s-]+)?(half|thirds?|quarters?|fifths?)\b", re.I)
"""A share in words: "half", "a third", "two-thirds", "three quarters" (a third or a quarter with its
count, for "the third quarter of the match" is no share)."""
_NUMERATORS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4}
_DENOMINATORS = {"half": 2, "third": 3, "quarter": 4, "fifth": 5}
_DIGIT_FRACTION = re.compile(r"(?<![\d/.])([1-9])/([2-9]|1[0-2])(?![\d/])")
"""A share in digits: "1/2", "3/4" (not a date's "3/4/1921", nor "24/7")."""
_PERCENT = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)\s?(?:%|percent\b|per\s?cent\b)", re.I)
_EXACT_SHARE = 0.005
"""How near a share in words or a fraction is to a percentage that writes it: "two-thirds" is 67%."""


def _shares(text: str) -> dict[str, tuple[float, float]]:
    """The shares the text gives, each as its value and how near another must be to be the same:
    in words, as a fraction in digits, and as a percentage (to its rounding)."""
    found = {}
    for match in _FRACTION.finditer(text):
        count = _NUMERATORS[match[1].lower()] if match[1] else (1 if match[2].lower() == "half" else 0)
        share = count / _DENOMINATORS[match[2].lower().rstrip("s")]
        if 0 < share < 1:
            found[match[0]] = (share, _EXACT_SHARE)
    for match in _DIGIT_FRACTION.finditer(text):
        if int(match[1]) < int(match[2]):
            found[match[0]] = (int(match[1]) / int(match[2]), _EXACT_SHARE)
    for match in _PERCENT.finditer(in_digits(text)):
        found[match[0]] = (float(match[1]) / 100, _rounding(match[1]) / 100)
    return found


def same_shares(answer: str, facts_text: str) -> list[str]:
    """The answer's shares that a passage gives, in the same spelling or another, to the answer's
    rounding: "50%" where a passage says "half of", "33%" for "a third", "a quarter" or "1/4" for
    "25 per cent"."""
    said = _shares(answer)
    if not said:
        return []
    read = [share for share, _ in _shares(facts_text).values()]
    return [written for written, (share, near) in said.items() if any(abs(share - r) <= near for r in read)]


_TIME_UNITS = "seconds?|minutes?|hours?|days?|weeks?|fortnights?|months?|years?|decades?"
_ONE = "an?|one"
_DURATION = re.compile(rf"(?<![\w.])(?:(\d+(?:\.\d+)?|{_ONE}|{'|'.join(DIGITS_OF_NUMBER_WORDS)})\s?({_TIME_UNITS})"
                       rf"(\s+and\s+a\s+half)?|half\s+(?:{_ONE})\s+({_TIME_UNITS}))\b", re.I)
"""A length of time: "14 days", "a fortnight", "an hour and a half", "half a week" (a century is
left out: "11 century" is how "the eleventh century" is written in digits)."""
_SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 7 * 86400, "fortnight": 14 * 86400,
            "month": 365.25 * 86400 / 12, "year": 365.25 * 86400, "decade": 3652.5 * 86400}
"""Each unit of time in seconds (pint reads "decade" as a ratio of ten)."""
_DURATION_JOINED = re.compile(r"\s+(?:and\s+)?")
"""What may stand between the parts of one length of time: "2 hours and 30 minutes", "2 hours 30 minutes"."""


@dataclass(frozen=True)
class Duration:
    start: int
    end: int
    seconds: float
    near: float
    """How far another length of time may be and be this one: the rounding of its number."""
    unit: float


def _durations(text: str) -> list[tuple[str, Duration]]:
    """The lengths of time the text gives, what is written and its length, a smaller unit after a
    larger one joined to it ("2 hours and 30 minutes" is one; "a week, a day" and "a day and a week" two)."""
    text = in_digits(text)
    found: list[Duration] = []
    for match in _DURATION.finditer(text):
        written = (match[1] or "").lower()
        if match[4]:
            count, unit, near = 0.5, match[4], 0.0
        elif written in ("a", "an", "one") or written in DIGITS_OF_NUMBER_WORDS:
            count, unit, near = float(DIGITS_OF_NUMBER_WORDS.get(written, 1)) + (0.5 if match[3] else 0), match[2], 0.0
        else:
            count, unit, near = float(written) + (0.5 if match[3] else 0), match[2], _rounding(written)
        seconds = _SECONDS[unit.lower().removesuffix("s")]
        part = Duration(match.start(), match.end(), count * seconds, near * seconds, seconds)
        if found and found[-1].unit > seconds and _DURATION_JOINED.fullmatch(text[found[-1].end:match.start()]):
            before = found.pop()
            part = Duration(before.start, match.end(), before.seconds + part.seconds, part.near, seconds)
        found.append(part)
    return [(text[d.start:d.end], d) for d in found]


def same_durations(answer: str, facts_text: str) -> list[str]:
    """The answer's lengths of time that a passage gives in another unit, to the answer's rounding
    or 1.5%: "14 days" for "two weeks", "an hour and a half" for "90 minutes", "three decades" for
    "30 years". Only a match is read: a count of years that is no passage's length of time may be
    worked out from two years read, which the checks do otherwise."""
    said = _durations(answer)
    if not said:
        return []
    read = [d.seconds for _, d in _durations(facts_text)]
    return [written for written, d in said if any(abs(d.seconds - r) <= max(0.015 * r, d.near) for r in read)]


_CURRENCY_FAMILIES = {"$": "dollar", "dollar": "dollar", "usd": "dollar", "cad": "dollar", "aud": "dollar",
                      "nzd": "dollar", "hkd": "dollar", "sgd": "dollar", "£": "pound", "pound": "pound",
                      "gbp": "pound", "sterling": "pound", "€": "euro", "euro": "euro", "eur": "euro", "¥": "yen|yuan",
                      "yen": "yen", "jpy": "yen", "yuan": "yuan", "renminbi": "yuan", "cny": "yuan", "rmb": "yuan",
                      "franc": "franc", "chf": "franc", "rupee": "rupee", "inr": "rupee", "ruble": "ruble",
                      "rouble": "ruble", "rub": "ruble", "peso": "peso", "mxn": "peso", "lira": "lira", "lire": "lira",
                      "krona": "krona", "kronor": "krona", "krone": "krona", "kroner": "krona", "sek": "krona",
                      "nok": "krona", "dkk": "krona"}
"""The currency a sign, a code or a word names, by its name ("dollar": US, Canadian and others alike,
for "$" says no more); "¥" is yen or yuan."""
_CURRENCY_CODES = "USD|CAD|AUD|NZD|HKD|SGD|GBP|EUR|JPY|CNY|RMB|CHF|INR|RUB|MXN|SEK|NOK|DKK"
_AMOUNT = re.compile(rf"(?P<sign>[A-Z]{{0,2}}\$|£|€|¥|\b(?:{_CURRENCY_CODES})\s?)(?P<before>\d+(?:\.\d+)?)"
                     rf"|(?<![\w.])(?P<after>\d+(?:\.\d+)?)\s?(?:(?:US|Canadian|Australian)\s)?(?P<name>dollars?|"
                     rf"pounds?|sterling|euros?|yen|yuan|renminbi|francs?|rupees?|roubles?|rubles?|pesos?|lira|lire|"
                     rf"kron(?:a|e|or|er)|{_CURRENCY_CODES})\b")
"""An amount of money: a sign or code before its number ("£5000000", "US$2500000", "USD 40"), or a
currency's name or code after it ("5000000 dollars", "40 USD"), in a text whose numbers are digits."""


def _amounts(text: str) -> list[tuple[str, float, set[str]]]:
    """The amounts of money the text gives: what is written, the number, and the currencies it may be."""
    found = []
    for match in _AMOUNT.finditer(in_digits(text)):
        sign = "$" if (match["sign"] or "").endswith("$") else (match["sign"] or "").strip()
        name = (sign or match["name"]).lower()
        family = _CURRENCY_FAMILIES.get(name) or _CURRENCY_FAMILIES[name.removesuffix("s")]
        found.append((match[0], float(match["before"] or match["after"]), set(family.split("|"))))
    return found


def compared_amounts(answer: str, facts_text: str) -> tuple[list[str], list[str]]:
    """The answer's amounts of money that a passage gives in a currency the answer's may be ("40 million
    US dollars" for "$40 million"), and those that the passages give only in another currency ("5
    million dollars" where a passage says "£5 million" and none gives 5 million in dollars)."""
    read = _amounts(facts_text)
    matched, contradicted = [], []
    for written, number, currencies in _amounts(answer):
        read_in = set().union(*(c for _, n, c in read if n == number))
        if currencies & read_in:
            matched.append(written)
        elif read_in:
            contradicted.append(written)
    return matched, contradicted
