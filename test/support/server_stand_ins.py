"""
What the server tests start from when no real model or TensorRT is involved.

A stand-in `trtexec` (TensorRT does not run here), the shipped steps' configs with stand-in ONNX
files, and a ServerConfig on free ports.
"""
from __future__ import annotations

from pathlib import Path
import shutil
import stat

from support.checkout import REPO
from triton_perception.serving.server.server_config import ServerConfig
from triton_perception.system.processes import free_ports

STAND_IN = """#!/usr/bin/env bash
echo "&&&& RUNNING TensorRT.trtexec [TensorRT v100300] $*" | tee -a "{calls}"
echo "[I] TensorRT version: 10.3.0"
for argument in "$@"; do
  case "$argument" in --saveEngine=*) printf 'engine' > "${{argument#--saveEngine=}}";; esac
done
exit {exit_code}
"""


def stand_in_trtexec(directory: Path, exit_code: int = 0) -> Path:
    """
    Return a stand-in trtexec in `directory` that exits with `exit_code`.

    It logs its arguments to calls.log and writes the engine file it is asked for.
    """
    tool = directory / 'trtexec'
    tool.write_text(STAND_IN.format(calls=directory / 'calls.log', exit_code=exit_code))
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    return tool


def repository_with_onnx(directory: Path) -> Path:
    """Return the shipped steps' configs with stand-in ONNX files."""
    for step in ('yolov5_model', 'lane_model'):
        (directory / step / '1').mkdir(parents=True)
        (directory / step / '1' / 'model.onnx').write_bytes(step.encode())
        shutil.copy(REPO / 'model_repository' / step / 'config.pbtxt', directory / step)
        shutil.copytree(REPO / 'model_repository' / step / 'configs', directory / step / 'configs')
    return directory


def config_for(repository: Path, profile: str, binary: Path | None = None) -> ServerConfig:
    """Return a ServerConfig on free ports for `repository`."""
    http_port, grpc_port, metrics_port = free_ports(3)
    return ServerConfig(model_repository=repository, profile=profile,
                        tritonserver=str(binary) if binary else None, http_port=http_port,
                        grpc_port=grpc_port, metrics_port=metrics_port, ready_timeout_s=300)
