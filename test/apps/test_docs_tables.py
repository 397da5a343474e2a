"""
The generated docs tables and params.yaml (apps/docs_tables.py, `triton-perception docs`).

Each is written from the tables in the code; a change there makes the page stale, and a page
that lost its markers is refused. That every page matches the code now is test/package's
test_docs.py.
"""
from __future__ import annotations

from dataclasses import replace

import pytest

from support.checkout import REPO
from triton_perception.apps import docs_tables
from triton_perception.parameters import DETECTION

DOCS = REPO / 'docs'


def test_a_changed_default_makes_the_page_stale(monkeypatch: pytest.MonkeyPatch) -> None:
    """Positive control: the check above sees a default that differs from the page's."""
    changed = tuple(replace(spec, default=0.3) if spec.name == 'score_threshold' else spec
                    for spec in DETECTION)
    monkeypatch.setattr(docs_tables, 'DETECTION', changed)
    page = (DOCS / 'parameters.md').read_text(encoding='utf-8')
    assert docs_tables.render(page, docs_tables.generated_tables()['parameters.md']) != page


def test_a_page_without_its_markers_is_refused() -> None:
    """A page that lost its table markers is an error, not a page silently left alone."""
    with pytest.raises(ValueError, match='markers missing for launch_arguments'):
        docs_tables.render('# Launch\n', docs_tables.generated_tables()['launch.md'])


def test_params_yaml_is_written_from_the_parameter_tables(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """config/params.yaml, comments included, is what `triton-perception docs` writes."""
    params = REPO / 'config' / 'params.yaml'
    assert params.read_text(encoding='utf-8') == docs_tables.params_yaml()
    assert params not in docs_tables.stale_pages()
    changed = tuple(replace(spec, description='a description changed in the table')
                    if spec.name == 'transport' else spec for spec in DETECTION)
    monkeypatch.setattr(docs_tables, 'DETECTION', changed)
    assert params in docs_tables.stale_pages()
