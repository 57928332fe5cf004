"""Shared fixtures: one local Ray instance for every Ray test of the session (started only if a test asks for it)."""

import pytest


@pytest.fixture(scope="session")
def ray_session():
    """Return the ``ray`` module after starting a small local instance (2 CPUs, 128 MiB object store, no dashboard); shut down at the end."""
    ray = pytest.importorskip("ray")
    from training.distributed import init_ray

    init_ray("local", num_cpus=2, object_store_mb=128)
    yield ray
    ray.shutdown()
