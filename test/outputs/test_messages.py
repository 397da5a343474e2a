"""Result messages follow vision_msgs: class_id is the id that LabelInfo maps to a name."""
from __future__ import annotations

import numpy as np
from std_msgs.msg import Header

from support.published_messages import detection_array_message
from triton_perception.outputs.result_messages import (class_index, detections_from_message,
                                                       label_info_message, load_labels)


def test_class_id_is_the_id_label_info_names() -> None:
    """
    A detection's class_id is the numeric id that LabelInfo maps to its name.

    A vision_msgs consumer can name it, and the detections read back as sent.
    """
    labels = load_labels()
    rows = np.array([[10, 20, 110, 220, 0.9, 2], [0, 0, 5, 5, 0.5, 5]], dtype=np.float32)
    message = detection_array_message(rows, Header(frame_id='camera'))
    info = label_info_message(labels, Header(frame_id='camera'), 0.25)
    names = {item.class_id: item.class_name for item in info.class_map}
    class_ids = [detection.results[0].hypothesis.class_id for detection in message.detections]
    assert class_ids == ['2', '5']
    # What a vision_msgs consumer (e.g. Isaac ROS's visualiser) does with it:
    assert [names[int(class_id)] for class_id in class_ids] == ['car', 'bus']
    assert np.allclose(detections_from_message(message, labels), rows)


def test_class_names_from_older_bags_are_still_read() -> None:
    """Class ids given as names, as older bags have them, still read; an unknown name is -1."""
    labels = load_labels()
    assert class_index('car', labels) == 2
    assert class_index('7', labels) == 7
    assert class_index('unicorn', labels) == -1
