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


def _seeded(text: str, url: str, seed: str):  # noqa: ANN202 - a DeviceConfig
    return parse_config(text.replace('url = "/dev/table-shuffler"',
                                     f'url = "{url}"\nseed = {seed}'),
                        source="tablectl.toml").device


def test_device_seed_seeds_a_simulated_device() -> None:
    """``device.seed`` (issue 44): with ``url = "sim"`` or a ``sim://`` URL without a seed, it is
    the simulator's seed, as ``?seed=`` would be."""
    assert _seeded(MINIMAL, "sim", "7").seed == 7
    assert _seeded(MINIMAL, "sim://shuffler", "7").seed == 7
    assert _seeded(SHOE, "sim://shoe/beetek", "0").seed == 0
    assert _device(MINIMAL, "sim").seed is None


@pytest.mark.parametrize(("text", "url", "seed", "problem"), [
    (MINIMAL, "/dev/table-shuffler", "7", "only a simulated device"),
    (MINIMAL, "socket://10.0.0.5:4001", "7", "only a simulated device"),
    (MINIMAL, "sim://shuffler?seed=3", "7", "give the seed once"),
    (MINIMAL, "sim", "-1", "device.seed"),
    (MINIMAL, "sim", '"7"', "device.seed"),
    (MINIMAL, "sim", str(2**63), "device.seed"),
])
def test_a_bad_device_seed_is_refused_naming_it(text: str, url: str, seed: str,
                                                problem: str) -> None:
    with pytest.raises(ConfigError) as refused:
        _seeded(text, url, seed)
    assert "device.seed" in str(refused.value) and problem in str(refused.value)


def test_a_seeded_device_paces_its_reconnects_from_the_seed() -> None:
    """The backoffs' jitter of a seeded simulator comes from its seed: the same waits every run
    of one seed, others for another seed, the process's own stream without a seed."""
    from controller.service.wiring.devices import sim_jitter

    def waits(seed: int) -> list[float]:
        jitter = sim_jitter(seed)
        assert jitter is not None
        return [jitter() for _ in range(5)]

    assert waits(7) == waits(7) and waits(7) != waits(8)
    assert sim_jitter(None) is None
