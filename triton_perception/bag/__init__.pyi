"""The public face of bag/: read by type checkers and by faces.lazy_face."""
from triton_perception.bag.bag_format import (
    BagError as BagError,
    CAMERA_TYPES as CAMERA_TYPES,
    COMPRESSED_IMAGE_TYPE as COMPRESSED_IMAGE_TYPE,
    DEFAULT_TOPIC as DEFAULT_TOPIC,
    ENCODINGS as ENCODINGS,
    IMAGE_TYPE as IMAGE_TYPE,
    typestore as typestore,
    VIDEO_TYPES as VIDEO_TYPES,
)
from triton_perception.bag.frame_export import (
    export_frames as export_frames,
    ExportSummary as ExportSummary,
)
from triton_perception.bag.make import make_bag as make_bag
from triton_perception.bag.play import (
    Lockstep as Lockstep,
    play_bag as play_bag,
)
from triton_perception.bag.reading import (
    camera_typestore as camera_typestore,
    frames_before_keyframe as frames_before_keyframe,
    read_images as read_images,
    video_packet as video_packet,
)
from triton_perception.bag.record import BagRecorder as BagRecorder
