"""
One call of onnxruntime's `quantize_static` as `models quantize` makes it, for both flavours.

The calibration runs once per step, into onnxruntime's calibration cache; every later call (the
other flavour, each block of the sensitivity pass) reads its ranges from there, so that all the
graphs of a step share one calibration and a block's sensitivity is measured with the ranges the
installed graph will have. models/quantization.py says why these flavours.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import sys
from typing import Iterator, Sequence, TextIO

import numpy as np
from numpy.typing import NDArray

from triton_perception.models.shipped_models import ModelInstallError

Feed = dict[str, NDArray[np.uint8 | np.float32 | np.int32]]
# Frames a histogram calibration (Entropy, Percentile) holds at once.
STRIDE = 8

# The CPU profile's graph: U8 activations, 7-bit weights (x86 without VNNI).
CPU_FLAVOUR: dict[str, object] = {'activation_type': 'QUInt8', 'reduce_range': True,
                                  'extra_options': {'WeightSymmetric': True}}
# TensorRT's: symmetric INT8, biases float (its parser refuses a DequantizeLinear of INT32).
TENSORRT_FLAVOUR: dict[str, object] = {
    'activation_type': 'QInt8',
    'extra_options': {'WeightSymmetric': True, 'ActivationSymmetric': True,
                      'QuantizeBias': False}}


@dataclass(frozen=True)
class QuantizeJob:
    """A step's opset-13 float graph, its calibration cache and method: what every call shares."""

    source: Path
    cache: Path
    method: object  # onnxruntime.quantization.CalibrationMethod

    def write(self, destination: Path, flavour: dict[str, object], quantize: Sequence[str],
              exclude: Sequence[str] = (), feeds: Iterator[Feed] | None = None) -> Path:
        """
        Write `source` quantized to `destination`: `quantize` minus `exclude`, in `flavour`.

        `feeds` calibrate when the cache is not written yet; afterwards the cache is read.
        """
        from onnxruntime.quantization import (CalibrationDataReader, QuantFormat,  # noqa: PLC0415
                                              quantize_static, QuantType)

        frames = list(feeds) if feeds is not None and not self.cache.is_file() else []

        class Reader(CalibrationDataReader):  # type: ignore[misc]

            def __init__(self) -> None:
                self.start, self.end = 0, len(frames)

            def __len__(self) -> int:
                return len(frames)

            def set_range(self, start_index: int, end_index: int) -> None:
                self.start, self.end = start_index, end_index

            def get_next(self) -> Feed | None:
                self.start += 1
                return frames[self.start - 1] if self.start <= self.end else None

        settings = dict(flavour)
        settings['activation_type'] = getattr(QuantType, str(flavour['activation_type']))
        if getattr(self.method, 'name', 'MinMax') != 'MinMax' and frames:
            # A histogram calibrator keeps every activation of every frame it is given until
            # it bins them: 64 frames of the lane graph took more than 22 GB (killed here).
            # Given STRIDE frames at a time, it bins and forgets them.
            stride = max(size for size in range(1, STRIDE + 1) if len(frames) % size == 0)
            settings['extra_options'] = dict(
                flavour['extra_options'], CalibStridedMinMax=stride)  # type: ignore[call-overload]
        nodes = [node for node in quantize if node not in exclude]
        if not nodes:  # quantize_static reads an empty list as "every node"
            raise ModelInstallError(f'{self.source.name}: every quantizable node is kept float')
        try:
            quantize_static(str(self.source), str(destination),
                            Reader() if frames else None,
                            quant_format=QuantFormat.QDQ, per_channel=True,
                            weight_type=QuantType.QInt8, calibrate_method=self.method,
                            nodes_to_quantize=nodes,
                            nodes_to_exclude=list(exclude), calibration_cache_path=self.cache,
                            **settings)
        except Exception as error:  # noqa: BLE001 (onnxruntime's calibrators, checks, optimizer)
            method = getattr(self.method, 'name', str(self.method))
            raise ModelInstallError(
                f'{self.source.name}: onnxruntime could not quantize it with {method} '
                f"calibration ({type(error).__name__}: {' '.join(str(error).split())}); try "
                'another --calibration-method') from error
        return destination


class ProgressBar:
    """A one-line progress bar on a terminal; a line per quarter elsewhere (logs, CI)."""

    def __init__(self, label: str, total: int, stream: TextIO | None = None) -> None:
        """Count to `total` under `label`."""
        self.label, self.total, self.done = label, max(total, 1), 0
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()

    def step(self) -> None:
        """Count one more and redraw."""
        self.done += 1
        share = self.done / self.total
        if self.tty:
            filled = int(30 * share)
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] "
                              f'{self.done}/{self.total}' + ('\n' if share >= 1 else ''))
        elif self.done == self.total or int(4 * share) > int(4 * (self.done - 1) / self.total):
            self.stream.write(f'{self.label}: {self.done}/{self.total}\n')
        self.stream.flush()
