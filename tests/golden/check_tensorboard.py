"""Reads TensorBoard event files written by cuset with PyPI's `tensorboard` (its own TFRecord
reader, which checks both masked CRC32C of every record) and compares their scalars with what
they should hold. Usage:
  check_tensorboard.py EVENT_DIR EXPECTED.json   {"tag": [[step, value], ...], ...}
  check_tensorboard.py RUN_DIR metrics.jsonl     every number of every metrics line: a step line's
                                                 key K as "train/K", an eval line's eval_K as "eval/K"
Every expected scalar must be present at its step with its value (as float32); the files must
hold nothing else, and every record must pass the CRC checks. Exits 1 with the differences."""
import glob
import json
import math
import os
import struct
import sys

from tensorboard.backend.event_processing import event_accumulator, event_file_loader
from tensorboard.compat.proto import event_pb2
from tensorboard.compat.tensorflow_stub.pywrap_tensorflow import masked_crc32c


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def expected_from_metrics(path):
    want = {}
    with open(path) as f:
        for line in f:
            m = json.loads(line)
            step = m["step"]
            is_eval = "loss" not in m and any(k.startswith("eval_") for k in m)
            for k, v in m.items():
                if k == "step" or isinstance(v, bool) or not isinstance(v, (int, float)):
                    continue
                tag = "eval/" + k[5:] if is_eval and k.startswith("eval_") else "train/" + k
                want.setdefault(tag, []).append([step, v])
    return want


def check_framing(path):
    """Every record's length, header CRC and data CRC, and nothing left over."""
    data = open(path, "rb").read()
    pos, n = 0, 0
    while pos < len(data):
        assert pos + 12 <= len(data), f"{path}: truncated header at byte {pos}"
        header = data[pos:pos + 8]
        (length,) = struct.unpack("<Q", header)
        (hcrc,) = struct.unpack("<I", data[pos + 8:pos + 12])
        assert hcrc == masked_crc32c(header), f"{path}: header CRC of record {n}"
        body = data[pos + 12:pos + 12 + length]
        (dcrc,) = struct.unpack("<I", data[pos + 12 + length:pos + 16 + length])
        assert dcrc == masked_crc32c(body), f"{path}: data CRC of record {n}"
        pos += 16 + length
        n += 1
    return n


def main():
    folder, expected = sys.argv[1], sys.argv[2]
    if expected.endswith(".jsonl"):
        want = expected_from_metrics(expected)
    else:
        want = json.load(open(expected))
    files = sorted(glob.glob(os.path.join(folder, "events.out.tfevents.*")))
    if not files:
        print(f"no events.out.tfevents.* in {folder}")
        return 1
    got = {}
    n_records = 0
    for path in files:
        n_framed = check_framing(path)
        raw = list(event_file_loader.RawEventFileLoader(path).Load())
        events = [event_pb2.Event.FromString(r) for r in raw]
        assert len(events) == n_framed, f"{path}: tensorboard read {len(events)} of {n_framed} records"
        n_records += n_framed
        assert events[0].file_version == "brain.Event:2", events[0]
        for ev in events[1:]:
            assert ev.wall_time > 1e9, ev
            for v in ev.summary.value:
                assert v.WhichOneof("value") == "simple_value", v
                got.setdefault(v.tag, []).append([ev.step, v.simple_value])
    problems = []
    for tag, points in want.items():
        have = {}
        for step, value in got.get(tag, []):
            have.setdefault(step, []).append(value)
        for step, value in points:
            values = have.get(step, [])
            if not values:
                problems.append(f"{tag} step {step}: missing (want {value})")
                continue
            v = values.pop(0)
            w = f32(value)
            if not (v == w or (math.isnan(v) and math.isnan(w))):
                problems.append(f"{tag} step {step}: {v} != {w}")
        for step, values in have.items():
            for v in values:
                problems.append(f"{tag} step {step}: unexpected extra value {v}")
    for tag in got:
        if tag not in want:
            problems.append(f"unexpected tag {tag} ({len(got[tag])} values)")
    # What TensorBoard itself shows: the scalars plugin's view of the folder.
    acc = event_accumulator.EventAccumulator(folder, size_guidance={event_accumulator.SCALARS: 0})
    acc.Reload()
    shown = acc.Tags()["scalars"]
    for tag, points in want.items():
        if tag not in shown:
            problems.append(f"{tag}: not among TensorBoard's scalars")
        elif len(acc.Scalars(tag)) != len(points):
            problems.append(f"{tag}: TensorBoard shows {len(acc.Scalars(tag))} points, want {len(points)}")
    n_want = sum(len(p) for p in want.values())
    print(f"{len(files)} event file(s), {n_records} records, {n_want} scalars expected, {len(problems)} problems")
    for p in problems[:50]:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
