"""
The numeric libraries of the target's apt, by Ubuntu release (JetPack 6 is Jammy).

Jammy: python3-numpy 1:1.21.5, python3-scipy 1.8.0, python3-opencv 4.5.4; Noble: 1.26.4,
1.11.4. `pypi` gives the PyPI release with the same library code for a test environment
(opencv-python-headless numbers its builds after OpenCV's version).
"""
from __future__ import annotations

APT_NUMERICS = {
    'jammy': {'numpy': '1.21.5', 'scipy': '1.8.0'},
    'noble': {'numpy': '1.26.4', 'scipy': '1.11.4'},
}
JAMMY_PYTHON = '3.10'
# onnxruntime: the oldest release rosdep/constraints.txt allows (graphs/onnx_target.py).
JAMMY_PYPI = {'numpy': '1.21.5', 'scipy': '1.8.0', 'opencv-python-headless': '4.5.4.60',
              'onnxruntime': '1.12.1'}
