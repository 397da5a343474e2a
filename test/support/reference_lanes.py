"""
A reference for the served lanes.

The lane geometry as it ran inside Triton on TwinLiteNet's float heads, before the model step
returned compact uint8 maps. Only what reads the heads differs (the mask and probabilities from the
lane logits, the drivable area from the float logit margin); grouping, fitting and sides are the
package's own. The served lanes must stay within 2 px of it and the drivable area within IoU 0.98
(test_lane_processing.py).
"""
import cv2
import numpy as np

from triton_perception.lanes.lane_geometry import (check_settings, LaneResult, lanes_of_pieces,
                                                   MIN_PIECE_PIXELS, Piece)


def lane_pieces(lane_logits: np.ndarray) -> list[Piece]:
    """
    Find the connected components of the argmax lane mask of [2, h, w] logits.

    They come as row-centre pieces.
    """
    height = lane_logits.shape[1]
    mask = (lane_logits[1] > lane_logits[0]).astype(np.uint8)
    count, labels, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    ys, xs = np.nonzero(labels)
    ids = labels[ys, xs]
    probability = 1.0 / (1.0 + np.exp(lane_logits[0, ys, xs] - lane_logits[1, ys, xs]))
    probability_sums = np.bincount(ids, weights=probability, minlength=count)
    cells = ids * height + ys
    row_pixels = np.bincount(cells, minlength=count * height).reshape(count, height)
    row_x_sums = np.bincount(cells, weights=xs, minlength=count * height).reshape(count, height)
    pieces = []
    for label in range(1, count):
        if stats[label, cv2.CC_STAT_AREA] < MIN_PIECE_PIXELS:
            continue
        rows = np.nonzero(row_pixels[label])[0]
        pieces.append(Piece(y=rows + 0.5, x=row_x_sums[label, rows] / row_pixels[label, rows] + 0.5,
                            pixels=int(stats[label, cv2.CC_STAT_AREA]),
                            probability_sum=float(probability_sums[label])))
    return pieces


def postprocess(drivable_logits: np.ndarray, lane_logits: np.ndarray, image_size: np.ndarray,
                num_points: int, min_lane_length: float) -> LaneResult:
    """Turn TwinLiteNet's float heads ([1, 2, h, w] each) into lanes and a drivable area."""
    check_settings(num_points, min_lane_length)
    image_height, image_width = (int(v) for v in image_size)
    lane_logits = lane_logits.reshape(lane_logits.shape[-3:])
    mask_height, mask_width = lane_logits.shape[1:]
    lanes = lanes_of_pieces(lane_pieces(lane_logits), (mask_height, mask_width),
                            (image_height, image_width), num_points, min_lane_length)
    margin = drivable_logits.reshape(drivable_logits.shape[-3:])
    margin = margin[1] - margin[0]
    if margin.shape != (image_height, image_width):
        margin = cv2.resize(margin, (image_width, image_height), interpolation=cv2.INTER_LINEAR)
    return lanes._replace(drivable_area=np.where(margin > 0, np.uint8(255), np.uint8(0)))
