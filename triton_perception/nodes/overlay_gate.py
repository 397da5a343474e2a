"""What only a viewer reads, built and published only while watched: overlays, annotations."""
from __future__ import annotations

import threading
from typing import Callable, TypeVar

import numpy as np
from numpy.typing import NDArray
from rclpy.publisher import Publisher
from sensor_msgs.msg import Image
from std_msgs.msg import Header

from triton_perception.outputs import image_cdr
from triton_perception.parameters import InferenceSettings, LiveSettings

MessageT = TypeVar('MessageT')


class OverlayGate:
    """Publishes overlays while the `overlay` parameter is on and someone subscribes."""

    def __init__(self, settings: LiveSettings[InferenceSettings]) -> None:
        """Publish while `settings()` says `overlay` (true by default)."""
        self._settings = settings
        self.published = 0
        self.annotations_published = 0
        self._lock = threading.Lock()  # request threads publish at the same time

    def publish(self, publisher: Publisher[Image], draw: Callable[[], NDArray[np.uint8]],
                header: Header) -> None:
        """
        Draw (a copy of the frame) and publish only while someone subscribes.

        Counted in `published` (/diagnostics: `overlays_published`).
        """
        if self._settings().overlay and publisher.get_subscription_count() > 0:
            publisher.publish(image_cdr(draw(), header, 'rgb8'))
            with self._lock:
                self.published += 1

    def publish_annotations(self, publisher: Publisher[MessageT],
                            build: Callable[[], MessageT]) -> None:
        """
        Build and publish a viewer's annotations only while someone subscribes.

        Not tied to the `overlay` parameter: nobody watching, nothing built. Counted in
        `annotations_published` (/diagnostics: `annotations_published`).
        """
        if publisher.get_subscription_count() > 0:
            publisher.publish(build())
            with self._lock:
                self.annotations_published += 1
