"""The public face of models/: read by type checkers and by faces.lazy_face."""
from triton_perception.models.detectors import (
    DetectorInstallError as DetectorInstallError,
    install_detector as install_detector,
    installed_detectors as installed_detectors,
    labels_for as labels_for,
)
from triton_perception.models.health_model import HEALTH_GRAPH_FILE as HEALTH_GRAPH_FILE
from triton_perception.models.int8_carry import (
    carried_candidates as carried_candidates,
    write_carried as write_carried,
)
from triton_perception.models.int8_sensitivity import (
    CALIBRATION_METHODS as CALIBRATION_METHODS,
    Int8Options as Int8Options,
    KeepFloatError as KeepFloatError,
    parse_keep_float as parse_keep_float,
)
from triton_perception.models.lane_model_install import (
    install_lane_model as install_lane_model,
    install_served_lane_model as install_served_lane_model,
    remove_steps as remove_steps,
)
from triton_perception.models.quantization import (
    Calibration as Calibration,
    candidate_repository as candidate_repository,
    Candidate as Candidate,
    DEFAULT_FRAMES as DEFAULT_FRAMES,
    install_quantized as install_quantized,
    INT8_GRAPH as INT8_GRAPH,
    int8_record as int8_record,
    quantize_models as quantize_models,
    QUANTIZED_STEPS as QUANTIZED_STEPS,
    TENSORRT_GRAPH as TENSORRT_GRAPH,
)
from triton_perception.models.shipped_models import (
    check_models as check_models,
    default_models_directory as default_models_directory,
    ExportChecks as ExportChecks,
    install_models as install_models,
    ModelInstallError as ModelInstallError,
)
