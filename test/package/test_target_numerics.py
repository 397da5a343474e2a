"""
The package's numerics give the same results with the target's Python, NumPy, SciPy and OpenCV.

JetPack 6 runs the nodes on Ubuntu 22.04's Python 3.10 with apt's NumPy 1.21.5, SciPy 1.8.0
and OpenCV 4.5.4; this machine runs newer releases. This test builds a Python 3.10 environment
with those releases from PyPI (out/target-python, once; about 100 MB on the first run), runs
test/support/target_numerics.py there and here, and compares: lane geometry, tracking, the
assignment, every encoding's conversion and YOLOv5's letterbox. A call the old releases lack
fails there; a result that differs fails the comparison.
"""
from __future__ import annotations

import json
import math
import os
from pathlib import Path
import subprocess
import sys
from typing import Any

import pytest

from support.checkout import REPO
from support.target_venv import target_environment
from support.target_versions import JAMMY_PYPI, JAMMY_PYTHON

pytestmark = [pytest.mark.target, pytest.mark.slow]

SCRIPT = REPO / 'test' / 'support' / 'target_numerics.py'
RELATIVE_TOLERANCE = 1e-6  # a fused multiply-add or a different BLAS may move the last bits
ABSOLUTE_TOLERANCE = 1e-6


def numerics(python: Path | str, output: Path) -> dict[str, Any]:
    """Run target_numerics.py with `python` (the package from this checkout) and read it."""
    environment = {**os.environ, 'PYTHONPATH': str(REPO)}
    result = subprocess.run([str(python), str(SCRIPT), str(output)], env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    values: dict[str, Any] = json.loads(output.read_text(encoding='utf-8'))
    return values


def differences(target: Any, here: Any, path: str = '') -> list[str]:
    """Where two results differ: numbers beyond the tolerances, anything else at all."""
    if isinstance(target, dict) and isinstance(here, dict):
        if target.keys() != here.keys():
            return [f'{path}: keys {sorted(target)} against {sorted(here)}']
        return [found for key in target
                for found in differences(target[key], here[key], f'{path}.{key}')]
    if isinstance(target, list) and isinstance(here, list):
        if len(target) != len(here):
            return [f'{path}: {len(target)} items against {len(here)}']
        return [found for index, (a, b) in enumerate(zip(target, here))
                for found in differences(a, b, f'{path}[{index}]')]
    if isinstance(target, float) or isinstance(here, float):
        if math.isclose(target, here, rel_tol=RELATIVE_TOLERANCE, abs_tol=ABSOLUTE_TOLERANCE):
            return []
    elif target == here:
        return []
    return [f'{path}: {target!r} on the target, {here!r} here']


def test_differences_finds_what_differs() -> None:
    """Numbers within round-off agree; a count, an id or a real difference does not."""
    assert differences({'a': [1.0, 'x']}, {'a': [1.0 + 1e-9, 'x']}) == []
    assert differences({'a': [1, 'x']}, {'a': [2, 'x']}) == ['.a[0]: 1 on the target, 2 here']
    assert differences([0.5], [0.6]) == ['[0]: 0.5 on the target, 0.6 here']
    assert differences({'a': []}, {'a': [1]}) == ['.a: 0 items against 1']


def test_numerics_agree_with_the_targets_releases(tmp_path: Path) -> None:
    """The same lanes, tracks, conversions and letterboxes with Jammy's releases as here."""
    target = numerics(target_environment(), tmp_path / 'target.json')
    here = numerics(sys.executable, tmp_path / 'here.json')
    assert target['versions']['python'].startswith(f'{JAMMY_PYTHON}.')
    assert target['versions']['numpy'] == JAMMY_PYPI['numpy']
    assert target['versions']['opencv'] == JAMMY_PYPI['opencv-python-headless'].rsplit('.', 1)[0]
    assert len(target['lanes']) == 3 and all(len(case['lanes']) == 2 for case in target['lanes'])
    found = differences({key: value for key, value in target.items() if key != 'versions'},
                        {key: value for key, value in here.items() if key != 'versions'})
    assert found == [], '\n'.join(found[:20])
