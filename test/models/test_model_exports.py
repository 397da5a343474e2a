"""
`models install` from a user's own export: same network, other bytes, accepted; others refused.

The exports are made here from the shipped files: re-saved with other metadata and the head
renamed as yolov5 v6.x names it (equivalent), a 3-class head, TwinLiteNet's outputs swapped,
and yolov5n with one convolution's weights scaled (same structure, other behaviour). The check
images are ../shared/data's copies of the upstream repositories' images.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import onnx
from onnx import helper, numpy_helper
import pytest

from support.checkout import SHARED
from triton_perception.models.shipped_models import (ExportChecks, install_models, manifest,
                                                     ModelInstallError)
from triton_perception.system.checksums import sha256_of

CHECKS = ExportChecks((SHARED / 'data',))
LINES: list[str] = []


def models_directory(root: Path, yolov5: onnx.ModelProto | None = None,
                     twinlitenet: onnx.ModelProto | None = None) -> Path:
    """Return a --from directory: the given models saved, the shipped files linked otherwise."""
    for name, model in (('yolov5n', yolov5), ('twinlitenet', twinlitenet)):
        target = root / name / f'{name}.onnx'
        target.parent.mkdir(parents=True, exist_ok=True)
        if model is None:
            target.symlink_to(SHARED / 'models' / name / f'{name}.onnx')
        else:
            onnx.save(model, str(target))
    return root


def shipped(name: str) -> onnx.ModelProto:
    """Return the shipped ONNX model `name` from the shared models."""
    return onnx.load(str(SHARED / 'models' / name / f'{name}.onnx'))


def repository(root: Path) -> Path:
    """Return a model repository at `root` for the install to fill."""
    (root / 'yolov5').mkdir(parents=True)
    return root


def re_exported_yolov5() -> onnx.ModelProto:
    """Return the same network as another exporter writes it: new metadata, head `output`."""
    model = shipped('yolov5n')
    model.producer_version = '1.12.1'
    model.doc_string = 'exported again'
    for node in model.graph.node:
        node.output[:] = ['output' if name == 'output0' else name for name in node.output]
    model.graph.output[0].name = 'output'
    return model


def install(source: Path, target: Path, checks: ExportChecks = CHECKS) -> list[str]:
    """Run `models install` from `source` into `target`; return what it logged."""
    lines: list[str] = []
    install_models(target, source, log=lines.append, checks=checks)
    return lines


@pytest.mark.slow
def test_an_equivalent_export_is_installed_and_reported(tmp_path: Path) -> None:
    """
    An export of the same network with other bytes is installed, saying so.

    The log reports structure and behaviour matching, the record keeps both checksums, and a
    second install is up to date.
    """
    source = models_directory(tmp_path / 'models', yolov5=re_exported_yolov5())
    exported = source / 'yolov5n' / 'yolov5n.onnx'
    pinned = {model.name: model.sha256 for model in manifest()}['yolov5n']
    assert sha256_of(exported) != pinned
    lines = install(source, repository(tmp_path / 'repo'))
    text = '\n'.join(lines)
    assert 'not the file this package was tested with' in text, text
    assert 'yolov5n: structure matches' in text and 'yolov5n: behaviour matches: bus.jpg: 4 of 4' \
        in text, text
    record = json.loads((tmp_path / 'repo' / 'yolov5_model' / '1' / 'model.onnx.json').read_text())
    assert record['source_sha256'] == sha256_of(exported) and record['tested_sha256'] == pinned
    assert record['checked'].startswith('structure and behaviour')
    again = install(source, tmp_path / 'repo')
    assert 'yolov5n: up to date' in '\n'.join(again)


@pytest.mark.slow
def test_a_resaved_twinlitenet_is_installed(tmp_path: Path) -> None:
    """A re-saved TwinLiteNet is installed once its behaviour matches on a road image."""
    model = shipped('twinlitenet')
    model.doc_string = 'exported again'
    source = models_directory(tmp_path / 'models', twinlitenet=model)
    text = '\n'.join(install(source, repository(tmp_path / 'repo')))
    assert 'twinlitenet: behaviour matches: caeb782d-4a20b7c4.jpg' in text, text


def test_a_head_of_other_classes_is_refused_with_its_class_count(tmp_path: Path) -> None:
    """A detector export with another class count is refused naming it, and nothing is installed."""
    model = shipped('yolov5n')
    head = model.graph.output[0]
    model.graph.node.append(helper.make_node(
        'Slice', ['output0', 'starts', 'ends', 'axes'], ['output3']))
    model.graph.initializer.extend([numpy_helper.from_array(np.array([0], np.int64), name)
                                    for name in ('starts', 'axes')])
    model.graph.initializer[-1].CopyFrom(numpy_helper.from_array(np.array([2], np.int64), 'axes'))
    model.graph.initializer.append(numpy_helper.from_array(np.array([8], np.int64), 'ends'))
    model.graph.output.remove(head)
    model.graph.output.append(helper.make_tensor_value_info('output3', onnx.TensorProto.FLOAT,
                                                            [1, 25200, 8]))
    source = models_directory(tmp_path / 'models', yolov5=model)
    with pytest.raises(ModelInstallError, match=r'shape \[1, 25200, 8\], expected '
                                                r'\[1, 25200, 85\]: 3 classes, expected 80'):
        install(source, repository(tmp_path / 'repo'))
    assert not (tmp_path / 'repo' / 'yolov5_model' / '1' / 'model.onnx').exists()


def test_twinlitenet_with_other_outputs_is_refused(tmp_path: Path) -> None:
    """A TwinLiteNet export with its outputs swapped is refused naming the output found."""
    model = shipped('twinlitenet')
    outputs = list(model.graph.output)
    del model.graph.output[:]
    model.graph.output.extend(reversed(outputs))
    source = models_directory(tmp_path / 'models', twinlitenet=model)
    with pytest.raises(ModelInstallError, match="output 'll', expected 'da'"):
        install(source, repository(tmp_path / 'repo'))


@pytest.mark.slow
def test_same_structure_other_behaviour_is_refused(tmp_path: Path) -> None:
    """Weights of the detection head scaled: the file passes the structure check, not bus.jpg."""
    model = re_exported_yolov5()
    last_conv = [node for node in model.graph.node if node.op_type == 'Conv'][-1]
    weights = {initializer.name: initializer for initializer in model.graph.initializer}
    weight = weights[last_conv.input[1]]
    weight.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(weight) * 0.5, weight.name))
    source = models_directory(tmp_path / 'models', yolov5=model)
    with pytest.raises(ModelInstallError, match='does not behave as the tested one: class'):
        install(source, repository(tmp_path / 'repo'))
    assert not (tmp_path / 'repo' / 'yolov5_model' / '1' / 'model.onnx').exists()


@pytest.mark.slow
def test_without_check_images_the_install_says_how_to_check(tmp_path: Path) -> None:
    """
    Without check images a changed export is refused, saying how to give them.

    With the behaviour check turned off it installs with a warning.
    """
    source = models_directory(tmp_path / 'models', yolov5=re_exported_yolov5())
    with pytest.raises(ModelInstallError, match='needs bus.jpg .*--check-images DIR'):
        install(source, repository(tmp_path / 'repo'), ExportChecks())
    text = '\n'.join(install(source, tmp_path / 'repo', ExportChecks(behaviour=False)))
    assert 'WARNING behaviour not checked' in text
