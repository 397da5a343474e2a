"""The public face of models/: read by type checkers and by faces.lazy_face."""
from triton_perception.models.detectors import (
    DetectorInstallError as DetectorInstallError,
    install_detector as install_detector,
    installed_detectors as installed_detectors,
    labels_for as labels_for,
)
from triton_perception.models.health_model import HEALTH_GRAPH_FILE as HEALTH_GRAPH_FILE
from triton_perception.models.lane_model_install import (
    install_lane_model as install_lane_model,
    install_served_lane_model as install_served_lane_model,
    remove_steps as remove_steps,
)
from triton_perception.models.shipped_models import (
    check_models as check_models,
    default_models_directory as default_models_directory,
    ExportChecks as ExportChecks,
    install_models as install_models,
    ModelInstallError as ModelInstallError,
)
