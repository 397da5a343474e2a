"""The graph builders by name, as config/models.yaml refers to them."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from triton_perception.graphs.detection_graph import build_detection_graph
from triton_perception.graphs.lane_graph import build_lane_graph


def build_graph(kind: str, source: Path, destination: Path) -> None:
    """
    Build the served graph of kind `kind` from the upstream ONNX file `source` into `destination`.

    Raises ValueError if `kind` is not 'detection' or 'lanes' (the kinds config/models.yaml may
    name).
    """
    builders: dict[str, Callable[[Path, Path], object]] = {
        'detection': build_detection_graph, 'lanes': build_lane_graph}
    if kind not in builders:
        raise ValueError(f'unknown graph {kind!r} in config/models.yaml; known: '
                         f"{', '.join(builders)}")
    builders[kind](source, destination)
