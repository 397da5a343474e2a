"""
Every performance figure of the README and docs/ names its run and is today's, or says it is not.

A figure without its command, commit and machine cannot be reproduced or judged, and one measured
before the code it times changed describes code that no longer runs: docs_figures ties each
figure to its entry in docs/performance-log.md and that entry's commit to the code's history.
"""
from __future__ import annotations

from pathlib import Path
import subprocess

import pytest

from support import docs_figures
from support.checkout import REPO

LINE = ('Measured with `triton-perception bench --glue` at commit {sha} on the 2-core VM, '
        '2026-12-01: [log](performance-log.md#glue)')
PAGE = """# Performance

## The nodes

| case | node CPU ms per frame |
| --- | --- |
| detection | 4.72 |
| both | 8.8 |

Both models cost 8.8 ms of CPU per frame.
{line}
"""
LOG_PAGE = """# Log

## Glue

{line}

| case | node CPU ms per frame |
| --- | --- |
| detection | 4.718 |
| both | {both} |
"""


def commit(repository: Path, path: str) -> str:
    """Write a file, commit it and return the short sha."""
    (repository / path).parent.mkdir(parents=True, exist_ok=True)
    (repository / path).write_text(path + str(len(list(repository.rglob('*')))),
                                   encoding='utf-8')
    for arguments in (['add', '-A'], ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit',
                                      '-qm', path]):
        subprocess.run(['git', '-C', str(repository), *arguments], check=True)
    return subprocess.run(['git', '-C', str(repository), 'rev-parse', '--short', 'HEAD'],
                          check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def history(tmp_path: Path) -> tuple[Path, str, str]:
    """Return a repository whose request path changed once after a first commit."""
    subprocess.run(['git', 'init', '-q', str(tmp_path)], check=True)
    first = commit(tmp_path, 'triton_perception/nodes/node.py')
    second = commit(tmp_path, 'triton_perception/serving/requests/send.py')
    return tmp_path, first, second


def texts(sha: str, both: str = '8.80', stale: str = '') -> dict[str, str]:
    """Return a page and a log measured at sha (the log's `both` figure as given)."""
    line = LINE.format(sha=sha)
    return {'docs/performance.md': PAGE.format(line=line + stale),
            docs_figures.LOG: LOG_PAGE.format(line=line.split(': [log]')[0], both=both)}


def test_a_figure_its_log_entry_holds_measured_after_the_code_passes(
        history: tuple[Path, str, str]) -> None:
    """The page's figures are in the entry (to the page's precision) and the entry is new."""
    repository, _first, second = history
    assert docs_figures.problems(repository, texts(second)) == []


def test_a_figure_missing_from_the_log_fails(history: tuple[Path, str, str]) -> None:
    """A page figure that its entry does not hold is named."""
    repository, _first, second = history
    found = docs_figures.problems(repository, texts(second, both='9.1'))
    assert len(found) == 1 and '8.8 not in the log entry #glue' in found[0], found


def test_figures_without_a_record_line_fail(history: tuple[Path, str, str]) -> None:
    """A table of measurements with no record line after it is named with its heading."""
    repository, _first, second = history
    page = texts(second)
    page['docs/performance.md'] = page['docs/performance.md'].split('Measured with')[0]
    found = docs_figures.problems(repository, page)
    assert len(found) == 1 and '"The nodes": figures 4.72, 8.8' in found[0], found


def test_an_entry_older_than_the_code_it_measures_fails(history: tuple[Path, str, str]) -> None:
    """An entry at a commit before the request path's last change is stale."""
    repository, first, second = history
    found = docs_figures.problems(repository, texts(first))
    assert len(found) == 1 and f'before {second}' in found[0], found


def test_a_stale_block_passes_only_when_marked_and_listed(
        history: tuple[Path, str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The page says `Stale:` and STALE gives the reason; either alone fails."""
    repository, first, second = history
    marked = texts(first, stale=' Stale: before the current request path.')
    assert len(docs_figures.problems(repository, marked)) == 1
    monkeypatch.setattr(docs_figures, 'STALE', {('docs/performance.md', '#glue'): 'why'})
    assert docs_figures.problems(repository, marked) == []
    assert len(docs_figures.problems(repository, texts(first))) == 1
    found = docs_figures.problems(repository, texts(second))
    assert len(found) == 1 and 'drop its "Stale:"' in found[0], found
    assert docs_figures.unused_stale_entries(texts(second)) == []
    assert docs_figures.unused_stale_entries({}) == [('docs/performance.md', '#glue')]


def test_a_shallow_clone_fails_with_a_clear_message(history: tuple[Path, str, str],
                                                    tmp_path: Path) -> None:
    """Without the full history the check stops and says how to get it, never skips."""
    repository, _first, second = history
    shallow = tmp_path / 'shallow'
    subprocess.run(['git', 'clone', '-q', '--depth', '1', f'file://{repository}', str(shallow)],
                   check=True)
    with pytest.raises(docs_figures.FigureCheckError, match='unshallow'):
        docs_figures.last_change(shallow, docs_figures.REQUEST_PATH)


def test_no_git_or_no_history_fails_with_a_clear_message(
        history: tuple[Path, str, str], tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy without .git, or a machine without git, stops the check with what is missing."""
    repository, _first, second = history
    copy = tmp_path_factory.mktemp('export')  # outside the fixture's repository
    with pytest.raises(docs_figures.FigureCheckError, match='not a full git clone'):
        docs_figures.problems(copy, texts(second))

    def no_git(*_arguments: object, **_options: object) -> None:
        raise FileNotFoundError('git')
    monkeypatch.setattr(docs_figures.subprocess, 'run', no_git)
    with pytest.raises(docs_figures.FigureCheckError, match='git is not installed'):
        docs_figures.problems(repository, texts(second))


def test_every_figure_of_the_docs_is_in_the_log_and_not_older_than_its_code() -> None:
    """
    README.md and docs/: each figure has its record line and log entry, and is today's.

    A shallow clone holds the figures to their log entries and skips, by name, only the age
    check, which needs every commit.
    """
    if not docs_figures.full_history(REPO):
        assert docs_figures.problems(REPO, ages=False) == []
        pytest.skip(f'{REPO} is a shallow clone: the figures match their log entries; their age '
                    'against the code needs the full history (`git fetch --unshallow`)')
    assert docs_figures.problems(REPO) == []


def test_every_stale_exception_is_still_needed() -> None:
    """A STALE entry no page names (the block was measured again) is removed from the list."""
    assert docs_figures.unused_stale_entries(docs_figures.pages(REPO)) == []


def test_the_clip_is_as_long_and_as_fast_on_every_page_as_development_md_says() -> None:
    """A page stating the clip's length or rate agrees with docs/development.md; 7.3 s fails."""
    found = docs_figures.pages(REPO)
    assert docs_figures.clip_problems(found) == []
    found['docs/planted.md'] = 'The highway clip (221 frames, 7.3 s at 30 Hz) replayed.'
    assert docs_figures.clip_problems(found) == [
        'docs/planted.md: "clip (221 frames, 7.3 s at 30 Hz" where docs/development.md gives '
        '8.8 s at 25 fps']
