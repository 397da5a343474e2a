"""
Which route decodes a video camera: FFmpeg in this process (PyAV) or a GStreamer element.

`video_decoder` '' or an FFmpeg decoder name takes PyAV (video_decoding.VideoDecoder);
`gst:ELEMENT` a GStreamer pipeline in a child process (video_gstreamer.GstreamerDecoder), the
route to the Jetson's hardware decoder (`gst:nvv4l2decoder`). Both keep the same accounting.
"""
from __future__ import annotations

from triton_perception.frames.video_decoding import (GST_PREFIX, StreamDecoder, UNLIMITED,
                                                     VideoDecoder)


def open_video_decoder(name: str = '', max_pixels: int = UNLIMITED) -> StreamDecoder:
    """
    Return the decoder `video_decoder` names ('' = FFmpeg's h264 or hevc by the codec).

    It refuses streams whose SPS declares more than `max_pixels` (0: no limit) as too_large.
    Raises VideoDecoderError, in one line with what to use instead, when it cannot run here.
    """
    if name.startswith(GST_PREFIX):
        # Imported here: a node of the PyAV route loads nothing of the GStreamer one.
        from triton_perception.frames.video_gstreamer import GstreamerDecoder
        return GstreamerDecoder(name, max_pixels)
    return VideoDecoder(name, max_pixels)
