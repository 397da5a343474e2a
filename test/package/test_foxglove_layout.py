"""
config/foxglove_layout.json holds to Foxglove's current layout schema.

The schema's keys are data (test/data/foxglove_layout_schema.json: per panel config, the keys
foxglove-sdk's layout module writes, with the commit they were read from, and the keys it marks
as replaced). Every key the layout sets is one the schema has, none is one it replaced, and the
image panel shows the topics the nodes publish, synchronised by their stamps.
"""
from __future__ import annotations

import json

from support.checkout import REPO

SCHEMA = json.loads((REPO / 'test' / 'data' / 'foxglove_layout_schema.json').read_text())
LAYOUT = json.loads((REPO / 'config' / 'foxglove_layout.json').read_text())
PANEL_KEYS_OUTSIDE_THE_SCHEMA = set(SCHEMA['layout_file_keys'])


def panels() -> dict[str, dict]:
    """Return each panel's config by its panel type (the id before '!')."""
    return {panel_id.split('!', 1)[0]: config
            for panel_id, config in LAYOUT['configById'].items()}


def test_every_panel_is_a_schema_panel_with_schema_keys() -> None:
    """A panel's config keys are its schema class's (or the layout file's own, the title)."""
    for kind, config in panels().items():
        assert kind in SCHEMA['panels'], kind
        allowed = set(SCHEMA['panels'][kind]['keys']) | PANEL_KEYS_OUTSIDE_THE_SCHEMA
        assert set(config) <= allowed, (kind, set(config) - allowed)


def test_the_image_panel_uses_no_replaced_key() -> None:
    """The image mode holds ImageModeConfig's keys but none the schema replaced (synchronize)."""
    image = panels()['Image']
    mode = image['imageMode']
    assert set(mode) <= set(SCHEMA['nested']['imageMode']['keys'])
    replaced = {key.split('.', 1)[1] for key in SCHEMA['replaced'] if key.startswith('imageMode.')}
    assert not set(mode) & replaced
    for settings in mode['annotations'].values():
        assert set(settings) <= set(SCHEMA['nested']['annotations.*']['keys'])


def test_the_image_panel_synchronises_the_camera_and_both_annotations() -> None:
    """The panel-level synchronize is on, for the image and each annotation topic it shows."""
    image = panels()['Image']
    topics = {image['imageMode']['imageTopic'], *image['imageMode']['annotations']}
    assert topics == {'/camera/image_raw', '/detections/annotations', '/lanes/annotations'}
    assert image['synchronize'] is True
    assert image['syncedTopics'] == dict.fromkeys(topics, True)


def test_the_layout_tree_names_every_panel_once() -> None:
    """The split tree places each configured panel, and nothing else."""
    def leaves(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        assert isinstance(node, dict)
        return leaves(node['first']) + leaves(node['second'])

    assert sorted(leaves(LAYOUT['layout'])) == sorted(LAYOUT['configById'])
