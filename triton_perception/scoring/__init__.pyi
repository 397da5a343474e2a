"""The public face of scoring/: read by type checkers and by faces.lazy_face."""
from triton_perception.scoring.scoring_time import scoring_benchmark as scoring_benchmark
from triton_perception.scoring.detection import (
    DetectionFigures as DetectionFigures,
    fraction as fraction,
    score_detections as score_detections,
)
from triton_perception.scoring.exported_frames import FRAMES_FILE as FRAMES_FILE
from triton_perception.scoring.label_sets import Labels as Labels
from triton_perception.scoring.labels import (
    DetectionLabels as DetectionLabels,
    LabelError as LabelError,
    LaneLabels as LaneLabels,
    read_label_sets as read_label_sets,
    read_labels as read_labels,
    resolve_frames as resolve_frames,
    TrackLabels as TrackLabels,
)
from triton_perception.scoring.lanes import (
    culane_lane_width as culane_lane_width,
    culane_pairs as culane_pairs,
    CulaneFigures as CulaneFigures,
    f1_of as f1_of,
    score_culane as score_culane,
    score_tusimple as score_tusimple,
    TusimpleFigures as TusimpleFigures,
)
from triton_perception.scoring.tracking import (
    score_tracks as score_tracks,
    TrackingFigures as TrackingFigures,
)
