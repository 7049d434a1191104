"""Helpers shared by the testinfra checks of every Molecule scenario."""
import os

import pytest

SCENARIO = os.environ.get("MOLECULE_SCENARIO_NAME", "")


@pytest.fixture
def scenario():
    """Name of the Molecule scenario under test (``container`` or ``vm``)."""
    return SCENARIO


@pytest.fixture
def kernel_tier(scenario):
    """True where the host has its own kernel (the VM); container checks skip kernel-only facts."""
    return scenario == "vm"
