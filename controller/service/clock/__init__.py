"""The service's trusted time: the kernel clock read without changing it (:mod:`.kernel`) and
the monitor that reports its quality and steps to the table like a device (:mod:`.watch`).

Imports only the service's base (the ``[clock]`` policy is :mod:`controller.service.policy`)."""

from __future__ import annotations
