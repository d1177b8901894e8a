"""The ingest command's lines for skipped items: one each, except a reason many items share (the rows of a
deployment that was skipped), said once with a count, so that one bad row does not bury the report."""
from cli.ingest import skipped_lines


def test_a_few_skipped_items_each_get_their_line():
    lines = skipped_lines([("media.csv row 6", "timestamp 'yesterday': is not a datetime"),
                           ("clip.mp4", "is a video")])
    assert lines == ["skipping media.csv row 6: timestamp 'yesterday': is not a datetime",
                     "skipping clip.mp4: is a video"]


def test_a_reason_shared_by_many_rows_is_said_once_with_their_count():
    cascade = [(f"media.csv row {n}", "its deployment '29b7d356' was skipped") for n in range(182, 302)]
    lines = skipped_lines([("deployments.csv row 3", "latitude 'north-ish': is not a number")] + cascade)
    assert lines[0] == "skipping deployments.csv row 3: latitude 'north-ish': is not a number"
    assert lines[1:] == ["skipping 120 items (media.csv row 182, media.csv row 183, media.csv row 184 and 117 more): "
                         "its deployment '29b7d356' was skipped"]
