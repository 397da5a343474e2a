"""
The performance figures of README.md and docs/, each tied to the measurement log and its code.

A figure on a reference page (a number in a table under a measurement heading, or one with a
unit of time, rate or memory in prose) belongs to the record line that follows it in its
section:

    Measured with `COMMAND` at commit SHA on MACHINE, YYYY-MM-DD: [log](performance-log.md#ANCHOR)

The log section ANCHOR of docs/performance-log.md holds the same line (without the link) and
every figure of the block, at least to the page's precision, so that a reader can find how it
was measured and what else the run gave. A block is stale when the code it measures
(MEASURED_CODE, by command) changed after its commit: a page may show a stale block only when
its line says `Stale:` and STALE names it with the reason, so that a re-measurement (a new log
entry at a newer commit) is what clears it. `problems(repository)` returns one line per fault;
`clip_problems` holds every statement of the highway clip's length and rate to the one place
that gives them.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import re
import subprocess

RECORD = re.compile(r'Measured with `(?P<command>[^`]+)` at commit (?P<commit>[0-9a-f]{7,40}) '
                    r'on (?P<machine>[^,]+), (?P<date>\d{4}-\d{2}-\d{2})'
                    r'(?::\s*\[log\]\(performance-log\.md(?P<anchor>#[\w-]+)\))?')
STALE_MARK = 'Stale:'
HEADING = re.compile(r'^(#+) (.+)$')
# A table's header names what it measures with one of these words; a parameter or topic table
# (name, default, meaning) names none.
MEASURING_HEADER = re.compile(r'\b(ms|MiB|MB|served|F1|IDF1|MOTA|frames/s|CPU|latency|RSS|Hz|'
                              r'loss|wall|rate sustained)\b')
# In prose, a figure is a number with a unit of time per frame, rate or memory.
PROSE_FIGURE = re.compile(r'(?<![\w.`-])(\d+(?:\.\d+)?)(?:[–-](\d+(?:\.\d+)?))? ?'
                          r'(?:ms|MiB|MB|frames/s|results/s|x real time)\b')
NUMBER = re.compile(r'(?<![\w./])\d+(?:\.\d+)?(?![\w.]*[a-wyz])')
SEPARATOR = re.compile(r'^\|[\s|:-]+\|\s*$')
CODE_SPAN = re.compile(r'`[^`\n]*`')

REQUEST_PATH = ('triton_perception/serving/requests/', 'triton_perception/nodes/')
# What each command measures, first match wins: the figure is stale once one of these paths
# changed after the commit it was measured at.
MEASURED_CODE: tuple[tuple[str, tuple[str, ...]], ...] = (
    ('bench --video-decoding', ('triton_perception/frames/',)),
    ('bench --camera-health', ('triton_perception/health/',
                               'triton_perception/graphs/health_graph.py')),
    ('bench', REQUEST_PATH),
    ('models quantize', ('triton_perception/models/quantization.py',
                         'triton_perception/models/int8_quantizer.py',
                         'triton_perception/models/int8_sensitivity.py',
                         'triton_perception/graphs/int8_scope.py')),
    ('bag evaluate', REQUEST_PATH),
    ('soak', REQUEST_PATH),
    ('test_labelled_drive', REQUEST_PATH),
)
# Blocks shown although the code they measure changed after their commit: (page, log anchor)
# and why, until a new measurement replaces the entry. The page's record line says `Stale:` and
# names the command that measures it again; a new log entry at a newer commit, its figures on
# the page and its anchor in the line, then leaves the entry here unused (which fails).
REQUEST = 'measured before the request path changed (issue 64, 2026-12-02)'
VIDEO = 'measured before the video modules changed'
HEALTH = 'measured before the camera health check changed'
STALE: dict[tuple[str, str], str] = {
    ('docs/models.md', '#int8-on-the-labelled-clip-lockstep'): REQUEST,
    ('docs/performance.md', '#performance-measurement-log'): REQUEST,
    ('docs/performance.md', '#the-highest-rate-sustained-busy-and-quiet'): REQUEST,
    ('docs/performance.md', '#priorities-under-overload-two-runs'): REQUEST,
    ('docs/performance.md', '#one-process-per-robot-memory-of-the-perception-processes'): REQUEST,
    ('docs/performance.md', '#the-labelled-clip-in-lockstep-and-at-recorded-timing'): REQUEST,
    ('docs/performance.md', '#drives-on-ray'): REQUEST,
    ('docs/performance.md', '#what-latency-costs-the-labelled-clip'): REQUEST,
    ('docs/performance.md', '#decoding-video'): VIDEO,
    ('docs/performance.md', '#camera-health'): HEALTH,
    ('docs/performance.md', '#from-the-health-graphs-statistics'): HEALTH,
    ('docs/bags.md', '#what-compression-costs-the-scores'): REQUEST,
    ('docs/bags.md', '#the-labelled-clip-in-lockstep-on-a-quiet-machine'): REQUEST,
    ('docs/launch.md', '#one-process-per-robot-memory-of-the-perception-processes'): REQUEST,
    ('docs/models.md', '#int8-against-float-on-the-cpu-profile'): REQUEST,
    ('docs/orin.md', '#the-gstreamer-route-in-software'): VIDEO,
}
# Numbers with a unit that are settings, limits or upstream figures, not this package's
# measurements: (page, the phrase as written).
NOT_FIGURES: tuple[tuple[str, str], ...] = (
    ('docs/bags.md', 'over 512 MiB'),  # the size limit of a labels file
    ('docs/development.md', 'about 21 MB'),  # the shared folder's size, the manifest's sum
    ('docs/orin.md', '2048 MiB workspace'),  # a setting
    ('docs/orin.md', '1080p at 198 fps'),  # Isaac ROS's published figure, not this package's
    ('docs/topics.md', 'about 50 MB a frame'),  # what a decoder would allocate, by arithmetic
    ('docs/topics.md', 'a 64 MiB segment'),  # a setting of the Fast DDS profile
    ('docs/tracking.md', 'up to 50 ms'),  # a setting
    ('docs/tracking.md', 'for 20 ms'),  # an example's arithmetic
)


LOG = 'docs/performance-log.md'


class FigureCheckError(RuntimeError):
    """git or the repository's history cannot answer: the staleness check cannot run."""


@dataclass(frozen=True)
class Record:
    """A record line: what produced the figures above it, where and when."""

    command: str
    commit: str
    machine: str
    date: str
    anchor: str
    stale: bool

    def same_run(self, other: Record) -> bool:
        """Return whether both lines name the same command, commit, machine and date."""
        return (self.command, self.commit, self.machine, self.date) == \
            (other.command, other.commit, other.machine, other.date)


@dataclass(frozen=True)
class Block:
    """The figures of a page between a heading (or the previous record line) and a record."""

    page: str
    heading: str
    figures: tuple[str, ...]
    record: Record | None


def record_of(line: str) -> Record | None:
    """Return the record a line states, or None."""
    found = RECORD.search(line)
    if not found:
        return None
    return Record(found['command'], found['commit'], found['machine'].strip(), found['date'],
                  found['anchor'] or '', STALE_MARK in line[found.end():])


def anchor_of(heading: str) -> str:
    """Return the anchor GitHub gives a heading (as test_docs checks links)."""
    return '#' + re.sub(r'[^\w\- ]', '', heading.lower()).replace(' ', '-')


def line_figures(line: str, in_measuring_table: bool) -> list[str]:
    """Return the figures of one line: a measuring table's numbers, or prose numbers with units."""
    text = CODE_SPAN.sub('', line)
    if in_measuring_table:
        return NUMBER.findall(text)
    figures = []
    for match in PROSE_FIGURE.finditer(text):
        figures += [value for value in match.groups() if value]
    return figures


def page_blocks(page: str, text: str) -> list[Block]:
    """Split a page into blocks of figures, each closed by its record line or its section's end."""
    for name, phrase in NOT_FIGURES:
        if name == page:
            text = text.replace(phrase, '')
    blocks: list[Block] = []
    heading, figures, measuring, fenced = '', [], False, False
    lines = text.splitlines()
    for number, line in enumerate(lines):
        if line.startswith('```'):
            fenced = not fenced
            continue
        found = HEADING.match(line)
        if found and not fenced:
            if figures:
                blocks.append(Block(page, heading, tuple(figures), None))
            heading, figures = found[2], []
            continue
        if fenced:
            continue
        following = lines[number + 1] if number + 1 < len(lines) else ''
        if line.startswith('|') and SEPARATOR.match(following):  # a table's header row
            measuring = bool(MEASURING_HEADER.search(line))
            continue
        if SEPARATOR.match(line):
            continue
        figures += line_figures(RECORD.sub('', line), measuring and line.startswith('|'))
        record = record_of(line)
        if record:
            blocks.append(Block(page, heading, tuple(figures), record))
            figures = []
    if figures:
        blocks.append(Block(page, heading, tuple(figures), None))
    return blocks


def log_entries(text: str) -> dict[str, tuple[Record, str]]:
    """Return the log's entries by anchor: the section's record line and its text."""
    sections: list[tuple[str, list[str]]] = [('', [])]
    fenced = False
    for line in text.splitlines():
        fenced = fenced != line.startswith('```')
        found = None if fenced else HEADING.match(line)
        if found:
            sections.append((found[2], []))
        else:
            sections[-1][1].append(line)
    entries: dict[str, tuple[Record, str]] = {}
    for heading, lines in sections:
        record = next(filter(None, map(record_of, lines)), None)
        if record:
            entries[anchor_of(heading)] = (record, '\n'.join(lines))
    return entries


def appears(figure: str, text: str) -> bool:
    """Return whether the log text holds the figure, at the page's precision."""
    decimals = len(figure.split('.')[1]) if '.' in figure else 0
    wanted = float(figure)
    half_step = 0.5 * 10 ** -decimals + 1e-9
    return any(abs(float(number) - wanted) <= half_step
               for number in NUMBER.findall(CODE_SPAN.sub('', text)))


def block_problems(block: Block, entries: dict[str, tuple[Record, str]]) -> list[str]:
    """Return why a block's figures are not tied to a log entry that holds them."""
    where = f'{block.page}, "{block.heading}"'
    if block.record is None:
        return [f'{where}: figures {", ".join(block.figures[:6])} have no line "Measured with '
                '`COMMAND` at commit SHA on MACHINE, DATE: [log](performance-log.md#ANCHOR)"']
    if block.page == LOG:
        return []
    if block.record.anchor not in entries:
        return [f'{where}: the log has no entry {block.record.anchor or "(no link)"} with a '
                'record line']
    record, text = entries[block.record.anchor]
    if not record.same_run(block.record):
        return [f'{where}: the record line differs from the log entry {block.record.anchor}: '
                f'({record.command}, {record.commit}, {record.machine}, {record.date})']
    missing = [figure for figure in block.figures if not appears(figure, text)]
    return [f'{where}: {", ".join(missing)} not in the log entry {block.record.anchor}'] \
        if missing else []


def git(repository: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Run git in the repository; a missing git is an error that says so, not a skip."""
    try:
        return subprocess.run(['git', '-C', str(repository), *arguments], capture_output=True,
                              text=True, check=False)
    except FileNotFoundError as missing:
        raise FigureCheckError('git is not installed: the staleness of the figures needs '
                               'the history of the repository') from missing


def last_change(repository: Path, paths: tuple[str, ...]) -> str:
    """Return the newest commit that touched the paths, from the full history."""
    if not full_history(repository):
        raise FigureCheckError(f'{repository} is not a full git clone (shallow or no history): '
                               'run `git fetch --unshallow` (CI: fetch-depth 0)')
    newest = git(repository, 'log', '-1', '--format=%H', '--', *paths).stdout.strip()
    if not newest:
        raise FigureCheckError(f'git log finds no commit touching {", ".join(paths)}')
    return newest


def measured_code(command: str) -> tuple[str, ...]:
    """Return the source paths a command measures (MEASURED_CODE), () when none is known."""
    return next((paths for key, paths in MEASURED_CODE if key in command), ())


def stale_problems(block: Block, repository: Path) -> list[str]:
    """Return why a block is stale without saying so, or says so without being stale."""
    assert block.record is not None
    where = f'{block.page}, "{block.heading}"'
    paths = measured_code(block.record.command)
    if not paths:
        return [f'{where}: no entry of MEASURED_CODE matches `{block.record.command}`']
    commit = block.record.commit
    changed = last_change(repository, paths)  # first: it says when there is no full history
    if git(repository, 'cat-file', '-e', f'{commit}^{{commit}}').returncode:
        return [f'{where}: commit {commit} is not in the history of this repository']
    fresh = git(repository, 'merge-base', '--is-ancestor', changed, commit).returncode == 0
    listed = (block.page, block.record.anchor) in STALE
    if fresh and (listed or block.record.stale):
        return [f'{where}: measured after the last change to {", ".join(paths)}: drop its '
                f'"{STALE_MARK}" and its STALE entry']
    if not fresh and not (listed and block.record.stale):
        return [f'{where}: measured at {commit}, before {changed[:7]} changed '
                f'{", ".join(paths)}: measure again with `{block.record.command}`, or mark the '
                f'line "{STALE_MARK}" and list ({block.page!r}, {block.record.anchor!r}) in STALE']
    return []


def pages(repository: Path) -> dict[str, str]:
    """Return README.md and every docs/ page by its path in the repository."""
    found = {'README.md': (repository / 'README.md').read_text(encoding='utf-8')}
    for page in sorted((repository / 'docs').glob('*.md')):
        found[f'docs/{page.name}'] = page.read_text(encoding='utf-8')
    return found


def full_history(repository: Path) -> bool:
    """Whether the repository is a full git clone (the age check needs every commit)."""
    return git(repository, 'rev-parse', '--is-shallow-repository').stdout.strip() == 'false'


def problems(repository: Path, texts: dict[str, str] | None = None,
             ages: bool = True) -> list[str]:
    """
    Return every fault of the pages' figures (pages() of the repository unless given).

    With `ages` False the figures are held to their record lines and log entries only, not to
    the history of the code they measure.
    """
    texts = pages(repository) if texts is None else texts
    entries = log_entries(texts.get(LOG, ''))
    found: list[str] = []
    for page, text in texts.items():
        if page == LOG:
            continue
        for block in page_blocks(page, text):
            faults = block_problems(block, entries)
            found += faults or (stale_problems(block, repository) if ages else [])
    return found


def unused_stale_entries(texts: dict[str, str]) -> list[tuple[str, str]]:
    """Return the STALE entries no page's record line names any more."""
    named = {(page, block.record.anchor) for page, text in texts.items()
             if page != LOG
             for block in page_blocks(page, text) if block.record}
    return sorted(set(STALE) - named)


# The highway clip's length and rate are stated once, in docs/development.md's table of the
# shared folder; a page that gives either says the same, so that ratios to real time agree.
CLIP_SOURCE = re.compile(r'solidWhiteRight\.mp4` \|[^|\n]*?(\d+(?:\.\d+)?) s, \d+x\d+, (\d+) fps')
CLIP_STATED = re.compile(r"clip(?:'s| \(\d+ frames,) (\d+(?:\.\d+)?) s\b"
                         r'(?: at (\d+) (?:fps|frames/s|Hz))?')


def clip_problems(texts: dict[str, str]) -> list[str]:
    """Return each statement of the clip's length or rate that differs from development.md's."""
    source = CLIP_SOURCE.search(texts.get('docs/development.md', ''))
    if not source:
        return ["docs/development.md's table of the shared folder no longer gives the clip's "
                'length and rate']
    length, rate = source.groups()
    return [f'{page}: "{stated[0]}" where docs/development.md gives {length} s at {rate} fps'
            for page, text in texts.items() for stated in CLIP_STATED.finditer(text)
            if stated[1] != length or stated[2] not in (None, rate)]
