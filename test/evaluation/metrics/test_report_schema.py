"""report.json carries its schema_version and is read back in one place, old reports included."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from triton_perception.bag import BagError
from triton_perception.evaluation import read_report, SCHEMA_VERSION
from triton_perception.evaluation.metrics.report_schema import write_report_json

REPORT = {'input': {'bag': 'drive', 'topic': '/camera/image_raw', 'frames': 3, 'rate': 1.0,
                    'timing': 'lockstep', 'replay_s': 1.0, 'bag_s': 0.1},
          'nodes': {}, 'outputs_bag': 'out/outputs'}


def test_the_version_comes_first_and_the_rest_is_unchanged(tmp_path: Path) -> None:
    """schema_version is the first key; the report's own keys follow in their order."""
    write_report_json(REPORT, tmp_path / 'report.json')
    text = (tmp_path / 'report.json').read_text(encoding='utf-8')
    assert text == json.dumps({'schema_version': SCHEMA_VERSION, **REPORT}, indent=2)
    assert read_report(tmp_path / 'report.json')['input']['frames'] == 3


def test_a_report_from_before_the_version_is_read_as_it_is(tmp_path: Path) -> None:
    """A report without schema_version (version 0, the same shape) reads without a change."""
    (tmp_path / 'report.json').write_text(json.dumps(REPORT), encoding='utf-8')
    assert read_report(tmp_path / 'report.json') == REPORT


@pytest.mark.parametrize('content, message', [
    (json.dumps({**REPORT, 'schema_version': SCHEMA_VERSION + 1}),
     f'schema_version {SCHEMA_VERSION + 1}; this triton_perception reads up to '
     f'{SCHEMA_VERSION}: update'),
    (json.dumps({'drives': {}}), 'no report.json of a `bag evaluate` run'),
    ('{"input": ', 'cannot read the report'),
])
def test_what_cannot_be_read_says_why(tmp_path: Path, content: str, message: str) -> None:
    """A newer version, another file's JSON, broken JSON: one BagError naming the file."""
    path = tmp_path / 'report.json'
    path.write_text(content, encoding='utf-8')
    with pytest.raises(BagError, match=str(path)) as raised:
        read_report(path)
    assert message in str(raised.value)
