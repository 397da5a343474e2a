"""
The README and the reference pages of docs/.

The generated tables match the code (`triton-perception docs` writes them), the README stays
short and links every page, and relative links lead to files that exist.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
import re

import pytest

from conftest import REPO
from triton_perception.apps import docs_tables
from triton_perception.parameters import DETECTION

README = REPO / 'README.md'
DOCS = REPO / 'docs'
LINK = re.compile(r'\]\(([^)#\s]+)(#[^)\s]*)?\)')


@pytest.mark.parametrize('page', sorted(docs_tables.generated_tables()))
def test_generated_tables_match_the_code(page: str) -> None:
    """Each generated table in docs/ is what `triton-perception docs` writes from the code now."""
    text = (DOCS / page).read_text(encoding='utf-8')
    assert docs_tables.render(text, docs_tables.generated_tables()[page]) == text, \
        f'docs/{page} differs from the code: run `triton-perception docs`'


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


def test_the_readme_is_short_and_links_every_reference_page() -> None:
    """The README stays under 12 kB and links every page of docs/, so that each is reachable."""
    text = README.read_text(encoding='utf-8')
    assert len(text.encode('utf-8')) < 12_000
    linked = {target for target, _anchor in LINK.findall(text)}
    pages = {f'docs/{page.name}' for page in DOCS.glob('*.md') if page.name != 'README.md'}
    assert pages <= linked, f'not linked from the README: {sorted(pages - linked)}'


def anchors(page: Path) -> set[str]:
    """Return the heading anchors GitHub gives a markdown page."""
    headings = re.findall(r'^#+ (.+)$', page.read_text(encoding='utf-8'), re.M)
    return {'#' + re.sub(r'[^\w\- ]', '', heading.lower()).replace(' ', '-')
            for heading in headings}


@pytest.mark.parametrize('page', [README, *sorted(DOCS.glob('*.md'))], ids=lambda page: page.name)
def test_relative_links_lead_to_files_and_headings(page: Path) -> None:
    """Every relative link of the page leads to an existing file, and every anchor to a heading."""
    text = page.read_text(encoding='utf-8')
    broken = []
    for target, anchor in LINK.findall(text):
        path = page.parent / target
        if '://' in target:
            continue
        if not path.exists():
            broken.append(target)
        elif anchor and path.suffix == '.md' and anchor not in anchors(path):
            broken.append(target + anchor)
    in_page = re.findall(r'\]\((#[^)\s]+)\)', text)
    broken += [anchor for anchor in in_page if anchor not in anchors(page)]
    assert not broken, f'{page.name} has broken links: {broken}'
