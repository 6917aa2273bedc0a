#!/usr/bin/env python3
"""Copy a file-based catalog directory (one DIR/<package>/catalog.json per
package, as opm migrate writes) with changes a catalog pull request makes,
for bench/diff-scale.sh. Deterministic: the same input gives the same copy.

Per package, by its position p in name order:
  p % 50 == 0   the package is removed
  p % 10 == 1   the channel head is removed (blob and entries; what named it
                loses that edge)
  p % 10 == 2   every bundle image gets a new tag
  p % 10 == 3   the default channel moves to another channel, when there is one
  p % 10 == 4   the highest bundle of each channel loses its replaces edge
  p % 10 == 5   the first bundle is deprecated
and one package is added (a copy of the first under a new name).

Usage: diff-modify.py SRC DST
"""
import json
import os
import shutil
import sys


def load(path):
    dec = json.JSONDecoder()
    text = open(path, encoding="utf-8").read()
    i, out = 0, []
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return out
        obj, i = dec.raw_decode(text, i)
        out.append(obj)


def write(path, blobs):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for b in blobs:
            f.write(json.dumps(b, indent=4))
            f.write("\n")


def main(src, dst):
    if os.path.exists(dst):
        sys.exit(f"{dst} exists")
    pkgs = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for p, name in enumerate(pkgs):
        if p % 50 == 0:
            continue
        blobs = load(os.path.join(src, name, "catalog.json"))
        chans = [b for b in blobs if b["schema"] == "olm.channel"]
        bundles = [b for b in blobs if b["schema"] == "olm.bundle"]
        if p % 10 == 1 and chans:
            entries = chans[0]["entries"]
            named = {x for e in entries for x in [e.get("replaces")] + e.get("skips", []) if x}
            heads = [e["name"] for e in entries if e["name"] not in named]
            if heads:
                head = heads[0]
                for c in chans:
                    c["entries"] = [e for e in c["entries"] if e["name"] != head]
                blobs = [b for b in blobs if not (b["schema"] == "olm.bundle" and b["name"] == head)]
        elif p % 10 == 2:
            for b in bundles:
                b["image"] = b["image"] + "-rebuilt"
        elif p % 10 == 3 and len(chans) > 1:
            pkg = next(b for b in blobs if b["schema"] == "olm.package")
            others = sorted(c["name"] for c in chans if c["name"] != pkg.get("defaultChannel"))
            pkg["defaultChannel"] = others[0]
        elif p % 10 == 4:
            for c in chans:
                with_replaces = [e for e in c["entries"] if e.get("replaces")]
                if with_replaces:
                    top = max(with_replaces, key=lambda e: e["name"])
                    del top["replaces"]
        elif p % 10 == 5 and bundles:
            blobs.append({"schema": "olm.deprecations", "package": name, "entries": [
                {"reference": {"schema": "olm.bundle", "name": bundles[0]["name"]}, "message": "deprecated for the benchmark"}]})
        write(os.path.join(dst, name, "catalog.json"), blobs)
    first = pkgs[0]
    added = load(os.path.join(src, first, "catalog.json"))
    text = json.dumps(added).replace(f'"{first}', f'"{first}-added')
    write(os.path.join(dst, first + "-added", "catalog.json"), json.loads(text))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
