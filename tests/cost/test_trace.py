"""Tests for simdist.cost.trace: the Chrome trace event export."""

import json

from simdist.cost.trace import Timeline, TimelineEvent, to_chrome_trace, write_chrome_trace

TIMELINE = Timeline(
    (
        TimelineEvent(0, "compute", "dense/dense", 0.0, 2e-6, "forward", (("flops", 10.0),)),
        TimelineEvent(0, "comm", "allreduce bucket 0", 1e-6, 3e-6, "allreduce"),
        TimelineEvent(1, "compute", "dense/dense", 0.0, 2e-6, "forward"),
    ),
    ("node0/gpu0", "node0/gpu1"),
)


def test_complete_events_in_microseconds_with_device_pid_and_stream_tid():
    trace = to_chrome_trace(TIMELINE)
    complete = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert len(complete) == 3
    for event in complete:
        assert set(event) >= {"name", "ph", "ts", "dur", "pid", "tid"}
        assert isinstance(event["pid"], int) and event["tid"] in (0, 1)
    assert complete[1]["ts"] == 1.0 and complete[1]["dur"] == 3.0 and complete[1]["tid"] == 1
    assert complete[0]["args"] == {"flops": 10.0}


def test_metadata_names_devices_and_streams():
    meta = [e for e in to_chrome_trace(TIMELINE)["traceEvents"] if e["ph"] == "M"]
    names = {(e["name"], e["pid"], e["tid"]): e["args"]["name"] for e in meta}
    assert names[("process_name", 1, 0)] == "node0/gpu1"
    assert names[("thread_name", 0, 1)] == "comm"


def test_written_file_is_json_and_round_trips(tmp_path):
    path = tmp_path / "step.json"
    write_chrome_trace(TIMELINE, path)
    assert json.loads(path.read_text()) == to_chrome_trace(TIMELINE)
    TIMELINE.write_chrome_trace(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_text() == path.read_text()


def test_timeline_end_and_busy():
    assert TIMELINE.end == 4e-6
    assert TIMELINE.busy("comm", 0) == 3e-6 and TIMELINE.busy("comm", 1) == 0
