"""Simulators named by URL (issue 35), as pyserial's ``serial_for_url`` names its handlers:
``sim://shuffler?seed=7``, ``sim://shoe/beetek``. The URL must agree with ``[device]``; a bad one
is refused naming the key and the problem; a good one opens the simulator the registry finds."""

from __future__ import annotations

import pytest

from controller.service.config import DeviceKind, ShoeDialect, parse_config
from controller.service.errors import ConfigError, ServiceError
from tests.controller.service.conftest import MINIMAL

SHOE = MINIMAL.replace('kind = "shuffler"', 'kind = "shoe"\ndialect = "beetek"')


def _device(text: str, url: str):  # noqa: ANN202 - a DeviceConfig
    return parse_config(text.replace('"/dev/table-shuffler"', f'"{url}"'),
                        source="tablectl.toml").device


def test_a_seeded_shuffler_by_url() -> None:
    device = _device(MINIMAL, "sim://shuffler?seed=7")
    assert device.simulated and device.kind is DeviceKind.SHUFFLER
    assert (device.seed, device.shuffle_model) == (7, "fair")
    assert _device(MINIMAL, "sim://shuffler?seed=7&model=one-pass-10").shuffle_model == "one-pass-10"
    assert _device(MINIMAL, "sim://shuffler").seed is None


def test_a_shoe_by_url_with_or_without_its_dialect() -> None:
    for url in ("sim://shoe/beetek", "sim://shoe", "sim://shoe/beetek?seed=3"):
        device = _device(SHOE, url)
        assert device.simulated and device.dialect is ShoeDialect.BEETEK


@pytest.mark.parametrize(("text", "url", "problem"), [
    (MINIMAL, "sim://shoe/beetek", "this [device] is a shuffler"),
    (MINIMAL, "sim://", "names a missing kind"),
    (MINIMAL, "sim://shuffler/framed", "a shuffler has no dialect"),
    (SHOE, "sim://shuffler", "this [device] is a shoe: sim://shoe/beetek"),
    (SHOE, "sim://shoe/scanner", "the [device] dialect is 'beetek'"),
    (MINIMAL, "sim://shuffler?seed=-1", "seed must be a whole number"),
    (MINIMAL, "sim://shuffler?seed=x", "seed must be a whole number"),
    (MINIMAL, "sim://shuffler?seed=1&seed=2", "give seed once"),
    (MINIMAL, "sim://shuffler?speed=1", "unknown query key 'speed'"),
    (MINIMAL, "sim://shuffler?seed", "its query is not key=value"),
    (MINIMAL, "sim://shuffler?seed=", "give seed once, with a value"),
    (MINIMAL, "sim://shuffler#x", "no fragment"),
    (SHOE, "sim://shoe?model=one-pass-10", "a shoe has none"),
])
def test_a_bad_sim_url_is_refused_naming_the_key(text: str, url: str, problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _device(text, url)
    assert "device.url" in str(refused.value) and problem in str(refused.value)


def test_the_url_opens_the_simulator_it_names(tmp_path) -> None:  # noqa: ANN001
    """Through the service's own device wiring: the seed reaches the simulator (two opens with
    one seed shuffle alike, another seed differently), and a model the simulator lacks is
    refused by it, naming the URL."""
    import queue

    from controller.service.wiring.devices import open_device

    def first_deck(url: str) -> list[int]:
        """The order the simulated mechanism would give its first shuffle (its model, drawn
        from the simulator's seeded generator; the device is never started)."""
        device = open_device(_device(MINIMAL, url), queue.Queue())
        try:
            return list(device.sim.model.order())
        finally:
            device.close()

    assert first_deck("sim://shuffler?seed=7") == first_deck("sim://shuffler?seed=7")
    assert first_deck("sim://shuffler?seed=7") != first_deck("sim://shuffler?seed=8")
    with pytest.raises(ServiceError, match=r"sim://shuffler\?model=nope.*no shuffling model"):
        open_device(_device(MINIMAL, "sim://shuffler?model=nope"), queue.Queue())
