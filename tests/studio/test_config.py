"""``studio.toml`` is checked like the service's config: a typo or a bad value is one line
naming the key, never a gateway that starts with a protection silently off."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.studio.config import load_studio_config
from controller.studio.errors import StudioConfigError

GOOD = ('[studio]\nport = 8443\ncertificate = "s.pem"\nprivate_key = "s.key"\n'
        'client_ca = "ca.pem"\nclients = ["gs1"]\n')


@pytest.mark.parametrize(("text", "named"), [
    (GOOD + "max_batchs = 10\n", "studio.max_batchs: unknown key"),
    (GOOD.replace("8443", "0"), "studio.port"),
    (GOOD.replace('["gs1"]', "[]"), "studio.clients"),
    (GOOD.replace('["gs1"]', '["gs 1"]'), "studio.clients"),
    (GOOD + 'listen = "0.0.0.0:80"\n', "studio.listen"),
    (GOOD + "max_batch = 5001\n", "studio.max_batch"),
    ("[feed]\nx = 1\n", "needs exactly one [studio] table"),
])
def test_a_bad_value_is_refused_by_name(tmp_path: Path, text: str, named: str) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(text)
    with pytest.raises(StudioConfigError, match=named.replace("[", r"\[").replace("]", r"\]")):
        load_studio_config(path)


def test_relative_paths_are_beside_the_file(tmp_path: Path) -> None:
    path = tmp_path / "studio.toml"
    path.write_text(GOOD)
    config = load_studio_config(path)
    assert config.certificate == tmp_path / "s.pem" and config.max_batch == 500
    assert config.listen == "127.0.0.1", "local only unless an address is configured"
