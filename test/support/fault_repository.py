"""
Small Triton repositories for the fault tests, written into a temporary directory.

Every model is test/support/fault_model.py with a `behaviour` parameter; detection-like models take
the inputs detection_node sends and return DETECTIONS and NUM_DETECTIONS, lane-like ones take
lane_node's and return the lane model's two maps. Nothing here holds weights, so nothing is
committed but text.
"""
from __future__ import annotations

from pathlib import Path
import shutil

MODEL_SOURCE = Path(__file__).resolve().parent / 'fault_model.py'

DETECTION_INPUTS = """input [
  { name: "IMAGE" data_type: TYPE_UINT8 dims: [ -1, -1, 3 ] },
  { name: "SCORE_THRESHOLD" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "IOU_THRESHOLD" data_type: TYPE_FP32 dims: [ 1 ] },
  { name: "MAX_DETECTIONS" data_type: TYPE_INT32 dims: [ 1 ] }
]"""
LANE_INPUTS = """input [
  { name: "IMAGE" data_type: TYPE_UINT8 dims: [ -1, -1, 3 ] }
]"""
LANE_OUTPUTS = """output [
  { name: "LANE_RUNS" data_type: TYPE_INT32 dims: [ -1, 16, 3 ] },
  { name: "LANE_RUN_COUNTS" data_type: TYPE_INT32 dims: [ -1 ] },
  { name: "DRIVABLE_AREA" data_type: TYPE_UINT8 dims: [ -1, -1 ] }
]"""
LANE_BEHAVIOURS = ('lanes_ok', 'lanes_bad_area')


def model_config(name: str, behaviour: str, delay_s: float = 0.0, instances: int = 1) -> str:
    """
    Return the config.pbtxt of the fault model `name`.

    It runs fault_model.py with `behaviour` and `delay_s` in `instances` CPU instances, and
    takes the inputs and returns the outputs of detection_node's or lane_node's model, as
    `behaviour` says.
    """
    if behaviour in LANE_BEHAVIOURS:
        tensors = f'{LANE_INPUTS}\n{LANE_OUTPUTS}'
    else:
        # The model's config tells the truth about its dtype: the node must still refuse it.
        dtype = 'TYPE_FP64' if behaviour == 'bad_dtype' else 'TYPE_FP32'
        tensors = (f'{DETECTION_INPUTS}\noutput [ {{ name: "DETECTIONS" data_type: {dtype} '
                   'dims: [ -1, -1 ] }, { name: "NUM_DETECTIONS" data_type: TYPE_INT32 '
                   'dims: [ 1 ] } ]')
    return (f'name: "{name}"\nbackend: "python"\nmax_batch_size: 0\n{tensors}\n'
            f'parameters {{ key: "behaviour" value {{ string_value: "{behaviour}" }} }}\n'
            f'parameters {{ key: "delay_s" value {{ string_value: "{delay_s:g}" }} }}\n'
            f'instance_group [ {{ count: {instances} kind: KIND_CPU }} ]\n')


def write_repository(root: Path, models: dict[str, str], delay_s: float = 0.0,
                     instances: int = 1) -> Path:
    """`models` maps model name -> behaviour (see fault_model.py); returns `root`."""
    for name, behaviour in models.items():
        version = root / name / '1'
        version.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(MODEL_SOURCE, version / 'model.py')
        (root / name / 'config.pbtxt').write_text(
            model_config(name, behaviour, delay_s, instances), encoding='utf-8')
    return root
