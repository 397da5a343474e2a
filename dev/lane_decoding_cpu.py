"""
Measure lane_node's lane decoding CPU per frame: from the two maps (before) and the runs (after).

Runs the served lane graph (model_repository/lane_model/1/model.onnx, `make models`) once per
frame with onnxruntime, then times each decoding alone on the stored outputs, OpenCV on one
thread as in the node processes: .venv/bin/python dev/lane_decoding_cpu.py [--every N]
"""
from __future__ import annotations

import argparse
from pathlib import Path
import time
from typing import Any, Callable

import cv2
import numpy as np
import onnxruntime

from triton_perception.lanes.lane_geometry import postprocess
from triton_perception.lanes.run_decoding import postprocess_runs
from triton_perception.system.paths import shared_directory

ROOT = Path(__file__).resolve().parents[1]
SHARED = shared_directory() / 'data'
OUTPUTS = ['lane_probability', 'drivable_margin', 'lane_runs', 'lane_run_counts',
           'drivable_area']


def frames(every: int) -> list[np.ndarray]:
    """Return the road frames and every `every`-th clip frame, RGB."""
    images = [cv2.imread(str(path)) for path in sorted((SHARED / 'road' / 'bdd').glob('*.jpg'))]
    capture = cv2.VideoCapture(str(SHARED / 'videos' / 'solidWhiteRight.mp4'))
    index = 0
    while True:
        ok, frame = capture.read()
        if not ok:
            break
        if index % every == 0:
            images.append(frame)
        index += 1
    return [cv2.cvtColor(image, cv2.COLOR_BGR2RGB) for image in images]


def cpu_ms(decode: Callable[[tuple[int, int], list[Any]], object],
           served: list[tuple[tuple[int, int], list[Any]]], repeats: int = 20) -> float:
    """Return the best of three: process CPU ms per frame of `decode` over the served outputs."""
    best = float('inf')
    for _ in range(3):
        start = time.process_time()
        for _ in range(repeats):
            for size, outputs in served:
                decode(size, outputs)
        best = min(best, (time.process_time() - start) / (repeats * len(served)) * 1000.0)
    return best


def main() -> None:
    """Print both decodings' CPU per frame."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument('--every', type=int, default=10, help='clip frames: every N-th')
    every = parser.parse_args().every
    cv2.setNumThreads(1)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2
    session = onnxruntime.InferenceSession(
        str(ROOT / 'model_repository' / 'lane_model' / '1' / 'model.onnx'), options,
        providers=['CPUExecutionProvider'])
    served = [(image.shape[:2], session.run(OUTPUTS, {'image': image}))
              for image in frames(every)]
    before = cpu_ms(lambda size, out: postprocess(out[0], out[1], size, 20, 0.1), served)
    after = cpu_ms(lambda size, out: postprocess_runs(out[2], out[3], out[4], out[0].shape[1],
                                                      size, 20, 0.1), served)
    print(f'{len(served)} frames: maps (before) {before:.2f} ms CPU per frame, '
          f'runs (after) {after:.2f} ms')


if __name__ == '__main__':
    main()
