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


# The vm scenario converges only the kernel-bound tags (molecule/vm/molecule.yml); the apt work of
# nvidia_driver and cuda_toolkit, and the serving layer, are proven in the container scenario.
IN_CONTAINER_ONLY = "proven in the container scenario; the vm converges only kernel-bound tags"


@pytest.fixture
def container_scope(kernel_tier):
    """Skips a check of work that the vm scenario does not converge."""
    if kernel_tier:
        pytest.skip(IN_CONTAINER_ONLY)
