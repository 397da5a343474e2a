"""Each node's typed settings hold exactly its parameter table's rows, with the rows' types."""
from __future__ import annotations

from dataclasses import fields, FrozenInstanceError
from pathlib import Path
import typing

from mypy import api
import pytest

from support.checkout import REPO
from triton_perception.parameters import (DETECTION, DetectionSettings, GROUND, GroundSettings,
                                          HEALTH, HealthSettings, LANES, LaneSettings,
                                          NodeSettings, OVERLAY, OverlaySettings, ParameterError,
                                          ParameterSpec, TRACKING, TrackingSettings)

PAIRS = [(DetectionSettings, DETECTION), (LaneSettings, LANES), (OverlaySettings, OVERLAY),
         (GroundSettings, GROUND), (TrackingSettings, TRACKING), (HealthSettings, HEALTH)]


@pytest.mark.parametrize(('settings_type', 'specs'), PAIRS,
                         ids=[pair[0].__name__ for pair in PAIRS])
def test_fields_are_the_table_rows_with_their_types(settings_type: type[NodeSettings],
                                                    specs: tuple[ParameterSpec, ...]) -> None:
    """A row added to a table without a field (or the other way round) fails here."""
    hints = typing.get_type_hints(settings_type)
    assert sorted(field.name for field in fields(settings_type)) == sorted(
        spec.name for spec in specs)
    for spec in specs:
        expected = list[float] if isinstance(spec.default, list) else type(spec.default)
        assert hints[spec.name] == expected, spec.name
    defaults = settings_type.from_values(specs, {})
    assert all(getattr(defaults, spec.name) == spec.default for spec in specs)


def test_settings_are_frozen_keyword_only_and_validated() -> None:
    """A change makes new settings; a bad value is refused with the table's message."""
    settings = DetectionSettings.from_values(DETECTION, {'score_threshold': 0.5})
    with pytest.raises(FrozenInstanceError):
        settings.score_threshold = 0.1  # type: ignore[misc]
    with pytest.raises(TypeError):
        DetectionSettings(*[spec.default for spec in DETECTION])  # type: ignore[misc]
    changed = settings.changed({'score_threshold': 0.3, 'max_detections': 7})
    assert (changed.score_threshold, changed.max_detections) == (0.3, 7)
    assert (settings.score_threshold, settings.max_detections) == (0.5, 100)
    with pytest.raises(ParameterError, match="'score_threshold'.*expected a number in"):
        DetectionSettings.from_values(DETECTION, {'score_threshold': 2.0})


@pytest.mark.linter
@pytest.mark.mypy
def test_a_misspelt_parameter_is_a_type_error(monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    """What `settings['scor_threshold']` hid until run time, mypy now reports."""
    monkeypatch.chdir(REPO)
    snippet = tmp_path / 'misspelt.py'
    snippet.write_text('from triton_perception.parameters import DetectionSettings\n\n\n'
                       'def threshold(settings: DetectionSettings) -> float:\n'
                       '    return settings.scor_threshold\n')
    # Files named on the command line replace the config's list; its settings still apply.
    report, errors, status = api.run(['--config-file', str(REPO / 'setup.cfg'), str(snippet)])
    assert status == 1, report + errors
    assert '"DetectionSettings" has no attribute "scor_threshold"' in report
