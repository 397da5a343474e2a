"""Fixtures of the evaluation tests: a small camera bag the runs of support.evaluation_runs use."""
from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from support.evaluation_runs import FRAMES, SIZE
from triton_perception.bag.make import make_bag
from triton_perception.bag.reading import read_images


@pytest.fixture(scope='module')
def camera(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[int]]:
    """Return a camera bag of FRAMES small frames and their header stamps."""
    directory = tmp_path_factory.mktemp('camera')
    for index in range(FRAMES):
        image = np.full((SIZE[1], SIZE[0], 3), 40 + index, np.uint8)
        cv2.imwrite(str(directory / f'{index:03d}.png'), image)
    bag = directory / 'bag'
    make_bag(directory, bag)
    return bag, [image.header_stamp_ns for image in read_images(bag)]
