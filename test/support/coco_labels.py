"""Car tracks in MOT's gt.txt as the COCO detection labels of a drive, its frames named by stamp."""
from __future__ import annotations

from pathlib import Path
from typing import Any


def coco_from_mot(gt: Path, stamps: list[int]) -> dict[str, Any]:
    """Return the cars of gt.txt as COCO boxes of the frames named by their stamps."""
    images, annotations = [], []
    for line in gt.read_text().splitlines():
        frame, _track, left, top, width, height = (float(value) for value in line.split(',')[:6])
        stamp = stamps[int(frame) - 1]
        if not any(image['id'] == int(frame) for image in images):
            images.append({'id': int(frame), 'file_name': f'{stamp}.png'})
        annotations.append({'id': len(annotations) + 1, 'image_id': int(frame), 'category_id': 3,
                            'bbox': [left, top, width, height], 'area': width * height,
                            'iscrowd': 0})
    return {'images': images, 'annotations': annotations,
            'categories': [{'id': 3, 'name': 'car'}]}
