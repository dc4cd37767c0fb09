"""What the operator has been told to do besides what its state says: the one command an input
made due (STATUS to resync after a reboot, a fault cleared or a refusal; CLEAR_FAULT by a
supervisor; END_ROUND before retrying a refused shuffle), and the words of the last failure for
the status line. One part of the operator, the only code that writes these fields.
"""

from __future__ import annotations

from dataclasses import dataclass

from controller.service.operator.states import DeviceAction


@dataclass(slots=True)
class Orders:
    """``due``: the command to send before anything the state would choose (``None``: none);
    ``last_error``: the last failed command's words, empty once a command succeeds."""

    due: DeviceAction | None = None
    last_error: str = ""

    def give(self, action: DeviceAction) -> None:
        """``action`` is due next (it replaces one not yet sent)."""
        self.due = action

    def give_unless_due(self, action: DeviceAction) -> None:
        """``action`` is due next unless another command already is."""
        if self.due is None:
            self.due = action

    def sent(self, action: DeviceAction) -> None:
        """``action`` was sent (answered or failed): it is no longer due."""
        if self.due is action:
            self.due = None

    def drop(self) -> None:
        """Nothing is due (the operator holds for a supervisor)."""
        self.due = None

    def succeeded(self) -> None:
        self.last_error = ""

    def failed(self, words: str) -> None:
        self.last_error = words


__all__ = ["Orders"]
