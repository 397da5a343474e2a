"""
The package's pure numerics on fixed inputs, written as JSON: run by two interpreters, compared.

test_target_numerics.py runs this file with the development environment and with Python 3.10,
NumPy 1.21.5, SciPy 1.8.0 and OpenCV 4.5.4 (Ubuntu 22.04's, so JetPack 6's), and compares
the results. Only NumPy, SciPy, OpenCV and the package's ROS-free modules are imported, since
the target's versions come without ROS here.

Usage: python target_numerics.py OUTPUT.json
"""
from __future__ import annotations

import json
from pathlib import Path
import struct
import sys
from types import SimpleNamespace
from typing import Any

import cv2
import numpy as np

from triton_perception.frames.frame_preprocessing import letterbox_geometry
from triton_perception.frames.image_conversion import encode_rgb, image_to_rgb
from triton_perception.frames.serialized_images import (read_compressed_image, read_image,
                                                        UnreadableMessage)
from triton_perception.lanes.lane_geometry import postprocess
from triton_perception.tracking.association import match
from triton_perception.tracking.tracker import Tracker

MAP_SHAPE = (360, 640)
ENCODINGS = ('rgb8', 'bgr8', 'rgba8', 'bgra8', 'mono8', 'uyvy', 'yuv422_yuy2', 'bayer_rggb8',
             'bayer_bggr8', 'bayer_gbrg8', 'bayer_grbg8')


def road_maps(curve: float, dashed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Lane probability and drivable margin maps of two lines, one of them maybe dashed."""
    probability = np.zeros(MAP_SHAPE, np.uint8)
    rows = np.arange(150, 360)
    for base, sign in ((170.0, 1.0), (470.0, -1.0)):
        xs = base + sign * 0.9 * (rows - 150) * -1.0 + curve * ((rows - 150) / 210.0) ** 2 * 60
        points = np.stack([xs, rows], axis=1).round().astype(np.int32)
        if dashed and sign > 0:
            for start in range(0, len(points) - 1, 40):
                cv2.polylines(probability, [points[start:start + 24]], False, 230, 5)
        else:
            cv2.polylines(probability, [points], False, 200, 6)
    margin = np.full(MAP_SHAPE, 64, np.uint8)
    cv2.fillPoly(margin, [np.array([[200, 360], [440, 360], [330, 150], [310, 150]],
                                   np.int32)], 192)
    return probability, cv2.GaussianBlur(margin, (9, 9), 3)


def lanes() -> list[dict[str, Any]]:
    """Lanes, scores, sides and the drivable area's size for straight, curved and dashed maps."""
    results = []
    for curve, dashed in ((0.0, False), (1.0, True), (-1.5, False)):
        probability, margin = road_maps(curve, dashed)
        result = postprocess(probability, margin, (540, 960), 20, 0.1)
        results.append({'lanes': result.lanes.tolist(), 'scores': result.scores.tolist(),
                        'sides': result.sides.tolist(),
                        'drivable_pixels': int(np.count_nonzero(result.drivable_area))})
    return results


def tracks() -> list[dict[str, Any]]:
    """Track ids and velocities of boxes that move, cross, vanish and reappear."""
    random = np.random.RandomState(7)
    tracker = Tracker()
    frames = []
    for step in range(60):
        boxes = []
        for index in range(6):
            if (step + 7 * index) % 23 < 3:
                continue  # missed for a few frames
            x = 50.0 + 80 * index + (4.0 if index % 2 else -3.0) * step
            y = 100.0 + 10 * index + 0.5 * step
            size = 40.0 + 5 * index
            noise = random.normal(0.0, 1.5, 4)
            score = 0.3 + 0.1 * (index % 6)
            boxes.append([x + noise[0], y + noise[1], x + size + noise[2], y + size + noise[3],
                          score, index % 3])
        tracked = tracker.update(step / 30.0, np.array(boxes, np.float32).reshape(-1, 6))
        frames.append({'ids': tracked.ids, 'confirmed': tracked.confirmed.tolist(),
                       'velocities': np.nan_to_num(tracked.velocities, nan=-1.0).tolist()})
    return frames


def assignment() -> dict[str, Any]:
    """Assign a crowded similarity matrix, where the solver must choose."""
    similarity = np.random.RandomState(3).uniform(0.0, 1.0, (7, 9))
    pairs, free_rows, free_columns = match(similarity, 0.3)
    return {'pairs': pairs.tolist(), 'free_rows': free_rows.tolist(),
            'free_columns': free_columns.tolist()}


def conversions() -> dict[str, Any]:
    """Each encoding's RGB after a round trip, as per-channel sums and a coarse thumbnail."""
    yy, xx = np.mgrid[0:48, 0:64]
    rgb = np.stack([xx * 4, yy * 5, (xx + yy) * 2], axis=2).astype(np.uint8)
    results = {}
    for encoding in ENCODINGS:
        data, step = encode_rgb(rgb, encoding)
        message = SimpleNamespace(height=48, width=64, encoding=encoding, step=step, data=data)
        converted = image_to_rgb(message, 10 ** 6)
        results[encoding] = {
            'sum': converted.reshape(-1, 3).sum(axis=0).tolist(),
            'thumbnail': cv2.resize(converted, (8, 6), interpolation=cv2.INTER_AREA).tolist()}
    return results


def _cdr(*fields: tuple[str, Any]) -> bytes:
    """Little-endian CDR of `fields`: (struct format, number), ('s', text) or ('b', bytes)."""
    body = bytearray()
    for kind, value in fields:
        if kind in ('s', 'b'):
            raw = value.encode() + b'\0' if kind == 's' else value
            body += bytes(-len(body) % 4) + struct.pack('<I', len(raw)) + raw
        else:
            body += bytes(-len(body) % struct.calcsize(kind)) + struct.pack('<' + kind, value)
    return b'\x00\x01\x00\x00' + bytes(body)


def serialized() -> dict[str, Any]:
    """Read and convert serialized Images, read a CompressedImage, refuse damaged ones."""
    yy, xx = np.mgrid[0:6, 0:10]
    rgb = np.stack([xx * 20, yy * 30, (xx + yy) * 9], axis=2).astype(np.uint8)
    results: dict[str, Any] = {}
    for frame_id, encoding in zip(('', 'c', 'cam', 'front'), ('rgb8', 'bgr8', 'uyvy', 'mono8')):
        data, step = encode_rgb(rgb, encoding)
        raw = _cdr(('i', -5), ('I', 7), ('s', frame_id), ('I', 6), ('I', 10), ('s', encoding),
                   ('B', 0), ('I', step), ('b', data))
        image = read_image(raw)
        results[encoding] = {'header': [image.header.stamp.sec, image.header.stamp.nanosec,
                                        image.header.frame_id],
                             'rgb': image_to_rgb(image, 10 ** 6).reshape(-1, 3).sum(0).tolist()}
        try:
            read_image(raw[:-1])
        except UnreadableMessage as refusal:
            results[encoding]['cut'] = refusal.reason
    compressed = read_compressed_image(_cdr(('i', 1), ('I', 2), ('s', 'cam'), ('s', 'jpeg'),
                                            ('b', b'\xff\xd8\xff')))
    results['compressed'] = [compressed.format, compressed.data.tolist()]
    return results


def letterboxes() -> list[list[int]]:
    """YOLOv5's letterbox of common frame sizes into 640x640."""
    return [list(letterbox_geometry(width, height, 640, 640))
            for width, height in ((960, 540), (1280, 720), (640, 480), (1920, 1080), (333, 777))]


def main() -> None:
    """Write every result, and the versions that made them, to the file named first."""
    results = {'versions': {'python': sys.version.split()[0], 'numpy': np.__version__,
                            'opencv': cv2.__version__},
               'lanes': lanes(), 'tracks': tracks(), 'assignment': assignment(),
               'conversions': conversions(), 'letterboxes': letterboxes(),
               'serialized': serialized()}
    Path(sys.argv[1]).write_text(json.dumps(results), encoding='utf-8')


if __name__ == '__main__':
    main()
