"""
Two evaluations of one drive compared without labels: `bag evaluate --expected`, `bag compare`.

A run is a `bag evaluate` output folder: its report.json beside its outputs bag. Both runs'
outputs are paired frame by frame (run_pairing.py); each figure's mean agreement over the
paired frames gets a 95 % bootstrap interval (the frames resampled, as `--expected` does for
accuracy), and a figure is flagged only when the whole interval lies below 1 - its threshold:
a change that noise alone could explain is not flagged. Two runs must have replayed the same
camera and frames; frames answered by one run only are never paired (with lockstep timing,
where every frame is answered, they stop the comparison).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import struct
from typing import Mapping, TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader, AnyReaderError

from triton_perception.bag import BagError, read_images, typestore
from triton_perception.evaluation.comparison.expected_frames import bootstrap_interval
from triton_perception.evaluation.comparison.run_pairing import (FIGURES, frame_scores,
                                                                 most_changed, pair_runs, Pairing,
                                                                 RunOutputs)
from triton_perception.evaluation.metrics import (ChangeFigure, read_outputs, read_report,
                                                  ReplayReport, REPORT_JSON, RunComparison)
from triton_perception.outputs import class_name, mask_from_image

if TYPE_CHECKING:
    from sensor_msgs.msg import Image

# A figure is flagged when its whole interval of mean agreement lies below 1 - threshold.
DEFAULT_THRESHOLDS = {'detection': 0.05, 'identity': 0.10, 'lanes': 0.05, 'ego_lane': 0.05,
                      'drivable_area': 0.05}
CHANGED_FRAMES = 10  # listed in the report, by change score
REPORT_FILE = REPORT_JSON
OUTPUTS_BAG = 'outputs'


@dataclass(frozen=True)
class Run:
    """One evaluation: where its report is, the report, and its outputs read back."""

    directory: Path
    report: ReplayReport
    outputs: RunOutputs


def report_file(path: Path) -> Path:
    """Return the report.json of an evaluation given as its --output folder or the file itself."""
    return path / REPORT_FILE if path.is_dir() else path


def read_masks(outputs_bag: Path) -> dict[int, NDArray[np.bool_]]:
    """Return the recorded drivable-area masks (empty when the run recorded none)."""
    masks = {}
    with AnyReader([outputs_bag], default_typestore=typestore()) as reader:
        connections = [c for c in reader.connections if c.topic.endswith('/drivable_area')]
        if not connections:
            return {}
        for connection, _time, raw in reader.messages(connections=connections):
            message: Image = reader.deserialize(raw, connection.msgtype)  # rosbags' mono8 Image
            stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
            masks[stamp] = mask_from_image(message) > 0
    return masks


def run_outputs(report: ReplayReport, directory: Path, class_names: list[str]) -> Run:
    """
    Read the outputs bag beside a run's report.

    Raises BagError naming the bag when it is missing or cannot be read.
    """
    outputs_bag = directory / OUTPUTS_BAG
    if not (outputs_bag / 'metadata.yaml').is_file():
        raise BagError(f'{directory}: no outputs bag beside report.json ({outputs_bag} is '
                       'missing): compare evaluations whose outputs folder is kept')
    try:
        outputs = read_outputs(outputs_bag, class_names)
        masks = read_masks(outputs_bag)
    except (AnyReaderError, OSError, ValueError, KeyError, IndexError, struct.error) as error:
        raise BagError(f'{outputs_bag}: cannot read the outputs bag ({type(error).__name__}: '
                       f'{error}); evaluate that drive again') from None
    return Run(directory, report, RunOutputs(outputs.detections, outputs.tracks, outputs.lanes,
                                             outputs.lane_sides, masks))


def load_run(path: Path, class_names: list[str]) -> Run:
    """Read an evaluation (its --output folder or its report.json) and its outputs bag."""
    path = report_file(Path(path))
    if not path.is_file():
        raise BagError(f'{path}: no report.json of a `bag evaluate` run; give its --output '
                       'folder or its report.json')
    return run_outputs(read_report(path), path.parent, class_names)


def thresholds_of(overrides: Mapping[str, float]) -> dict[str, float]:
    """
    Return the default thresholds with the user's overrides (figure -> threshold).

    Raises BagError for an unknown figure or a threshold outside [0, 1).
    """
    thresholds = dict(DEFAULT_THRESHOLDS)
    for name, value in overrides.items():
        if name not in thresholds:
            raise BagError(f'--change-threshold {name}: no such figure; one of '
                           f'{", ".join(thresholds)}')
        if not 0.0 <= value < 1.0:
            raise BagError(f'--change-threshold {name}={value}: give a share in [0, 1)')
        thresholds[name] = value
    return thresholds


def change_figure(values: NDArray[np.float64], threshold: float) -> ChangeFigure:
    """Return the mean agreement of `values`, its bootstrap interval and whether it is flagged."""
    low, high = bootstrap_interval(values)
    return {'frames': len(values), 'agreement': round(float(values.mean()), 4),
            'interval': [round(low, 4), round(high, 4)], 'threshold': threshold,
            'flagged': high < 1.0 - threshold}


def check_pairable(old: Run, new: Run) -> None:
    """Raise BagError when the two runs replayed different cameras or different frames."""
    before, after = old.report['input'], new.report['input']
    if before['topic'] != after['topic']:
        raise BagError(f"{old.directory} replayed {before['topic']} and {new.directory} "
                       f"{after['topic']}: compare runs of one camera topic")
    if before['frames'] != after['frames']:
        raise BagError(f"{old.directory} replayed {before['frames']} frames and {new.directory} "
                       f"{after['frames']}: compare runs of the same drive")


def check_unpaired(old: Run, new: Run, pairing: Pairing) -> dict[str, int]:
    """
    Return how many frames each output has in one run only.

    Raises BagError for any such frame when both runs replayed in lockstep, where every frame
    is answered: the runs then replayed different frames.
    """
    counts = {key: len(stamps) for key, stamps in pairing.unpaired.items()
              if stamps and not key.startswith('tracks')}
    lockstep = all(run.report['input'].get('timing') == 'lockstep' for run in (old, new))
    if counts and lockstep:
        key = next(iter(counts))
        raise BagError(f'{counts[key]} frames with {key.replace("_", " ")} (first stamp '
                       f'{pairing.unpaired[key][0]}) in lockstep runs, where every frame is '
                       f'answered: {old.directory} and {new.directory} replayed different frames')
    return counts


def frame_size(report: ReplayReport) -> tuple[int, int]:
    """Return the replayed frames' (width, height), from the first frame of the replayed bag."""
    for image in read_images(Path(report['input']['bag']), report['input']['topic']):
        return image.rgb.shape[1], image.rgb.shape[0]
    raise BagError(f"{report['input']['bag']} has no frame on {report['input']['topic']}")


def compare_runs(old: Run, new: Run, thresholds: Mapping[str, float],
                 class_names: list[str]) -> tuple[RunComparison, Pairing]:
    """Pair two runs of one drive and judge each figure; return the comparison and pairing."""
    check_pairable(old, new)
    pairing = pair_runs(old.outputs, new.outputs, frame_size(new.report))
    unpaired = check_unpaired(old, new, pairing)
    figures = {name: change_figure(np.array(list(pairing.per_frame[name].values())),
                                   thresholds[name])
               for name in FIGURES if pairing.per_frame.get(name)}
    scores = frame_scores(pairing.per_frame)
    counts = pairing.counts
    comparison: RunComparison = {
        'old': str(old.directory), 'new': str(new.directory), 'frames': len(scores),
        'figures': figures,
        'detection': {key: counts[f'boxes_{key}'] for key in (
            'old', 'new', 'matched', 'old_only', 'new_only')} | {
            'class_changes': counts['class_changes'], 'mean_iou': round(pairing.mean_iou(), 4)},
        'per_class': {class_name(class_names, class_id): dict(sorted(kinds.items()))
                      for class_id, kinds in sorted(pairing.per_class.items())},
        'tracking': pairing.tracking,
        'lanes': {key: counts[key] for key in ('lanes_old', 'lanes_new', 'lanes_matched',
                                               'sides_changed', 'ego_lane_old_only',
                                               'ego_lane_new_only')},
        'unpaired': unpaired,
        'flagged': [name for name, figure in figures.items() if figure['flagged']],
        'changed_frames': [[stamp, scores[stamp]]
                           for stamp in most_changed(scores, CHANGED_FRAMES)],
        'per_frame': {name: {str(stamp): round(value, 4) for stamp, value in values.items()}
                      for name, values in pairing.per_frame.items() if values}}
    return comparison, pairing
