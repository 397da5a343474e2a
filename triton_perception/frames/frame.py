"""A received camera frame on its way to Triton: the message as taken and when it arrived."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Frame:
    """A received frame; `message` (an Image, CompressedImage or one read serialized) is opaque."""

    message: Any
    received_at: float
