"""
What happens to a camera frame before it reaches Triton, and what became of each frame.

Owns: Image/CompressedImage -> RGB conversion (image_conversion), reading them serialized
(serialized_images), H.264/H.265 packets -> RGB (video_decoding; what a packet holds:
video_bitstream) and RGB -> packets (video_encoding), a received frame (frame), the reference
letterbox (frame_preprocessing), the served frame-size range (frame_range), per-frame fate and its
/diagnostics form (accounting, diagnostics) and DDS losses (transport_losses). No rclpy.
Imports: nothing of the package.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.frames.accounting import (AccountingSnapshot, Fate, FrameAccounting,
                                                     FrameRejected, RequestTimes, STAGES)
    from triton_perception.frames.camera_topics import camera_info_sibling, transport_remappings
    from triton_perception.frames.diagnostics import (camera_status_name, CAMERA_STATUS_PREFIX,
                                                      FATES, NodeCounts, NodeStatus, reason_key,
                                                      stage_key, status_name, TIMED_KEY)
    from triton_perception.frames.frame import Frame
    from triton_perception.frames.frame_preprocessing import cropped_top_rows, letterbox_geometry
    from triton_perception.frames.frame_range import (DEFAULT_MAX, DEFAULT_MIN, frame_range_of,
                                                      FrameRange, FrameRangeError, parse_size,
                                                      set_frame_range)
    from triton_perception.frames.image_conversion import (check_compressed, check_image,
                                                           compressed_to_rgb, image_to_rgb)
    from triton_perception.frames.serialized_images import (read_compressed_image, read_image,
                                                            ReadCompressedImage, ReadImage)
    from triton_perception.frames.transport_losses import publisher_sequence, SequenceGapCounter
    from triton_perception.frames.video_bitstream import H264, HEVC
    from triton_perception.frames.video_decoding import (check_decoder, KeyframeWait,
                                                         VideoDecoder, VideoDecoderError,
                                                         VideoPacket, WAITING_FOR_KEYFRAME)
    from triton_perception.frames.video_encoding import (DEFAULT_GOP, EncodedPacket,
                                                         PACKET_ENCODINGS, VIDEO_FORMATS,
                                                         VideoEncoder)

__all__ = ['AccountingSnapshot', 'camera_info_sibling', 'camera_status_name',
           'CAMERA_STATUS_PREFIX', 'check_compressed', 'check_decoder', 'check_image',
           'compressed_to_rgb', 'cropped_top_rows', 'DEFAULT_GOP', 'DEFAULT_MAX', 'DEFAULT_MIN',
           'EncodedPacket', 'Fate', 'FATES', 'Frame', 'frame_range_of', 'FrameAccounting',
           'FrameRange', 'FrameRangeError', 'FrameRejected', 'H264', 'HEVC', 'image_to_rgb',
           'KeyframeWait', 'letterbox_geometry', 'NodeCounts', 'NodeStatus', 'PACKET_ENCODINGS',
           'parse_size', 'publisher_sequence', 'read_compressed_image', 'read_image',
           'ReadCompressedImage', 'ReadImage', 'reason_key', 'RequestTimes', 'SequenceGapCounter',
           'set_frame_range', 'stage_key', 'STAGES', 'status_name', 'TIMED_KEY',
           'transport_remappings', 'VIDEO_FORMATS', 'VideoDecoder', 'VideoDecoderError',
           'VideoEncoder', 'VideoPacket', 'WAITING_FOR_KEYFRAME']
__getattr__ = lazy_face(__name__, {
    'accounting': ('AccountingSnapshot', 'Fate', 'FrameAccounting', 'FrameRejected',
                   'RequestTimes', 'STAGES'),
    'camera_topics': ('camera_info_sibling', 'transport_remappings'),
    'diagnostics': ('camera_status_name', 'CAMERA_STATUS_PREFIX', 'FATES', 'NodeCounts',
                    'NodeStatus', 'reason_key', 'stage_key', 'status_name', 'TIMED_KEY'),
    'frame': ('Frame',),
    'frame_preprocessing': ('cropped_top_rows', 'letterbox_geometry'),
    'frame_range': ('DEFAULT_MAX', 'DEFAULT_MIN', 'frame_range_of', 'FrameRange',
                    'FrameRangeError', 'parse_size', 'set_frame_range'),
    'image_conversion': ('check_compressed', 'check_image', 'compressed_to_rgb', 'image_to_rgb'),
    'serialized_images': ('read_compressed_image', 'read_image', 'ReadCompressedImage',
                          'ReadImage'),
    'transport_losses': ('publisher_sequence', 'SequenceGapCounter'),
    'video_bitstream': ('H264', 'HEVC'),
    'video_encoding': ('DEFAULT_GOP', 'EncodedPacket', 'PACKET_ENCODINGS', 'VIDEO_FORMATS',
                       'VideoEncoder'),
    'video_decoding': ('check_decoder', 'KeyframeWait', 'VideoDecoder', 'VideoDecoderError',
                       'VideoPacket', 'WAITING_FOR_KEYFRAME'),
})
