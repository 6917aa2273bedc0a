#!/usr/bin/env python3
"""Filter configurations for bench/filter-scale.sh, from the catalog's index database.

    filter-config.py INDEX.db OUTDIR [PACKAGE...]

Writes OUTDIR/filter.yaml (a FilterConfiguration) and OUTDIR/imageset.yaml
(an ImageSetConfiguration's operators stanza) that keep every other package
of the catalog (about half), each from the middle version of its default
channel upwards: the FilterConfiguration as a versionRange on the default
channel, the ImageSetConfiguration as minVersion/maxVersion on the package
(which keeps the range in every channel; not full: true, which the filter
refuses beside a range, as oc-mirror does); and OUTDIR/few.yaml, the FilterConfiguration
of ten of those packages spread over the catalog. The versions come from the database the
catalog directory was migrated from, so no catalog JSON is read here.

Packages named after OUTDIR are left out (filter-scale.sh names those the
filter rightly refuses: a default channel of the corpus's edge cases whose
middle version cannot be joined to one head).
"""
import sqlite3
import sys


def semver_key(v):
    # Enough of semver's order for picking a middle version: numbers, then
    # a prerelease sorting below its release.
    core, _, pre = v.partition("-")
    nums = []
    for p in core.split("."):
        try:
            nums.append(int(p))
        except ValueError:
            nums.append(0)
    return (nums, pre == "", pre)


def main():
    db, out = sys.argv[1], sys.argv[2]
    skip = set(sys.argv[3:])
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    pkgs = con.execute("select name, default_channel from package order by name").fetchall()
    chosen = []
    for i, (name, default) in enumerate(pkgs):
        if i % 2:
            continue
        rows = con.execute(
            """select distinct b.name, b.version from channel_entry e
               join operatorbundle b on b.name = e.operatorbundle_name
               where e.package_name = ? and e.channel_name = ?""",
            (name, default),
        ).fetchall()
        versions = sorted({v for _, v in rows if v}, key=semver_key)
        if not versions or name in skip:
            continue
        lo, hi = versions[len(versions) // 2], versions[-1]
        chosen.append((name, default, lo, hi))
    with open(f"{out}/filter.yaml", "w") as f:
        f.write("apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n")
        for name, default, lo, _ in chosen:
            f.write(f"- name: {name}\n  channels:\n  - name: {default}\n    versionRange: '>={lo}'\n")
    # The common case of a mirror: a few packages out of a large catalog.
    with open(f"{out}/few.yaml", "w") as f:
        f.write("apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n")
        for name, default, lo, _ in chosen[:: max(1, len(chosen) // 10)][:10]:
            f.write(f"- name: {name}\n  channels:\n  - name: {default}\n    versionRange: '>={lo}'\n")
    with open(f"{out}/imageset.yaml", "w") as f:
        f.write("apiVersion: mirror.openshift.io/v1alpha2\nkind: ImageSetConfiguration\nmirror:\n  operators:\n")
        f.write("  - catalog: bench\n    packages:\n")
        for name, _, lo, hi in chosen:
            f.write(f"    - name: {name}\n      minVersion: '{lo}'\n      maxVersion: '{hi}'\n")
    print(f"{len(chosen)} of {len(pkgs)} packages kept")


main()
