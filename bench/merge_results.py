#!/usr/bin/env python3
"""Merges the flashvision CLI JSON and the SDPA peers JSON of one device call into one results file.

Usage: merge_results.py FLASHVISION_JSON PEERS_JSON OUT_JSON COMMIT NOTE

The device's copy of the tree has no .git, so the CLI records the commit it was configured at;
COMMIT replaces it with the commit whose code ran, and NOTE says how the call was made.
"""
import json
import sys


def main():
    fv_path, peers_path, out_path, commit, note = sys.argv[1:6]
    fv = json.load(open(fv_path))
    peers = json.load(open(peers_path))
    meta = dict(fv["meta"])
    meta["commit"] = commit
    meta.pop("commit_dirty", None)
    meta["torch"] = peers["meta"].get("torch")
    meta["cudnn"] = peers["meta"].get("cudnn")
    meta["command"] = [fv["meta"]["command"], peers["meta"]["command"]]
    meta["note"] = note
    json.dump({"meta": meta, "records": fv["records"] + peers["records"]}, open(out_path, "w"),
              indent=1)


if __name__ == "__main__":
    main()
