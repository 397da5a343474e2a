"""The public face of bench/offline/: read by type checkers and by faces.lazy_face."""
from triton_perception.bench.offline.camera_health import (
    camera_health_report as camera_health_report,
)
from triton_perception.bench.offline.video_decoding import decoding_report as decoding_report
