"""A reply that missed its format by a near miss, read as what it says.

DSPy's adapters refuse a whole reply when one field misses its type: "Direct" where the label
must be "direct", a caveat written as a string where a list is asked for, a label with a period.
A capable model writes such replies (one without a schema to hold it), and refusing them throws
away the answer beside the off field. `read_leniently` reads the reply's fields again and takes
each near miss as the value it plainly means; anything else (a label that is no label, an answer
missing) still fails, and the run goes on as after any reply that could not be read.
"""

from __future__ import annotations

import ast
import re
from typing import Any, Literal, get_args, get_origin

import dspy
import json_repair
from dspy.adapters.utils import parse_value

_SECTION = re.compile(r"\[\[ ## (\w+) ## \]\]\s*(.*?)(?=\[\[ ## \w+ ## \]\]|\Z)", re.S)
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")
_NOTHING = frozenset({"", "none", "none.", "n/a", "nothing", "-"})
"""What a list field written as a string says when it holds no item."""


def _key(value: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", value.lower()).strip("_")


def raw_fields(reply: str) -> dict[str, Any]:
    """The reply's fields as written: DSPy's chat sections (`[[ ## answer ## ]]`) or a JSON object
    (mended by json-repair), with their names' case as the signature spells them."""
    sections = {name: text.strip() for name, text in _SECTION.findall(reply)}
    if sections:
        return sections
    fields = json_repair.loads(reply) if reply.strip() else {}
    if not isinstance(fields, dict) and (blob := re.search(r"\{.*\}", reply, re.S)):
        fields = json_repair.loads(blob.group(0))
    return fields if isinstance(fields, dict) else {}


NO_LABEL = object()
"""What `near_miss` gives for a closed choice's field when the reply wrote a word that is none of
its labels ("high" for an answerability): no label, and the field is read as None, as if left
out. Every reader of those fields takes a label only when it is one (the step's move is then the
program's, a tool call goes to the first tool, the answer's label is the program's own). A field
the reply wrote as null is not this: DSPy reads it as ever."""


def near_miss(value: Any, annotation: Any) -> Any:
    """`value` as the type `annotation` asks for, where it plainly means one: a label in another
    case or with punctuation ("Direct.", "proxy only"), or `NO_LABEL` for a word that is no label;
    one item or none written as a string where a list is asked for; a text written as a list of
    texts or a one-entry object. Any other value is returned as it is, for DSPy's own parsing to
    take or refuse."""
    origin, args = get_origin(annotation), get_args(annotation)
    if origin is Literal and isinstance(value, str):
        return next((a for a in args if isinstance(a, str) and _key(a) == _key(value)), NO_LABEL)
    if origin is list and isinstance(value, str):
        if value.strip().lower() in _NOTHING:
            return []
        lines = [line for line in value.splitlines() if line.strip()]
        if len(lines) > 1 and all(_BULLET.match(line) for line in lines):
            return [_BULLET.sub("", line).strip() for line in lines]
        return value if value.strip().startswith("[") else [value.strip()]
    if annotation is str and isinstance(value, list) and value and all(isinstance(v, (str, int, float)) for v in value):
        return ", ".join(str(v) for v in value)
    if annotation is str and isinstance(value, dict) and len(value) == 1:
        (only,) = value.values()
        return only if isinstance(only, str) else value
    return value


def read_leniently(signature: type[dspy.Signature], reply: str) -> tuple[dict[str, Any], list[str]] | None:
    """The signature's output fields read from `reply` with near misses taken (see `near_miss`),
    and what was read so ("answerability 'Direct' as 'direct'"); None when a field is still
    missing or unreadable. A list field left out is an empty list."""
    written = {name.lower(): value for name, value in raw_fields(reply).items()}
    fields, read_as = {}, []
    for name, field in signature.output_fields.items():
        annotation = field.annotation
        if name.lower() not in written:
            if get_origin(annotation) is list:
                fields[name] = []
                continue
            return None
        value = near_miss(written[name.lower()], annotation)
        try:
            fields[name] = None if value is NO_LABEL else parse_value(value, annotation)
        except (ValueError, TypeError):
            return None
        if value is NO_LABEL or value != written[name.lower()]:  # a near miss taken, not DSPy's own reading
            read_as.append(f"{name} {_short(written[name.lower()])} as {_short(fields[name])}")
    return fields, read_as


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _written_as(text: str) -> Any:
    """The list or object a text field holds when DSPy turned one into its text ("['Ada Lind']")."""
    stripped = text.strip()
    if (stripped[:1], stripped[-1:]) not in (("[", "]"), ("{", "}")):
        return text
    try:
        return ast.literal_eval(stripped)  # DSPy writes the Python form: "['Ada Lind']"
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


_SCRATCH = re.compile(r"<(think|thinking|reasoning)>.*?</\1>\s*", re.S | re.I)
"""A reasoning model's scratch, which some servers leave in the reply's text: "<think>...</think>"."""


def texts_as_written(prediction: dspy.Prediction, signature: type[dspy.Signature]) -> list[str]:
    """Text fields that a reply wrote as a list of texts or a one-entry object, which DSPy's adapter
    turned into their Python form ("['Emil Varga', 'Jon Varga']"), set to the texts they hold
    ("Emil Varga, Jon Varga"), and a reasoning model's scratch before a text left out; returns
    what was read so."""
    read_as = []
    for name, field in signature.output_fields.items():
        value = prediction.get(name) if hasattr(prediction, "get") else None
        if field.annotation is str and isinstance(value, str):
            text = near_miss(_written_as(_SCRATCH.sub("", value).strip() or value), str)
            if isinstance(text, str) and text != value:
                prediction[name] = text
                read_as.append(f"{name} {_short(value)} as {_short(text)}")
    return read_as


def read_or_raise(exc: Exception) -> tuple[dspy.Prediction, list[str]]:
    """The prediction DSPy's adapter could not read from the reply in `exc` (an AdapterParseError,
    which carries the reply and the signature), read leniently, or `exc` raised again."""
    reply, signature = getattr(exc, "lm_response", None), getattr(exc, "signature", None)
    read = read_leniently(signature, reply) if isinstance(reply, str) and signature is not None else None
    if read is None:
        raise exc
    fields, read_as = read
    return dspy.Prediction(**fields), read_as


