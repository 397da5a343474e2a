"""The public face of health/: read by type checkers and by faces.lazy_face."""
from triton_perception.health.camera_checks import (
    CameraHealth as CameraHealth,
    CONDITIONS as CONDITIONS,
    HealthReport as HealthReport,
)
from triton_perception.health.degradation import (
    degradations as degradations,
    FRAME_RATE_HZ as FRAME_RATE_HZ,
    noisy as noisy,
    run_trial as run_trial,
    run_trials as run_trials,
    Trial as Trial,
    video_frames as video_frames,
)
from triton_perception.health.frame_statistics import (
    figures_from_statistics as figures_from_statistics,
    GRAPH_OPTIONS as GRAPH_OPTIONS,
    STATISTICS as STATISTICS,
)
from triton_perception.health.hold import (
    ERROR as ERROR,
    HeldLevel as HeldLevel,
    LEVEL_NAMES as LEVEL_NAMES,
    OK as OK,
    WARN as WARN,
)
from triton_perception.health.image_figures import (
    frame_figures as frame_figures,
    FrameFigures as FrameFigures,
    small_grey as small_grey,
)
