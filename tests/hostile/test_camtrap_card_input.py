"""Hostile deployments CSVs: each refused with a message naming what is wrong and the fix."""
from __future__ import annotations

import pytest

from core.camtrap.deployments import read_deployments_csv
from core.contracts.errors import InputError


@pytest.mark.parametrize("text,says", [
    ("deploymentID,lattitude,site_notes\nA,1,x\n", "lattitude, site_notes"),
    ("latitude,longitude\n1,2\n", "no deploymentID column"),
    ("deploymentID,latitude\nA,north\n", "line 2, column latitude: 'north' is not a number"),
    ("deploymentID,latitude\nA,91\n", "91 is outside -90 to 90"),
    ("deploymentID,utc_offset\nA,+05:17\n", "impossible offset +05:17"),
    ("deploymentID,deploymentStart\nA,2024-05-01T12:00:00+15:00\n", "impossible offset +15:00"),
    ("deploymentID,clock_offset_s\nA,ninety\n", "'ninety' is not a number"),
    ("deploymentID,baitUse\nA,maybe\n", "'maybe' is not true or false"),
    ("deploymentID\nA\nA\n", "'A' is given twice"),
    ("deploymentID,latitude\n,1\n", "line 2 has no deploymentID"),
    ("deploymentID\nA,b,c\n", "more cells than the header"),
])
def test_bad_deployments_csv(tmp_path, text, says):
    f = tmp_path / "deployments.csv"
    f.write_text(text)
    with pytest.raises(InputError) as err:
        read_deployments_csv(f)
    assert says in err.value.message and err.value.hint


def test_unknown_columns_name_the_known_ones(tmp_path):
    f = tmp_path / "d.csv"
    f.write_text("deploymentID,lattitude\nA,1\n")
    with pytest.raises(InputError) as err:
        read_deployments_csv(f)
    assert "deploymentID" in err.value.hint and "clock_offset_s" in err.value.hint and "latitude" in err.value.hint


def test_missing_and_binary_files(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        read_deployments_csv(tmp_path / "none.csv")
    f = tmp_path / "b.csv"
    f.write_bytes(b"\xff\xfe\x00bad")
    with pytest.raises(InputError, match="not UTF-8"):
        read_deployments_csv(f)


def test_an_impossible_default_offset_is_refused(tmp_path):
    from types import SimpleNamespace

    from core.camtrap.card import begin

    settings = SimpleNamespace(deployment_pattern="{deployment}/{anything}", default_utc_offset="+15:00")
    with pytest.raises(InputError) as err:
        begin(None, settings, None, tmp_path, None)
    assert "default_utc_offset" in err.value.message and "+15:00" in err.value.message and err.value.hint
