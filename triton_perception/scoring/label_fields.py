"""
A label file's size limit and its fields (numbers, stamps, JSON), each read with its place.

Every reader of scoring/ parses through these, so that each fault of a file is one LabelError
naming the file, the line (or the JSON field) and the field.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Sequence, TYPE_CHECKING

from triton_perception.errors import TritonPerceptionError

if TYPE_CHECKING:
    from triton_perception.system import JsonObject, JsonValue

# Label files are read whole into memory: a larger file is refused by its size before parsing.
MAX_LABEL_BYTES = 512 * 1024 * 1024
# How many unresolved or unmatched entries an error lists before it says how many more.
LISTED = 10
CULANE_SUFFIX = '.lines.txt'


class LabelError(TritonPerceptionError, ValueError):
    """A label file that cannot be used, with the file, line and field at fault in its message."""


def check_size(path: Path, limit: int = MAX_LABEL_BYTES) -> None:
    """Raise LabelError if `path` is missing or larger than `limit` bytes; nothing is read."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise LabelError(f'{path}: cannot read the label file ({error.strerror})') from None
    if size > limit:
        raise LabelError(f'{path}: {size} bytes is over the {limit}-byte limit for a label file '
                         f'(MAX_LABEL_BYTES); split it or label fewer frames')


def read_text(path: Path, limit: int = MAX_LABEL_BYTES) -> str:
    """Return the text of a label file after its size check; undecodable bytes are a LabelError."""
    check_size(path, limit)
    try:
        return path.read_text(encoding='utf-8')
    except UnicodeDecodeError as error:
        line = path.read_bytes()[:error.start].count(b'\n') + 1
        raise LabelError(f'{path}, line {line}: not UTF-8 text') from None
    except OSError as error:
        raise LabelError(f'{path}: cannot read the label file ({error.strerror})') from None


def stamp_of(file_name: str, where: str) -> int:
    """Return the stamp (ns) an exported frame's file name carries: its basename's stem."""
    base = os.path.basename(file_name.replace('\\', '/'))
    stem = base[:-len(CULANE_SUFFIX)] if base.endswith(CULANE_SUFFIX) else os.path.splitext(base)[0]
    if not (stem.isascii() and stem.isdigit()):
        raise LabelError(f'{where}: file name {file_name!r} does not name a frame stamp: the '
                         'exported frame files are named <header stamp in ns>.<ext>, e.g. '
                         '1700000000040000000.png')
    return int(stem)


def number(value: object, where: str) -> float:
    """Return `value` as a finite float, or raise LabelError naming `where`."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise LabelError(f'{where}: {value!r} is not a number')
    try:
        result = float(value)
    except ValueError:
        raise LabelError(f'{where}: {value!r} is not a number') from None
    if not math.isfinite(result):
        raise LabelError(f'{where}: {value!r} is not a finite number')
    return result


def integer(value: object, where: str) -> int:
    """
    Return `value` as an int (a float must be whole), or raise LabelError naming `where`.

    An int, or a string of digits, is taken exactly: a header stamp in ns (19 digits) is past
    what a float holds exactly.
    """
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        text = value.strip()
        digits = text[1:] if text[:1] in ('+', '-') else text
        if digits.isascii() and digits.isdigit():
            return int(value)
    result = number(value, where)
    if result != int(result):
        raise LabelError(f'{where}: {value!r} is not a whole number')
    return int(result)


def listed(items: Sequence[object]) -> str:
    """Return the first LISTED items, then how many more there are."""
    shown = ', '.join(str(item) for item in items[:LISTED])
    return shown + (f' and {len(items) - LISTED} more' if len(items) > LISTED else '')


def json_document(path: Path, text: str) -> JsonValue:
    """Parse a whole JSON document, a syntax error being a LabelError with its line and column."""
    try:
        document: JsonValue = json.loads(text)
    except json.JSONDecodeError as error:
        raise LabelError(f'{path}, line {error.lineno}, column {error.colno}: malformed JSON '
                         f'({error.msg})') from None
    return document


def json_object(value: JsonValue, where: str) -> JsonObject:
    """Return `value` if it is a JSON object, else raise LabelError naming `where`."""
    if not isinstance(value, dict):
        raise LabelError(f'{where}: expected a JSON object, found {type(value).__name__}')
    return value


def entry(record: JsonValue, key: str, where: str) -> JsonValue:
    """Return `record[key]`, or raise LabelError naming the missing field."""
    fields = json_object(record, where)
    if key not in fields:
        raise LabelError(f'{where}: missing field {key!r}')
    return fields[key]


def json_list(value: JsonValue, where: str) -> list[JsonValue]:
    """Return `value` if it is a JSON array, else raise LabelError naming `where`."""
    if not isinstance(value, list):
        raise LabelError(f'{where}: expected a JSON array, found {type(value).__name__}')
    return value


def class_indices(class_names: Sequence[str]) -> dict[str, int]:
    """Return the detector's class index by name, as label names match it: case and spaces aside."""
    return {class_key(name): index for index, name in enumerate(class_names)}


def class_key(name: str) -> str:
    """Return the form a label or class name is matched in: lower case, no surrounding spaces."""
    return name.strip().lower()


def unmatched_classes(path: Path, noun: str, unmatched: dict[str, int],
                      class_names: Sequence[str]) -> LabelError:
    """Return the error for label names (`noun`: 'categories', 'labels') that match no class."""
    return LabelError(
        f"{path}: {noun} that match none of the detector's {len(class_names)} class names (by "
        f'name, ignoring case): ' + listed([f'{name!r} ({count} boxes)'
                                            for name, count in sorted(unmatched.items())])
        + f"; the detector's classes are {listed(list(class_names))}")
