"""
Node parameters: the table of every parameter and each node's settings typed from it.

Owns: what a parameter is and how a value is validated (specs), the tables of every node's
parameters (tables), and each node's settings as a frozen dataclass (node_settings). Launch
files and docs read the tables without ROS, numpy or scipy.
Imports: nothing of the package.
"""
from triton_perception.parameters.node_settings import (DetectionSettings, GroundSettings,
                                                        HealthSettings, InferenceSettings,
                                                        LaneSettings,
                                                        NodeSettings, OverlaySettings,
                                                        SettingsT, TrackingSettings)
from triton_perception.parameters.specs import (choice, flag, number, ParameterError,
                                                ParameterSpec, ParameterValue, ParameterValues,
                                                specs_by_name, text, validate_all)
from triton_perception.parameters.tables import (COMMON, DETECTION, GROUND, HEALTH, LANES,
                                                 OVERLAY, parse_class_filter, TRACKING)

__all__ = ['COMMON', 'DETECTION', 'GROUND', 'HEALTH', 'LANES', 'OVERLAY', 'TRACKING',
           'DetectionSettings', 'GroundSettings', 'HealthSettings', 'InferenceSettings',
           'LaneSettings', 'NodeSettings', 'OverlaySettings', 'ParameterError', 'ParameterSpec',
           'ParameterValue', 'ParameterValues', 'SettingsT', 'TrackingSettings', 'choice', 'flag',
           'number', 'parse_class_filter', 'specs_by_name', 'text', 'validate_all']
