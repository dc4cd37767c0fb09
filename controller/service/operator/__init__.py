"""The service's device operator: the device side of a round as a state machine.

- :mod:`.states`: the device-side states, the round's stages, actions and waits;
- :mod:`.roundview`: the round as the operator sees it, from typed round events;
- :mod:`.machine`: the ``transitions`` machine that decides the next command;
- :mod:`.effort`: backoff and the once-per-streak failure record;
- :mod:`.runner`: the thread that feeds the machine and talks to the driver.
"""

from controller.service.operator.machine import DeviceMachine
from controller.service.operator.runner import DeviceOperator
from controller.service.operator.states import Action, HoldReason, Op, Stage

__all__ = ["Action", "DeviceMachine", "DeviceOperator", "HoldReason", "Op", "Stage"]
