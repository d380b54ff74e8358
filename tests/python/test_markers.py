"""The markers `scripts/test --fast` and `-m` select by are set from what a test uses
(tests/python/conftest.py), so a test cannot start a localnet without saying so."""

from __future__ import annotations

import pytest

from support.localnet import LocalnetProcess


def test_a_test_using_the_localnet_fixture_is_marked_localnet(request, localnet):
    assert request.node.get_closest_marker("localnet") is not None


def test_a_localnet_started_by_a_test_not_marked_localnet_fails_it(tmp_path):
    node = LocalnetProcess(tmp_path)
    with pytest.raises(pytest.fail.Exception, match="mark it @pytest.mark.localnet"):
        node.start()
    assert node.process is None, "refused before any process started"


@pytest.mark.localnet
def test_a_test_marked_localnet_may_start_one(tmp_path):
    node = LocalnetProcess(tmp_path)
    try:
        assert node.start().startswith("http://127.0.0.1:")
    finally:
        node.stop()
