"""The public face of evaluation/comparison/: read by type checkers and by faces.lazy_face."""
from triton_perception.evaluation.comparison.folder_comparison import compare as compare
from triton_perception.evaluation.comparison.pair_evaluations import (CompareOptions as CompareOptions)
