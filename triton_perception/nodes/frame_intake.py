"""
A frame's way into an inference node: header checks on the executor, RGB on the worker.

The frame callback only checks headers and hands the frame to the worker's latest-frame slot,
so a burst of malformed frames cannot hide behind the slot and a slow Triton never blocks the
executor; the RGB conversion happens later, on the worker's request thread.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import NDArray

from triton_perception.frames import (check_compressed, check_image, compressed_to_rgb, Fate, Frame,
                                      FrameAccounting, FrameRejected, image_to_rgb, KeyframeWait)
from triton_perception.nodes.camera_frames import CameraFrames
from triton_perception.nodes.frame_reading import COMPRESSED_FRAMES, read_frame, Taken
from triton_perception.parameters import InferenceSettings
from triton_perception.serving import InferenceWorker, Log


class FrameChecks:
    """The frame callback: count the frame, check its header, hand it to the worker."""

    def __init__(self, accounting: FrameAccounting, settings: Callable[[], InferenceSettings],
                 topic: str, compressed: bool, log: Log,
                 worker: Callable[[], InferenceWorker | None],
                 on_read: Callable[[Any], None] | None = None) -> None:
        """
        Check frames of `topic` against `settings()` (max_image_pixels); count into `accounting`.

        `compressed`: whether serialized frames are CompressedImages (else Images).

        `worker` returns the node's worker, None while the node is not active. `on_read` is
        given every frame that has a readable header (the camera's health check), before its
        checks.
        """
        self._on_read = on_read
        self._accounting = accounting
        self._settings = settings
        self._topic = topic
        self._compressed = compressed
        self._log = log
        self._worker = worker

    def on_frame(self, message: Taken) -> None:
        """Reject a malformed frame (header checks only), else submit it to the worker."""
        received_at = self._accounting.received()
        worker = self._worker()
        if worker is None:  # taken in the same executor wake-up as the deactivation
            self._accounting.settle(Fate.DROPPED, received_at, 'node not active')
            return
        try:
            if isinstance(message, FrameRejected):  # a video packet that gave no frame
                raise message
            if isinstance(message, bytes):
                message = read_frame(message, self._compressed)
            if self._on_read is not None:
                self._on_read(message)
            if isinstance(message, COMPRESSED_FRAMES):
                check_compressed(message, self._settings().max_image_pixels)
            else:
                check_image(message, self._settings().max_image_pixels)
        except KeyframeWait as wait:  # how a video stream starts: counted, not an error
            self._accounting.settle(Fate.DROPPED, received_at, wait.reason)
            return
        except FrameRejected as rejection:
            self._accounting.settle(Fate.REJECTED, received_at, rejection.reason)
            self._log.frame_problem(
                f'rejected a frame on {self._topic}: {rejection} '
                f'({self._accounting.count(Fate.REJECTED)} rejected so far)')
            return
        worker.submit(Frame(message, received_at))


class RgbConversion:
    """A frame as RGB, converted once for all nodes of a shared camera."""

    def __init__(self, settings: Callable[[], InferenceSettings],
                 frame_source: CameraFrames | None) -> None:
        """Convert within `settings()` (max_image_pixels); `frame_source` shares conversions."""
        self._settings = settings
        self._frame_source = frame_source

    def rgb(self, frame: Frame) -> NDArray[np.uint8]:
        """Return the frame as RGB uint8 [H, W, 3]; raises FrameRejected (counted) for bad input."""
        def convert() -> NDArray[np.uint8]:
            max_pixels = self._settings().max_image_pixels
            if isinstance(frame.message, COMPRESSED_FRAMES):
                return compressed_to_rgb(frame.message, max_pixels)
            return image_to_rgb(frame.message, max_pixels)
        if self._frame_source is not None:
            return self._frame_source.rgb(frame.message, convert)
        converted: NDArray[np.uint8] = convert()
        return converted
