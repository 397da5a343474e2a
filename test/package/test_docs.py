"""
The README and the reference pages of docs/.

The generated tables match the code (`triton-perception docs` writes them), the README stays
short and links every page, and relative links lead to files that exist.
"""
from __future__ import annotations

from pathlib import Path
import re
from xml.etree import ElementTree

import pytest

from support.checkout import REPO
from support.package_dependencies import pip_keys, pip_packages
from triton_perception.apps import docs_tables
from triton_perception.serving import stale_batched_ensembles

README = REPO / 'README.md'
DOCS = REPO / 'docs'
LINK = re.compile(r'\]\(([^)#\s]+)(#[^)\s]*)?\)')


@pytest.mark.parametrize('page', sorted(docs_tables.generated_tables()))
def test_generated_tables_match_the_code(page: str) -> None:
    """Each generated table in docs/ is what `triton-perception docs` writes from the code now."""
    text = (DOCS / page).read_text(encoding='utf-8')
    assert docs_tables.render(text, docs_tables.generated_tables()[page]) == text, \
        f'docs/{page} differs from the code: run `triton-perception docs`'


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


# ros-humble-ros-base (REP 2001's ros_base variant) brings these exec keys; every other one is
# on the apt line of "Without rosdep".
ROS_BASE_KEYS = {'rclpy', 'rcl_interfaces', 'ament_index_python', 'std_msgs', 'sensor_msgs',
                 'builtin_interfaces', 'geometry_msgs', 'lifecycle_msgs', 'launch', 'launch_ros'}


def test_the_install_without_rosdep_names_every_exec_dependency() -> None:
    """docs/ros-machine.md's apt and pip lines cover package.xml's exec keys and their packages."""
    page = (REPO / 'docs' / 'ros-machine.md').read_text(encoding='utf-8')
    section = page.split('## Without rosdep', 1)[1]
    block = section.split('```bash', 1)[1].split('```', 1)[0].replace('\\\n', ' ')
    apt_line, pip_line = (line for line in block.splitlines() if line.strip())
    apt_words, pip_words = set(apt_line.split()), set(pip_line.split())
    root = ElementTree.parse(REPO / 'package.xml').getroot()
    rules = pip_keys()
    missing = []
    for key in sorted(element.text.strip() for element in root.findall('exec_depend')
                      if element.text):
        if key.endswith('-pip'):
            missing += [f'{key}: {package}' for package in pip_packages(rules[key], 'ubuntu')
                        if package not in pip_words]
        elif key.startswith('python3-'):
            missing += [key] if key not in apt_words else []
        elif key not in ROS_BASE_KEYS and f'ros-$ROS_DISTRO-{key.replace("_", "-")}' \
                not in apt_words:
            missing.append(key)
    assert missing == []
    assert '-c ~/ros2_ws/src/triton_perception/rosdep/constraints.txt' in pip_line


def test_the_batched_ensembles_are_written_from_perception(tmp_path: Path) -> None:
    """
    perception_x2..x4 are what `triton-perception docs` writes from perception's config.

    A changed `perception` output makes them stale, and writing puts the new output in each,
    once per camera, with its version directory.
    """
    assert stale_batched_ensembles(REPO / 'model_repository') == []
    repository = tmp_path / 'model_repository'
    (repository / 'perception').mkdir(parents=True)
    config = (REPO / 'model_repository' / 'perception' / 'config.pbtxt').read_text(
        encoding='utf-8')
    (repository / 'perception' / 'config.pbtxt').write_text(
        config.replace('{ name: "NUM_DETECTIONS"', '{ name: "COUNT"'), encoding='utf-8')
    written = stale_batched_ensembles(repository, write=True)
    assert [path.parent.name for path in written] == ['perception_x2', 'perception_x3',
                                                      'perception_x4']
    four = (repository / 'perception_x4' / 'config.pbtxt').read_text(encoding='utf-8')
    assert [f'"COUNT_{camera}"' in four for camera in range(4)] == [True] * 4
    assert 'NUM_DETECTIONS' not in four
    assert (repository / 'perception_x4' / '1').is_dir()
    assert stale_batched_ensembles(repository) == []
