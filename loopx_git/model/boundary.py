"""The six booleans a record carries to say what it does not contain."""

from __future__ import annotations

from loopx_git.model.record import Record


class Boundary(Record):
    """The six booleans that prove what a record does not contain."""

    raw_task_text_recorded: bool = False
    raw_logs_recorded: bool = False
    raw_trajectory_recorded: bool = False
    raw_session_transcript_recorded: bool = False
    credential_values_recorded: bool = False
    absolute_paths_recorded: bool = False
