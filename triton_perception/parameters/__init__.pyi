"""The public face of parameters/: read by type checkers and by faces.lazy_face."""
from triton_perception.parameters.node_settings import (
    DetectionSettings as DetectionSettings,
    GroundSettings as GroundSettings,
    HealthSettings as HealthSettings,
    InferenceSettings as InferenceSettings,
    LiveSettings as LiveSettings,
    LaneSettings as LaneSettings,
    NodeSettings as NodeSettings,
    OverlaySettings as OverlaySettings,
    SettingsT as SettingsT,
    TrackingSettings as TrackingSettings,
)
from triton_perception.parameters.specs import (
    choice as choice,
    flag as flag,
    number as number,
    ParameterError as ParameterError,
    ParameterSpec as ParameterSpec,
    ParameterValue as ParameterValue,
    ParameterValues as ParameterValues,
    specs_by_name as specs_by_name,
    text as text,
    validate_all as validate_all,
)
from triton_perception.parameters.tables import (
    COMMON as COMMON,
    DETECTION as DETECTION,
    GROUND as GROUND,
    HEALTH as HEALTH,
    LANES as LANES,
    OVERLAY as OVERLAY,
    parse_class_filter as parse_class_filter,
    TRACKING as TRACKING,
)
from triton_perception.parameters.transports import (
    argument_description as argument_description,
    COMPRESSED as COMPRESSED,
    Decoding as Decoding,
    FFMPEG as FFMPEG,
    FOXGLOVE as FOXGLOVE,
    IMAGE_TRANSPORTS as IMAGE_TRANSPORTS,
    RAW as RAW,
    Transport as Transport,
    transport_named as transport_named,
    TRANSPORTS as TRANSPORTS,
    VIDEO_CODECS as VIDEO_CODECS,
    VIDEO_TRANSPORTS as VIDEO_TRANSPORTS,
)
