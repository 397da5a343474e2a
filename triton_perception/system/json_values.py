"""
The type of a parsed JSON document, and of a YAML one read with `yaml.safe_load`.

`json.loads` and `yaml.safe_load` are typed as returning Any; a reader names its result
JsonValue and narrows it (isinstance, or a TypedDict once a schema has checked it), so what a
document holds is checked where it is read, not assumed.
"""
from __future__ import annotations

from typing import TypeAlias, Union

JsonValue: TypeAlias = Union[None, bool, int, float, str, list['JsonValue'],
                             dict[str, 'JsonValue']]
JsonObject: TypeAlias = dict[str, JsonValue]
