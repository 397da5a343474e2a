"""The public face of lanes/: read by type checkers and by faces.lazy_face."""
from triton_perception.lanes.lane_geometry import (
    NUM_POINTS as NUM_POINTS,
    postprocess as postprocess,
)
from triton_perception.lanes.lane_runs import (
    dropped_runs as dropped_runs,
    postprocess_runs as postprocess_runs,
)
from triton_perception.lanes.lane_models import *
