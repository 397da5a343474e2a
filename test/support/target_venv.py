"""
The target's Python: a Python 3.10 environment with JetPack 6's numeric releases.

The environment (out/target-python) is built from PyPI with target_versions' releases on first
use (about 100 MB), and again when they change; a machine without Python 3.10 skips the tests
that need it. LOAD_ALL is a script for it that loads ONNX graphs in its onnxruntime.
"""
from __future__ import annotations

import glob
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

from support.checkout import REPO
from support.target_versions import JAMMY_PYPI, JAMMY_PYTHON

ENVIRONMENT = REPO / 'out' / 'target-python'
# `python -c LOAD_ALL PATHS_JSON` prints onnxruntime's version and the graphs that fail to load.
LOAD_ALL = """
import json, sys
import onnxruntime
failed = {}
for path in json.loads(sys.argv[1]):
    try:
        onnxruntime.InferenceSession(path, providers=['CPUExecutionProvider'])
    except Exception as error:
        failed[path] = str(error).splitlines()[0]
print(json.dumps({'version': onnxruntime.__version__, 'failed': failed}))
"""


def target_python() -> str | None:
    """Return a Python 3.10 interpreter of this machine, or None."""
    candidates = [shutil.which(f'python{JAMMY_PYTHON}'), f'/usr/bin/python{JAMMY_PYTHON}',
                  *sorted(glob.glob(os.path.expanduser(
                      f'~/.pyenv/versions/{JAMMY_PYTHON}.*/bin/python{JAMMY_PYTHON}')))]
    for candidate in candidates:
        if not candidate or not Path(candidate).exists():
            continue
        probe = subprocess.run([candidate, '-c', 'import sys, venv; print(sys.version_info[:2])'],
                               capture_output=True, text=True, timeout=60)
        if probe.returncode == 0 and probe.stdout.strip() == str(
                tuple(int(part) for part in JAMMY_PYTHON.split('.'))):
            return candidate
    return None


def target_environment() -> Path:
    """Return the Python of the target's environment, building it on first use."""
    python = ENVIRONMENT / 'bin' / 'python'
    stamp = ENVIRONMENT / 'versions.json'
    wanted = json.dumps(JAMMY_PYPI, sort_keys=True)
    if python.exists() and stamp.exists() and stamp.read_text(encoding='utf-8') == wanted:
        return python
    interpreter = target_python()
    if interpreter is None:
        pytest.skip(f'no Python {JAMMY_PYTHON} on this machine (install python{JAMMY_PYTHON} '
                    'or put it on PATH) to check the target numerics')
    shutil.rmtree(ENVIRONMENT, ignore_errors=True)
    print(f'target numerics: building {ENVIRONMENT} with Python {JAMMY_PYTHON} and '
          f'{", ".join(f"{name} {version}" for name, version in JAMMY_PYPI.items())}',
          file=sys.stderr)
    # This interpreter's pip installs into the environment (pip's --python): the environment
    # needs no pip of its own, which `venv` would install and byte-compile first. --no-compile:
    # byte-compiling every module of SciPy and NumPy up front takes longer than the install;
    # the few the tests import are compiled when imported.
    subprocess.run([interpreter, '-m', 'venv', '--without-pip', str(ENVIRONMENT)], check=True,
                   timeout=300)
    subprocess.run([sys.executable, '-m', 'pip', '--python', str(python), 'install', '--quiet',
                    '--disable-pip-version-check', '--no-compile',
                    *(f'{name}=={version}' for name, version in JAMMY_PYPI.items())],
                   check=True, timeout=900)
    stamp.write_text(wanted, encoding='utf-8')
    return python
