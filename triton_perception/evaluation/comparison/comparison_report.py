"""
What two runs' comparison says in report.md: a few lines on what changed and where.

Each figure's agreement with its interval and whether it is flagged, the box, class, track and
lane changes, and the frames that changed most (run_comparison.py computes them).
"""
from __future__ import annotations

from triton_perception.evaluation.metrics import RunComparison

PLOT_FILE = 'agreement.png'  # evaluation/comparison/changed_frames.py draws it beside report.md


def runs_markdown(comparison: RunComparison) -> list[str]:
    """Return the report.md lines of two runs compared frame by frame."""
    flagged = comparison['flagged']
    lines = [f"Compared frame by frame with {comparison['old']} ({comparison['frames']} paired "
             'frames, no labels): ' + (f"CHANGED: {', '.join(flagged)}." if flagged
                                       else 'no change beyond the thresholds.'), '']
    for name, figure in comparison['figures'].items():
        low, high = figure['interval']
        lines.append(f"- {name} agreement {figure['agreement']:.3f}, 95 % interval "
                     f"[{low:.3f}, {high:.3f}] (flagged below {1 - figure['threshold']:.2f})"
                     + (' CHANGED' if figure['flagged'] else ''))
    boxes = comparison['detection']
    lines.append(f"- boxes: {boxes['old']:.0f} old, {boxes['new']:.0f} new, "
                 f"{boxes['matched']:.0f} matched (mean IoU {boxes['mean_iou']:.3f}), "
                 f"{boxes['old_only']:.0f} only in the old run, {boxes['new_only']:.0f} only in "
                 f"the new, {boxes['class_changes']:.0f} class changes")
    lines += [f'  - {name}: ' + ', '.join(f'{kind} {count}' for kind, count in kinds.items())
              for name, kinds in comparison['per_class'].items()]
    tracking = comparison['tracking']
    if tracking:
        lines.append(f"- tracks: IDF1 of the new run against the old {tracking['IDF1']:.3f}, "
                     f"fragmentations added {tracking['fragmentations_added']:.0f}, removed "
                     f"{tracking['fragmentations_removed']:.0f}")
    lanes = comparison['lanes']
    lines.append(f"- lanes: {lanes['lanes_old']} old, {lanes['lanes_new']} new, "
                 f"{lanes['lanes_matched']} matched, {lanes['sides_changed']} sides changed; "
                 f"ego lane in the old run only in {lanes['ego_lane_old_only']} frames, in the "
                 f"new only in {lanes['ego_lane_new_only']}")
    if comparison['unpaired']:
        lines.append('- left out, answered by one run only: ' + ', '.join(
            f'{key.replace("_", " ")} {count}' for key, count in comparison['unpaired'].items()))
    if comparison['changed_frames']:
        lines.append('- changed most (stamp ns: score): ' + ', '.join(
            f'{int(stamp)}: {score:.2f}' for stamp, score in comparison['changed_frames']))
    return lines + ['', f'![agreement along the drive]({PLOT_FILE})', '']
