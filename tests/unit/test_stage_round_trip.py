"""A search's stages go into the session log as JSON objects and come back as the search gave them: a stage
that is not a mapping (the stand-in embedder's name) was read back as {"value": "hash"}, and opening such a
search from the History failed with a server error."""
import pytest

from ui import present
from ui.search_record import read_stage, stored_stage


@pytest.mark.parametrize("stage", ["hash", 3, None, [1, 2], {"value": 1, "other": 2}, {"visualizations": []}])
def test_a_stage_comes_back_as_it_was_given(stage):
    stored = stored_stage(stage)
    assert isinstance(stored, dict)
    assert read_stage(stored) == stage


def test_a_logged_stand_in_search_reads_its_scale_again():
    logged = {name: stored_stage(value) for name, value in {"standin_similarity": "hash"}.items()}
    stages = {name: read_stage(value) for name, value in logged.items()}
    name, meaning = present.scale_words("similarity", stages)
    assert name == "stand-in score" and "'hash'" in meaning
