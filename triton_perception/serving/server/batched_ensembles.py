"""
The ensembles that serve several cameras of a process in one request: `perception_x2` ... x4.

Each runs N `perception` steps side by side; camera i's tensors carry the suffix `_i`
(IMAGE_0, DETECTIONS_0, ...). The served graphs take one frame of any size and have no batch
dimension, so a request does not stack frames: each camera keeps its own input, cameras of
different sizes go in the same request, and Triton runs the steps as its ensemble scheduler
runs any independent steps. What a request saves is the node's side: one gRPC call, one
thread's turn and one response per round of the process's cameras instead of one per camera.
The configs are generated from `perception`'s (`triton-perception docs` writes them, a test
holds them to it), so they never disagree with the ensemble they fan out to.
"""
from __future__ import annotations

from pathlib import Path

from google.protobuf import text_format
from tritonclient.grpc import model_config_pb2

from triton_perception.serving.server.model_config import read_config
from triton_perception.serving.server.server_config import batched_name, JOINED_MODEL, MAX_BATCH

BATCH_SIZES = tuple(range(2, MAX_BATCH + 1))
HEADER = ('# {count} cameras of one perception_process in one request: {count} `{joined}` '
          'steps side by side,\n'
          "# camera i's tensors suffixed _i (serving/server/batched_ensembles.py). Written by\n"
          '# `triton-perception docs` from {joined}/config.pbtxt: edit that, not this file.\n')


def camera_tensor(name: str, camera: int) -> str:
    """Return the name of camera number `camera`'s tensor `name` in a batched request."""
    return f'{name}_{camera}'


def batched_config(joined: model_config_pb2.ModelConfig,
                   count: int) -> model_config_pb2.ModelConfig:
    """Return the ensemble that runs `count` steps of `joined`, one per camera."""
    if count < 2:
        raise ValueError(f'a batched ensemble serves 2 or more cameras, not {count}')
    config = model_config_pb2.ModelConfig(name=batched_name(joined.name, count),
                                          platform='ensemble', max_batch_size=0)
    for camera in range(count):
        for tensor in joined.input:
            config.input.append(tensor)
            config.input[-1].name = camera_tensor(tensor.name, camera)
        for tensor in joined.output:
            config.output.append(tensor)
            config.output[-1].name = camera_tensor(tensor.name, camera)
        step = config.ensemble_scheduling.step.add(model_name=joined.name, model_version=-1)
        for tensor in joined.input:
            step.input_map[tensor.name] = camera_tensor(tensor.name, camera)
        for tensor in joined.output:
            step.output_map[tensor.name] = camera_tensor(tensor.name, camera)
    return config


def batched_config_text(joined: model_config_pb2.ModelConfig, count: int) -> str:
    """Return the config.pbtxt of the ensemble serving `count` cameras through `joined`."""
    header = HEADER.format(count=count, joined=joined.name)
    body: str = text_format.MessageToString(batched_config(joined, count))
    return header + body


def stale_batched_ensembles(repository: Path, write: bool = False) -> list[Path]:
    """
    Return the batched ensembles' configs that differ from `perception`'s; `write` rewrites.

    Each gets the empty version directory an ensemble needs.
    """
    joined = read_config(repository / JOINED_MODEL / 'config.pbtxt')
    stale = []
    for count in BATCH_SIZES:
        path = repository / batched_name(joined.name, count) / 'config.pbtxt'
        text = batched_config_text(joined, count)
        if not path.is_file() or path.read_text(encoding='utf-8') != text:
            stale.append(path)
            if write:
                (path.parent / '1').mkdir(parents=True, exist_ok=True)
                (path.parent / '1' / '.gitkeep').touch()
                path.write_text(text, encoding='utf-8')
    return stale
