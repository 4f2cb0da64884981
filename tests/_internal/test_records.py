"""`_internal/records.py`: values read back from checkpoints."""

from datetime import UTC, datetime, timedelta, timezone

from langgraph_supervisor_pro._internal.records import aware_time, namespace_path, whole_int


def test_aware_time_reads_datetimes_and_iso_text_as_aware():
    paris = timezone(timedelta(hours=1))
    assert aware_time(datetime(2026, 1, 1, 9, tzinfo=paris)) == datetime(2026, 1, 1, 8, tzinfo=UTC)
    assert aware_time(datetime(2026, 1, 1, 9)) == datetime(2026, 1, 1, 9, tzinfo=UTC)
    assert aware_time("2026-01-01T09:00:00+00:00") == datetime(2026, 1, 1, 9, tzinfo=UTC)
    for nothing in (None, "", "yesterday", 17, b"2026-01-01"):
        assert aware_time(nothing) is None


def test_whole_int_refuses_bools_and_text():
    assert [whole_int(v) for v in (0, 7, True, 1.0, "2", None)] == [0, 7, None, None, None, None]


def test_namespace_path_drops_task_ids_and_empty_parts():
    assert namespace_path("") == ()
    assert namespace_path("ops") == ("ops",)
    assert namespace_path("ops:1f|incident:2e") == ("ops", "incident")
