#!/usr/bin/env python3
"""Writes the program of every record of the given JSONL files into WORK, for the data-checking
scripts (check-cuda-sft.sh, emulate-cuda-sft.sh): WORK/<id>.cu holds the body of the response's
single ```cuda fence; a record without exactly one such fence gets WORK/<id><FAIL_SUFFIX> with
the reason instead. <id> is the record's id (or line<N>) with unsafe characters replaced.
  cuda-sft-programs.py WORK FAIL_SUFFIX FILE..."""
import json
import re
import sys
from pathlib import Path

work, fail_suffix = Path(sys.argv[1]), sys.argv[2]
fence = re.compile(r"```cuda\n(.*?)```", re.S)
for name in sys.argv[3:]:
    with open(name, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)
            sid = re.sub(r"[^A-Za-z0-9_.-]", "_", rec.get("id") or f"line{n}")
            blocks = fence.findall(rec["response"])
            if len(blocks) == 1:
                (work / f"{sid}.cu").write_text(blocks[0], encoding="utf-8")
            else:
                (work / f"{sid}{fail_suffix}").write_text(
                    f"error: {name}:{n}: {len(blocks)} ```cuda fences in the response (want 1)\n")
