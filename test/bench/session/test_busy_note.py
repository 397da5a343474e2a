"""A bench result line says when it was measured on a busy machine."""
from __future__ import annotations

from triton_perception.bench.session.run_record import busy_note


def test_a_result_line_names_a_busy_machine() -> None:
    """Above a load average of 0.5 the line says so; at or below it adds nothing."""
    assert busy_note(0.5) == '' and busy_note(0.12) == ''
    assert "load average 3.40 at the start, above 0.5: a busy machine's figures" in busy_note(3.4)
