"""The service's device operator: the device side of a round as a state machine.

- :mod:`.states`: the device-side states, the round's stages, actions and waits;
- :mod:`.machine`: the plain ``transitions`` model and its declarative transition list, which
  decides the next command from what its parts say;
- its parts, each the only writer of its fields (``tests/controller/service/
  test_operator_ownership.py``): :mod:`.roundview` (the round, from typed round events),
  :mod:`.reported` (the device's own word), :mod:`.effort` (the failure streak, backoff and what
  a round has cost), :mod:`.waits` (now, deadlines), :mod:`.orders` (the command an input made
  due, the last error);
- :mod:`.wayout`: what the device side waits for, in words, and the way out;
- :mod:`.clearing`: a supervisor's ``clear-fault`` and the device's answer;
- :mod:`.runner`: the thread that feeds the machine and talks to the driver.

The operator speaks device events and device-level words (:mod:`drivers.events`); it imports no
wire protocol module.
"""

from controller.service.operator.machine import DeviceMachine
from controller.service.operator.runner import DeviceOperator
from controller.service.operator.states import DeviceAction, HoldReason, Op, Stage

__all__ = ["DeviceAction", "DeviceMachine", "DeviceOperator", "HoldReason", "Op", "Stage"]
