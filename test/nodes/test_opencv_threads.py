"""Node processes run OpenCV on the calling thread, unless OPENCV_FOR_THREADS_NUM says otherwise."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

PROBE = ('import cv2\n'
         'from triton_perception.nodes.node_process import single_threaded_opencv\n'
         'single_threaded_opencv()\n'
         'print(cv2.getNumThreads())\n')


def opencv_threads(setting: str | None) -> int:
    """Return OpenCV's thread count in a fresh process after the node processes' set-up."""
    environment = {name: value for name, value in os.environ.items()
                   if name != 'OPENCV_FOR_THREADS_NUM'}
    if setting is not None:
        environment['OPENCV_FOR_THREADS_NUM'] = setting
    result = subprocess.run([sys.executable, '-c', PROBE], env=environment, capture_output=True,
                            text=True, timeout=60, check=True)
    return int(result.stdout.strip())


@pytest.mark.parametrize(('setting', 'threads'), [(None, 1), ('2', 2)])
def test_opencv_runs_on_the_calling_thread_unless_told(setting: str | None, threads: int) -> None:
    """One thread by default; the user's OPENCV_FOR_THREADS_NUM is left as it is."""
    assert opencv_threads(setting) == threads
