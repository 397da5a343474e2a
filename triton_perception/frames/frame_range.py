"""
The frame sizes a served graph takes: its config's min_frame..max_frame, its engine's profile.

Every served graph takes the frame itself, uint8 [H, W, 3] of any size (graphs/frame_input.py).
A TensorRT engine only runs shapes inside the optimization profile it was built with, so
`engines build` builds one from the step config's parameters min_frame and max_frame
("WxH", width x height), and the CPU profile's runner refuses the frames outside them too
(onnx_runner.frame_size_error), so that both profiles accept the same frames.
"""
from __future__ import annotations

from dataclasses import dataclass
import os
from pathlib import Path
import re

from triton_perception.errors import TritonPerceptionError

DEFAULT_MIN = '1x1'
DEFAULT_MAX = '3840x2160'  # landscape 4K UHD; portrait or larger cameras raise it
OPTIMUM = (1920, 1080)     # the size TensorRT tunes its kernels for, clipped into the range
# One parameter in a config's text, on one line or as protobuf's text format spreads it.
PARAMETER = re.compile(r'parameters\s*\{\s*key:\s*"(min_frame|max_frame)"\s*value\s*\{\s*'
                       r'string_value:\s*"([^"]*)"\s*\}\s*\}')
# The frame of a model_warmup sample: the only uint8 tensor with fixed [H, W, 3] dims in a
# config (the inputs declare [-1, -1, 3]), on one line or one dims entry per line.
WARMUP_FRAME = re.compile(r'(data_type:\s*TYPE_UINT8\s*)(dims:\s*\[\s*\d+\s*,\s*\d+\s*,\s*3\s*\]'
                          r'|dims:\s*\d+\s*dims:\s*\d+\s*dims:\s*3\b)')


class FrameRangeError(TritonPerceptionError, ValueError):
    """A frame size or range is malformed; the message says what is accepted."""


def parse_size(text: str) -> tuple[int, int]:
    """Return (width, height) of 'WxH'."""
    match = re.fullmatch(r'\s*(\d+)\s*[xX]\s*(\d+)\s*', text)
    if not match or min(int(match.group(1)), int(match.group(2))) < 1:
        raise FrameRangeError(f'frame size {text!r}: expected WIDTHxHEIGHT in pixels, e.g. '
                              '1920x1080')
    return int(match.group(1)), int(match.group(2))


@dataclass(frozen=True)
class FrameRange:
    """Smallest and largest frame, (width, height) each; both bounds included."""

    smallest: tuple[int, int] = parse_size(DEFAULT_MIN)
    largest: tuple[int, int] = parse_size(DEFAULT_MAX)

    def __post_init__(self) -> None:
        """Raise FrameRangeError if the smallest frame is wider or taller than the largest."""
        if any(low > high for low, high in zip(self.smallest, self.largest)):
            raise FrameRangeError(f'frame range {self}: the smallest frame is larger than the '
                                  'largest')

    def __str__(self) -> str:
        """Return the range as 'WxH to WxH'."""
        return f'{self.smallest[0]}x{self.smallest[1]} to {self.largest[0]}x{self.largest[1]}'

    @property
    def optimum(self) -> tuple[int, int]:
        """Return the (width, height) TensorRT tunes for: 1920x1080 clipped into the range."""
        width, height = (min(max(value, low), high) for value, low, high in zip(
            OPTIMUM, self.smallest, self.largest))
        return width, height

    def trtexec_shapes(self, input_name: str) -> list[str]:
        """Return trtexec's profile flags for an [H, W, 3] input."""
        def shape(size: tuple[int, int]) -> str:
            return f'{input_name}:{size[1]}x{size[0]}x3'
        return [f'--minShapes={shape(self.smallest)}', f'--optShapes={shape(self.optimum)}',
                f'--maxShapes={shape(self.largest)}']


def frame_range_of(config_text: str) -> FrameRange:
    """Return the range a step config's parameters declare (the defaults where absent)."""
    found = dict(PARAMETER.findall(config_text))
    return FrameRange(parse_size(found.get('min_frame', DEFAULT_MIN)),
                      parse_size(found.get('max_frame', DEFAULT_MAX)))


def warmup_frames(config_text: str) -> list[tuple[int, int]]:
    """Return (width, height) of each model_warmup frame the config declares."""
    sizes = []
    for match in WARMUP_FRAME.finditer(config_text):
        height, width = (int(value) for value in re.findall(r'\d+', match.group(2))[:2])
        sizes.append((width, height))
    return sizes


def with_frame_range(config_text: str, frame_range: FrameRange) -> str:
    """
    Return the config text declaring `frame_range` (replacing the parameters it had).

    A model_warmup frame moves to the range's optimum: TensorRT refuses a warm-up outside the
    engine's profile, and a failed warm-up fails the model's load, so a narrowed range with the
    old warm-up would never load.
    """
    values = {'min_frame': '{}x{}'.format(*frame_range.smallest),
              'max_frame': '{}x{}'.format(*frame_range.largest)}
    if not declares_frame_range(config_text):
        raise FrameRangeError('the config declares no min_frame/max_frame parameters: it does not '
                              'take the frame itself')
    text = PARAMETER.sub(lambda match: f'parameters {{ key: "{match.group(1)}" value {{ '
                         f'string_value: "{values[match.group(1)]}" }} }}', config_text)
    width, height = frame_range.optimum
    return WARMUP_FRAME.sub(lambda match: f'{match.group(1)}dims: [ {height}, {width}, 3 ]', text)


def declares_frame_range(config_text: str) -> bool:
    """Say whether a config declares both min_frame and max_frame (a step that bounds the frame)."""
    return len(PARAMETER.findall(config_text)) == 2


def set_frame_range(step: Path, frame_range: FrameRange) -> None:
    """
    Declare `frame_range` in every config of a model step that bounds the frame.

    A step may bound it in one profile only (camera_health: the CPU profile's runner refuses
    frames outside the range, ONNX Runtime on the Orin takes any size); a step none of whose
    configs bounds it raises FrameRangeError. Each config is replaced, not written through:
    after `colcon build --symlink-install` the installed configs are links into the source
    checkout, which must stay as it is.
    """
    paths = [path for path in (step / 'config.pbtxt', step / 'configs' / 'cpu.pbtxt')
             if path.is_file() and declares_frame_range(path.read_text(encoding='utf-8'))]
    if not paths:
        raise FrameRangeError(f'{step.name}: no config declares min_frame/max_frame: the step '
                              'does not take the frame itself')
    for path in paths:
        partial = path.with_name(f'{path.name}.partial')
        partial.write_text(with_frame_range(path.read_text(encoding='utf-8'), frame_range),
                           encoding='utf-8')
        os.replace(partial, path)
