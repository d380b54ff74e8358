"""Reliability under crashes, concurrency, outages and restarts, through real processes, real git
and a running precompact-localnet (the scenarios live in fault_trials; scripts/reliability runs
them at scale). Every scenario must end with no failure and no savepoint lost."""

from __future__ import annotations

import os
import random
import time

import pytest

from precompact.config import settings as configuration
from precompact.local import snapshot
from precompact.remote import gitstore
from support import fault_trials
from support.commands import precompact
from support.projects import new_project, store


def assert_clean(tally: fault_trials.Tally) -> None:
    assert tally.failures == [] and tally.lost == 0, (tally.lost, tally.failures)


def test_twenty_hooks_at_once_make_twenty_chained_savepoints_all_landed(tmp_path, localnet):
    assert_clean(fault_trials.concurrent_hooks(tmp_path, localnet.url, hooks=20))


@pytest.mark.slow
def test_a_hook_killed_at_any_moment_leaves_every_named_savepoint_intact(tmp_path):
    tally = fault_trials.crash_layer_1(tmp_path, trials=10, rng=random.Random(1))
    assert tally.trials == 10
    assert_clean(tally)


@pytest.mark.slow
def test_a_flush_killed_at_any_moment_loses_no_commit(tmp_path):
    tally = fault_trials.crash_layer_2(tmp_path, trials=10, rng=random.Random(2))
    assert tally.trials == 10
    assert_clean(tally)


@pytest.mark.localnet
def test_ten_savepoints_offline_never_slow_the_hook_and_all_land_after_flush(tmp_path):
    tally, slowest_hook = fault_trials.offline_then_flush(tmp_path, savepoints=10)
    assert_clean(tally)
    assert slowest_hook < 5, "the hook waited on the network"


@pytest.mark.localnet
def test_localnet_killed_mid_post_neither_skips_nor_reposts(tmp_path):
    tally = fault_trials.localnet_restart(tmp_path, trials=2, rng=random.Random(3))
    assert tally.trials == 2
    assert_clean(tally)


def saved_once(tmp_path):
    """A project with the git layer on and one savepoint not yet committed."""
    project = new_project(tmp_path, "locked", git_layer=True, chain_layer=False)
    snapshot.create_savepoint(
        snapshot.Settings.of(configuration.load(project.path)), snapshot.Session("s", None, str(project.path))
    )
    return project


def savepoint_then_lock(tmp_path, age_seconds: float):
    project = saved_once(tmp_path)
    lock = store(project.path) / "refs" / "heads" / f"{project.branch}.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")
    os.utime(lock, (time.time() - age_seconds,) * 2)
    return project, lock


def test_a_branch_lock_left_by_a_killed_git_is_cleared(tmp_path):
    project, lock = savepoint_then_lock(tmp_path, age_seconds=gitstore.STALE_REF_LOCK_SECONDS + 1)
    result = precompact(project.path, "flush")
    assert result.returncode == 0, result.stdout
    assert not lock.exists()


@pytest.mark.slow
def test_a_fresh_branch_lock_is_left_to_its_owner(tmp_path):
    project, lock = savepoint_then_lock(tmp_path, age_seconds=0)
    result = precompact(project.path, "flush")
    assert result.returncode == 3  # queued
    assert "stayed locked" in result.stdout
    assert lock.exists()


def test_a_lock_left_on_the_remote_is_named_with_its_fix(tmp_path):
    project = saved_once(tmp_path)
    lock = project.remote / "refs" / "heads" / f"{project.branch}.lock"
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    result = precompact(project.path, "flush")
    assert result.returncode == 3  # queued
    [line] = [line for line in result.stdout.splitlines() if "Layer 2" in line]
    assert f"{project.branch}.lock" in line and "delete that file" in line
