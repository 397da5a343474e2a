"""
What the model repository holds and how it gets there.

Owns: installing and checking the shipped models (shipped_models), your own detectors
(detectors) and your own lane models (lane_model_install).
Imports: `frames/`, `graphs/`, `lanes/`, `outputs/`, `serving/`, `system/`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from triton_perception.system.faces import lazy_face

if TYPE_CHECKING:
    from triton_perception.models.detectors import (DetectorInstallError, install_detector,
                                                    installed_detectors, labels_for)
    from triton_perception.models.lane_model_install import (install_lane_model,
                                                             install_served_lane_model,
                                                             remove_steps)
    from triton_perception.models.shipped_models import (check_models, default_models_directory,
                                                         ExportChecks, install_models,
                                                         ModelInstallError)

__all__ = ['check_models', 'default_models_directory', 'DetectorInstallError', 'ExportChecks',
           'install_detector', 'install_lane_model', 'install_models', 'install_served_lane_model',
           'installed_detectors', 'labels_for', 'ModelInstallError', 'remove_steps']
__getattr__ = lazy_face(__name__, {
    'detectors': ('DetectorInstallError', 'install_detector', 'installed_detectors', 'labels_for'),
    'lane_model_install': ('install_lane_model', 'install_served_lane_model', 'remove_steps'),
    'shipped_models': ('check_models', 'default_models_directory', 'ExportChecks',
                       'install_models', 'ModelInstallError'),
})
