"""A Ray cluster joined with ray_address whose CPUs cannot hold the ingest's actors (issue 36, item 5: a worker
that cannot start is reported within a bound, never waited on). Table-driven over what the cluster reports,
without starting Ray: no CPU is refused at once with EcoLens's message and fix (it waited the whole
ray_start_timeout_s, then blamed the embedder or the workers' memory); some CPUs give one actor per CPU less
one, never none."""
from __future__ import annotations

import pytest

from core.contracts.errors import BackendError
from core.ingest.ray_session import _fitted


class FakeRay:
    def __init__(self, resources):
        self.resources = resources

    def cluster_resources(self):
        if isinstance(self.resources, Exception):
            raise self.resources
        return self.resources


CASES = [  # (what the cluster reports, actors asked, actors used or the message)
    ({"CPU": 0.0, "GPU": 1.0}, 2, "the Ray cluster has no CPU for the ingest's actors (each needs one; it has 0)"),
    ({"GPU": 1.0}, 1, "the Ray cluster has no CPU"),
    ({"CPU": 0.5}, 1, "the Ray cluster has no CPU"),
    ({"CPU": 1.0}, 4, 1),
    ({"CPU": 2.0}, 4, 1),
    ({"CPU": 16.0}, 4, 4),
    (ConnectionError("gone"), 3, 3),  # the cluster cannot be asked: the actors asked for, and Ray's bound
]


@pytest.mark.parametrize("resources,workers,expected", CASES, ids=[str(c[0]) for c in CASES])
def test_actors_fitted_to_the_clusters_cpus(resources, workers, expected):
    if isinstance(expected, str):
        with pytest.raises(BackendError) as err:
            _fitted(FakeRay(resources), workers)
        assert expected in err.value.message, err.value.message
        assert "--num-cpus" in err.value.hint and "--engine local" in err.value.hint
    else:
        assert _fitted(FakeRay(resources), workers) == expected
