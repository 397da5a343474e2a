"""An inference node's overlay image: drawn and published only while enabled and watched."""
from __future__ import annotations

from typing import Callable

import numpy as np
from numpy.typing import NDArray
from rclpy.publisher import Publisher
from sensor_msgs.msg import Image
from std_msgs.msg import Header

from triton_perception.outputs import image_message
from triton_perception.parameters import InferenceSettings


class OverlayGate:
    """Publishes overlays while the `overlay` parameter is on and someone subscribes."""

    def __init__(self, settings: Callable[[], InferenceSettings]) -> None:
        """Publish while `settings()` says `overlay` (true by default)."""
        self._settings = settings
        self.published = 0

    def publish(self, publisher: Publisher[Image], draw: Callable[[], NDArray[np.uint8]],
                header: Header) -> None:
        """
        Draw (a copy of the frame) and publish only while someone subscribes.

        Counted in `published` (/diagnostics: `overlays_published`).
        """
        if self._settings().overlay and publisher.get_subscription_count() > 0:
            publisher.publish(image_message(draw(), header, 'rgb8'))
            self.published += 1
