"""
Tracks -> rviz markers: a text and a velocity arrow per track.

Apart from track_messages.py because they need only visualization_msgs: with
autoware_perception_msgs missing the markers are still published.
"""
from __future__ import annotations

import math

from geometry_msgs.msg import Point
import numpy as np
from std_msgs.msg import ColorRGBA, Header
from visualization_msgs.msg import Marker, MarkerArray

from triton_perception.tracking.ground_motion import GroundTrack

ARROW_SECONDS = 1.0  # the velocity arrow shows where the object is in this time
TEXT_HEIGHT_M = 0.8


def describe(track_id: str, class_name: str, track: GroundTrack) -> str:
    """Write the marker text: class, id, speed and, when closing on the ego path, the TTC."""
    text = f'{class_name} #{track_id} {float(np.linalg.norm(track.velocity)):.1f} m/s'
    if math.isfinite(track.time_to_collision):
        text += f' TTC {track.time_to_collision:.1f} s'
    return text


def track_markers_message(header: Header,
                          rows: list[tuple[str, str, GroundTrack]]) -> MarkerArray:
    """
    Draw the tracks for rviz: DELETEALL, then a text and an arrow per track.

    Per (track id, class name, track): a text with the id, speed and time to collision, and an
    arrow from the object to where its velocity takes it in ARROW_SECONDS. Markers keep the
    default lifetime 0 (until replaced): each frame's DELETEALL clears the previous ones.
    """
    markers = [Marker(header=header, ns='tracks', action=Marker.DELETEALL)]
    for index, (track_id, class_name, track) in enumerate(rows):
        start = Point(x=float(track.position[0]), y=float(track.position[1]), z=0.0)
        end = Point(x=start.x + float(track.velocity[0]) * ARROW_SECONDS,
                    y=start.y + float(track.velocity[1]) * ARROW_SECONDS, z=0.0)
        closing = math.isfinite(track.time_to_collision)
        colour = ColorRGBA(r=1.0, g=0.2, b=0.2, a=1.0) if closing else ColorRGBA(
            r=0.2, g=0.8, b=1.0, a=1.0)
        text = Marker(header=header, ns='tracks', id=2 * index, type=Marker.TEXT_VIEW_FACING,
                      action=Marker.ADD, color=colour,
                      text=describe(track_id, class_name, track))
        text.pose.position.x, text.pose.position.y = start.x, start.y
        text.pose.position.z = 2.0
        text.pose.orientation.w = 1.0
        text.scale.z = TEXT_HEIGHT_M
        arrow = Marker(header=header, ns='tracks', id=2 * index + 1, type=Marker.ARROW,
                       action=Marker.ADD, color=colour,
                       points=[start, end])
        arrow.pose.orientation.w = 1.0
        arrow.scale.x, arrow.scale.y, arrow.scale.z = 0.15, 0.4, 0.4
        markers.extend([text, arrow])
    return MarkerArray(markers=markers)
