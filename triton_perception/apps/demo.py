"""
`make demo`: the highway clip through the whole pipeline, as a newcomer's first run.

Turns the clip into a bag, replays it through tritonserver and both nodes (the same
evaluation as `bag evaluate`), and renders what the pipeline published into an annotated
video and a contact sheet, next to the evaluation report.
"""
from __future__ import annotations

from pathlib import Path
import shutil
from typing import Callable, TYPE_CHECKING, TypedDict, TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray
from rosbags.highlevel import AnyReader

from triton_perception.bag import make_bag, read_images, typestore
from triton_perception.evaluation import (evaluate, EvaluationSettings, replay_speed, ReplayReport,
                                          report_markdown)
from triton_perception.outputs import (detections_from_message, draw_detections, draw_drivable_area,
                                       draw_lanes, lanes_from_cloud, load_labels, mask_from_image,
                                       track_ids_from_message)
from triton_perception.system import CLIP_HINT, DEFAULT_CLIP, SOURCE_ROOT

if TYPE_CHECKING:
    from sensor_msgs.msg import Image, PointCloud2
    from vision_msgs.msg import Detection2DArray

CONTACT_SHEET_GRID = (3, 3)
CONTACT_SHEET_TILE = (320, 180)

Result = TypeVar('Result')


class PublishedResults(TypedDict):
    """What the nodes published, by topic kind, keyed by the header stamp of its frame."""

    detections: dict[int, tuple[NDArray[np.float32], list[str]]]  # rows, track ids
    lanes: dict[int, tuple[list[NDArray[np.float32]], NDArray[np.int8]]]  # polylines, sides
    drivable_area: dict[int, NDArray[np.uint8]]


def published_results(outputs_bag: Path, labels: list[str]) -> PublishedResults:
    """Results by topic kind, keyed by the header stamp of the frame they belong to."""
    results: PublishedResults = {'detections': {}, 'lanes': {}, 'drivable_area': {}}
    with AnyReader([outputs_bag], default_typestore=typestore()) as reader:
        for connection, _time, raw in reader.messages():
            kind = connection.topic.rsplit('/', 1)[-1]
            # rosbags' message classes, with the fields of the ROS messages they mirror
            message: Detection2DArray | PointCloud2 | Image = reader.deserialize(
                raw, connection.msgtype)
            stamp = message.header.stamp.sec * 1_000_000_000 + message.header.stamp.nanosec
            if kind == 'detections':
                results['detections'][stamp] = (detections_from_message(message, labels),
                                                track_ids_from_message(message))
            elif kind == 'lanes':
                results['lanes'][stamp] = lanes_from_cloud(message)
            elif kind == 'drivable_area':
                results['drivable_area'][stamp] = mask_from_image(message).copy()
    return results


def latest_at(results: dict[int, Result], stamp: int) -> Result | None:
    """
    Return the newest result for a frame at or before `stamp`.

    The nodes drop frames under load, and a viewer shows the last result until the next one, as rviz
    would.
    """
    earlier = [key for key in results if key <= stamp]
    return results[max(earlier)] if earlier else None


def render(input_bag: Path, topic: str, outputs_bag: Path, video_path: Path,
           sheet_path: Path, rate_hz: float, frames: int) -> None:
    """
    Draw the recorded results onto the input bag's frames: an mp4 video and a contact sheet.

    Each frame gets the newest result at or before its stamp (`latest_at`). The video plays at
    `rate_hz` frames per second; the contact sheet is a 3 x 3 grid of 320 x 180 px tiles taken
    evenly over the `frames` frames.
    """
    labels = load_labels()
    results = published_results(outputs_bag, labels)
    sheet_indices = set(np.linspace(0, frames - 1, CONTACT_SHEET_GRID[0] * CONTACT_SHEET_GRID[1],
                                    dtype=int).tolist())
    tiles = []
    writer = None
    try:
        for index, image in enumerate(read_images(input_bag, topic)):
            canvas = np.ascontiguousarray(image.rgb).copy()
            mask = latest_at(results['drivable_area'], image.header_stamp_ns)
            if mask is not None and mask.shape == canvas.shape[:2]:
                draw_drivable_area(canvas, mask)
            lanes = latest_at(results['lanes'], image.header_stamp_ns)
            if lanes is not None:
                draw_lanes(canvas, *lanes)
            detections = latest_at(results['detections'], image.header_stamp_ns)
            if detections is not None:
                draw_detections(canvas, detections[0], labels, detections[1])
            bgr = cv2.cvtColor(canvas, cv2.COLOR_RGB2BGR)
            if writer is None:
                writer = cv2.VideoWriter(str(video_path), cv2.VideoWriter.fourcc(*'mp4v'),
                                         rate_hz, (bgr.shape[1], bgr.shape[0]))
            writer.write(bgr)
            if index in sheet_indices:
                tiles.append(cv2.resize(bgr, CONTACT_SHEET_TILE, interpolation=cv2.INTER_AREA))
    finally:
        if writer is not None:
            writer.release()
    columns, rows = CONTACT_SHEET_GRID
    blank = np.zeros_like(tiles[0])
    tiles += [blank] * (columns * rows - len(tiles))
    sheet = np.vstack([np.hstack(tiles[row * columns:(row + 1) * columns]) for row in range(rows)])
    cv2.imwrite(str(sheet_path), sheet)


def run_demo(video: Path, output: Path, profile: str, log: Callable[[str], None]) -> int:
    """
    Run the demo: `video` -> camera bag -> evaluated replay -> annotated video and sheet.

    The camera bag is made once and kept in `output`; the evaluation is redone each run. Prints
    the report and where the files are.

    Returns 0, or 1 when the report shows a problem the demo checks for (`demo_problems`).

    Raises FileNotFoundError if `video` does not exist.
    """
    if not video.is_file():
        raise FileNotFoundError(f'demo video {video} not found: {CLIP_HINT}')
    output.mkdir(parents=True, exist_ok=True)
    input_bag = output / 'input_bag'
    if not input_bag.exists():
        log(f'making a camera bag from {video}')
        make_bag(video, input_bag, progress=log)
    evaluation = output / 'evaluation'
    shutil.rmtree(evaluation, ignore_errors=True)
    labels = clip_labels(video)
    report = evaluate(EvaluationSettings(
        bag=input_bag, output=evaluation, profile=profile, record_masks=True, labels=labels,
        timing='lockstep', lanes_scored='ego', lane_rows_from_labels=True, sparse_tracks=True),
        log=log)
    log('rendering the annotated video and the contact sheet')
    video_path, sheet_path = output / 'annotated.mp4', output / 'contact_sheet.png'
    rate_hz = 1e9 / max(1, _frame_period_ns(input_bag))
    render(input_bag, report['input']['topic'], Path(report['outputs_bag']), video_path,
           sheet_path, rate_hz, report['input']['frames'])
    print(report_markdown(report))
    if 'accuracy' in report:
        lanes, tracking = report['accuracy']['lanes'], report['accuracy']['tracking']
        print(f"against the clip's labels (test/data/highway_clip/labels): lane F1 "
              f"{lanes['F1']:.2f} (ego lines, {lanes['frames']} frames, "
              f"{lanes['frames_without_output']} without an output), tracking IDF1 "
              f"{tracking['IDF1']:.2f} (MOTA {tracking['MOTA']:.2f}, {tracking['frames']} frames)")
    print(f"replay: {replay_speed(report['input'])}")
    print(f'annotated video: {video_path}\ncontact sheet:   {sheet_path}\n'
          f'report:          {evaluation / "report.md"} (and report.json)\n'
          f'outputs bag:     {report["outputs_bag"]}')
    problems = demo_problems(report)
    for node, figures in report['nodes'].items():
        if figures['lost_before_node']:
            print(f"{node}: {figures['lost_before_node']} of {figures['frames_in']} frames were "
                  'lost before the node (counted from sequence gaps; a transport loss, not a '
                  'processing fault)')
    for problem in problems:
        print(f'demo FAILED: {problem}')
    return 1 if problems else 0


def clip_labels(video: Path) -> tuple[Path, ...]:
    """Return the labels of the default clip in a checkout (CULane lanes, MOT cars), else ()."""
    labels = SOURCE_ROOT / 'test' / 'data' / 'highway_clip' / 'labels'
    if video.resolve() != DEFAULT_CLIP.resolve() or not labels.is_dir():
        return ()
    return (labels / 'culane', labels / 'gt.txt')


def demo_problems(report: ReplayReport) -> list[str]:
    """
    Return the faults that fail the demo.

    A node that is down or not accounting for its frames, failed frames, or no results. Frames lost
    before a node are reported, not failed on: on a loaded machine the transport may lose one
    without anything being wrong in the package.
    """
    problems = []
    for node, figures in report['nodes'].items():
        if figures['received'] == 0:
            problems.append(f'{node} received no frame (is it running? see the log above)')
        elif figures['published'] == 0:
            problems.append(f'{node} published no result')
        if figures['failed']:
            problems.append(f"{node}: {figures['failed']} frames failed: {figures['reasons']}")
        if not figures['accounted']:
            problems.append(f'{node}: frames not accounted for (received '
                            f"{figures['received']} + lost {figures['lost_before_node']} of "
                            f"{figures['frames_in']} published)")
    return problems


def _frame_period_ns(bag: Path) -> int:
    with AnyReader([bag], default_typestore=typestore()) as reader:
        count = max(1, reader.message_count - 1)
        return (reader.end_time - reader.start_time) // count if reader.message_count > 1 \
            else 40_000_000
