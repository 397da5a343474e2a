"""The public face of frames/: read by type checkers and by faces.lazy_face."""
from triton_perception.frames.accounting import (
    AccountingSnapshot as AccountingSnapshot,
    Fate as Fate,
    FrameAccounting as FrameAccounting,
    FrameRejected as FrameRejected,
    RequestTimes as RequestTimes,
    STAGES as STAGES,
)
from triton_perception.frames.camera_topics import (
    camera_info_sibling as camera_info_sibling,
    transport_remappings as transport_remappings,
)
from triton_perception.frames.diagnostics import (
    camera_status_name as camera_status_name,
    CAMERA_STATUS_PREFIX as CAMERA_STATUS_PREFIX,
    FATES as FATES,
    NodeCounts as NodeCounts,
    NodeStatus as NodeStatus,
    reason_key as reason_key,
    stage_key as stage_key,
    status_name as status_name,
    TIMED_KEY as TIMED_KEY,
)
from triton_perception.frames.frame import (
    COMPRESSED_FRAMES as COMPRESSED_FRAMES,
    Frame as Frame,
    FrameMessage as FrameMessage,
    read_frame as read_frame,
    Taken as Taken,
)
from triton_perception.frames.frame_preprocessing import (
    cropped_top_rows as cropped_top_rows,
    letterbox_geometry as letterbox_geometry,
)
from triton_perception.frames.frame_range import (
    DEFAULT_MAX as DEFAULT_MAX,
    DEFAULT_MIN as DEFAULT_MIN,
    declares_frame_range as declares_frame_range,
    frame_range_of as frame_range_of,
    FrameRange as FrameRange,
    FrameRangeError as FrameRangeError,
    parse_size as parse_size,
    set_frame_range as set_frame_range,
)
from triton_perception.frames.image_conversion import (
    check_compressed as check_compressed,
    check_image as check_image,
    compressed_to_rgb as compressed_to_rgb,
    image_to_rgb as image_to_rgb,
)
from triton_perception.frames.serialized_images import (
    read_compressed_image as read_compressed_image,
    read_image as read_image,
    ReadCompressedImage as ReadCompressedImage,
    ReadImage as ReadImage,
)
from triton_perception.frames.transport_losses import (
    LossSink as LossSink,
    publisher_sequence as publisher_sequence,
    SequenceGapCounter as SequenceGapCounter,
)
from triton_perception.frames.video_bitstream import (
    H264 as H264,
    HEVC as HEVC,
)
from triton_perception.frames.video_decoding import (
    check_decoder as check_decoder,
    KeyframeWait as KeyframeWait,
    PacketDropped as PacketDropped,
    StreamDecoder as StreamDecoder,
    VideoDecoder as VideoDecoder,
    VideoDecoderError as VideoDecoderError,
    VideoPacket as VideoPacket,
    WAITING_FOR_KEYFRAME as WAITING_FOR_KEYFRAME,
)
from triton_perception.frames.video_queue import (
    DECODER_STOPPED as DECODER_STOPPED,
    DecodingQueue as DecodingQueue,
    QUEUE_FULL as QUEUE_FULL,
)
from triton_perception.frames.video_routes import (
    open_video_decoder as open_video_decoder,
)
from triton_perception.frames.video_encoding import (
    DEFAULT_GOP as DEFAULT_GOP,
    EncodedPacket as EncodedPacket,
    PACKET_ENCODINGS as PACKET_ENCODINGS,
    VIDEO_FORMATS as VIDEO_FORMATS,
    VideoEncoder as VideoEncoder,
)
