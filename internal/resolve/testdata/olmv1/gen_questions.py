#!/usr/bin/env python3
"""Writes questions.json, the ClusterExtensions asked of operator-controller's
resolver (harness/main.go records its answers) and of opm's (TestOLMv1Answers),
and ranges.json, the version-range table (TestOLMv1Ranges).

Run from this directory with ../shared beside the checkout:
    python3 gen_questions.py ../../../../../shared
"""
import glob
import json
import os
import random
import sys

shared = sys.argv[1] if len(sys.argv) > 1 else "../../../../../shared"


def blobs_of(path):
    s = open(path).read()
    dec = json.JSONDecoder()
    i, out = 0, []
    while True:
        while i < len(s) and s[i].isspace():
            i += 1
        if i >= len(s):
            return out
        o, i = dec.raw_decode(s, i)
        out.append(o)


def version_of(b):
    for p in b.get("properties", []):
        if p["type"] == "olm.package":
            return p["value"]["version"]
    return None


def semver_key(v):
    core = v.split("+")[0].split("-")[0]
    try:
        return tuple(int(x) for x in core.split("."))
    except ValueError:
        return (0, 0, 0)


def ext(name, pkg, version="", channels=None, policy="", installed=None, selector=None):
    cat = {"packageName": pkg}
    if version:
        cat["version"] = version
    if channels:
        cat["channels"] = channels
    if policy:
        cat["upgradeConstraintPolicy"] = policy
    if selector is not None:
        cat["selector"] = selector
    obj = {
        "apiVersion": "olm.operatorframework.io/v1",
        "kind": "ClusterExtension",
        "metadata": {"name": name[:63].strip("-.").replace("/", "-").lower() or "x"},
        "spec": {"namespace": "operators", "serviceAccount": {"name": "installer"},
                 "source": {"sourceType": "Catalog", "catalog": cat}},
    }
    if installed:
        obj["status"] = {"install": {"bundle": {"name": installed[0], "version": installed[1]}}}
    return obj


questions = []


def q(name, catalogs, obj):
    questions.append({"name": name, "catalogs": catalogs, "clusterExtension": obj})


# Every reference catalog: fresh extensions and upgrades from every bundle.
for path in sorted(glob.glob(os.path.join(shared, "reference/index/*.fbc.json"))):
    base = os.path.basename(path)[: -len(".fbc.json")]
    src = "shared:reference/index/" + os.path.basename(path)
    cats = [{"name": "operatorhubio", "priority": 0, "sources": [src]}]
    blobs = blobs_of(path)
    for p in [b for b in blobs if b["schema"] == "olm.package"]:
        pkg = p["name"]
        chans = sorted(c["name"] for c in blobs if c["schema"] == "olm.channel" and c["package"] == pkg)
        bundles = [b for b in blobs if b["schema"] == "olm.bundle" and b["package"] == pkg]
        in_chans = {}
        for c in blobs:
            if c["schema"] == "olm.channel" and c["package"] == pkg:
                for e in c["entries"]:
                    in_chans.setdefault(e["name"], []).append(c["name"])
        q(f"{base}/fresh", cats, ext(pkg, pkg))
        for c in chans:
            q(f"{base}/fresh/{c}", cats, ext(pkg, pkg, channels=[c]))
        vs = sorted({version_of(b) for b in bundles if version_of(b)}, key=semver_key)
        if vs:
            mid = semver_key(vs[len(vs) // 2])
            lo, hi = vs[0], vs[-1]
            q(f"{base}/fresh/range-minor", cats, ext(pkg, pkg, version=f"{mid[0]}.{mid[1]}.x"))
            q(f"{base}/fresh/range-below-top", cats, ext(pkg, pkg, version=f">={lo.split('+')[0]}, <{hi.split('+')[0]}"))
            q(f"{base}/fresh/range-or", cats, ext(pkg, pkg, version=f"~{mid[0]}.{mid[1]} || {semver_key(lo)[0]}.x"))
        for b in sorted(bundles, key=lambda b: b["name"]):
            v = version_of(b)
            if not v:
                continue
            inst = (b["name"], v)
            q(f"{base}/upgrade/{b['name']}", cats, ext(pkg, pkg, installed=inst))
            q(f"{base}/upgrade/{b['name']}/self-certified", cats, ext(pkg, pkg, policy="SelfCertified", installed=inst))
            for c in sorted(in_chans.get(b["name"], [])):
                q(f"{base}/upgrade/{b['name']}/{c}", cats, ext(pkg, pkg, channels=[c], installed=inst))
            if vs:
                q(f"{base}/upgrade/{b['name']}/range", cats, ext(pkg, pkg, version=f"<{hi.split('+')[0]}", installed=inst))


def cat(name, priority, *sources):
    return {"name": name, "priority": priority, "sources": [f"catalogs/{s}.json" for s in sources]}


# Two catalogs with one package: priorities, ties, selectors.
a, b, c = cat("cat-a", 0, "twin-a"), cat("cat-b", 0, "twin-b"), cat("cat-c", 0, "twin-c")
for pa, pb in [(0, 0), (1, 0), (0, 1), (-5, -5), (-1, -2), (10, 10)]:
    cats = [dict(a, priority=pa), dict(b, priority=pb)]
    q(f"twin/priority/{pa}/{pb}", cats, ext("twin", "twin"))
    q(f"twin/priority/{pa}/{pb}/range-1.x", cats, ext("twin", "twin", version="1.x"))
    q(f"twin/priority/{pa}/{pb}/range-1.1", cats, ext("twin", "twin", version="1.1.x"))
    q(f"twin/priority/{pa}/{pb}/candidate", cats, ext("twin", "twin", channels=["candidate"]))
    q(f"twin/priority/{pa}/{pb}/upgrade-1.0.0", cats, ext("twin", "twin", installed=("twin.v1.0.0", "1.0.0")))
    q(f"twin/priority/{pa}/{pb}/upgrade-1.0.0-stable", cats, ext("twin", "twin", channels=["stable"], installed=("twin.v1.0.0", "1.0.0")))
for prios in [(5, 5, 0), (0, 5, 5), (5, 0, 5), (1, 2, 3), (0, 0, 0)]:
    cats = [dict(a, priority=prios[0]), dict(b, priority=prios[1]), dict(c, priority=prios[2])]
    q(f"twin/three/{'-'.join(map(str, prios))}", cats, ext("twin", "twin"))
    q(f"twin/three/{'-'.join(map(str, prios))}/range-0.9", cats, ext("twin", "twin", version="<1.0.0"))
name_label = "olm.operatorframework.io/metadata.name"
for label, sel in [
    ("match-a", {"matchLabels": {name_label: "cat-a"}}),
    ("match-b", {"matchLabels": {name_label: "cat-b"}}),
    ("match-none", {"matchLabels": {name_label: "cat-z"}}),
    ("other-label", {"matchLabels": {"example.com/tier": "gold"}}),
    ("in-a-c", {"matchExpressions": [{"key": name_label, "operator": "In", "values": ["cat-a", "cat-c"]}]}),
    ("notin-b", {"matchExpressions": [{"key": name_label, "operator": "NotIn", "values": ["cat-b"]}]}),
    ("exists", {"matchExpressions": [{"key": name_label, "operator": "Exists"}]}),
    ("does-not-exist", {"matchExpressions": [{"key": name_label, "operator": "DoesNotExist"}]}),
    ("notin-other", {"matchExpressions": [{"key": "example.com/tier", "operator": "NotIn", "values": ["gold"]}]}),
    ("empty", {}),
]:
    cats = [a, dict(b, priority=1), c]
    q(f"twin/selector/{label}", cats, ext("twin", "twin", selector=sel))

# Deprecations.
d, dc, da = cat("main", 0, "dep"), cat("clean", 0, "dep-clean"), cat("alldep", 0, "dep-all")
q("dep/fresh", [d], ext("dep", "dep"))
q("dep/fresh/beta", [d], ext("dep", "dep", channels=["beta"]))
q("dep/fresh/range-1.3", [d], ext("dep", "dep", version="1.3.x"))
q("dep/fresh/range-1.1-1.3", [d], ext("dep", "dep", version=">=1.1.0 <=1.3.0 || >=2.0.0-0"))
q("dep/fresh/prerelease", [d], ext("dep", "dep", version=">=2.0.0-0"))
q("dep/olddep/fresh", [d], ext("olddep", "olddep"))
for n, v in [("dep.v1.0.0", "1.0.0"), ("dep.v1.1.0", "1.1.0"), ("dep.v1.2.0", "1.2.0"), ("dep.v1.3.0", "1.3.0")]:
    q(f"dep/upgrade/{n}", [d], ext("dep", "dep", installed=(n, v)))
    q(f"dep/upgrade/{n}/beta", [d], ext("dep", "dep", channels=["beta"], installed=(n, v)))
    q(f"dep/upgrade/{n}/self-certified", [d], ext("dep", "dep", policy="SelfCertified", installed=(n, v)))
for pm, pc, pa in [(0, 0, 0), (10, 0, 0), (0, 10, 0), (0, 0, 10), (5, -5, 5), (3, 3, -1)]:
    cats = [dict(d, priority=pm), dict(dc, priority=pc), dict(da, priority=pa)]
    tag = f"{pm}/{pc}/{pa}"
    q(f"dep/three/{tag}", cats, ext("dep", "dep"))
    q(f"dep/three/{tag}/range-1.3-up", cats, ext("dep", "dep", version=">=1.3.0"))
    q(f"dep/three/{tag}/range-1.1", cats, ext("dep", "dep", version="1.1.x"))
    q(f"dep/three/{tag}/olddep", cats, ext("olddep", "olddep"))
    q(f"dep/two/{tag}/main-alldep", [dict(d, priority=pm), dict(da, priority=pa)], ext("dep", "dep", version=">=1.3.0"))

# Version ranges: the Masterminds syntax, wildcards, ||, spans, pre-releases, and ranges it refuses.
r = [cat("ranges", 0, "ranges")]
ranges = [
    "1.2.x", "1.x", "1", "1.2", "*", "x", "X", "x.x.x", "1.*", "1.2.*", ">=1.0.0 <2.0.0", ">=1.0.0, <2.0.0",
    ">=1.0.0,<2.0.0 || 3.x", "~1.2", "~1", "~1.2.3", "~0", "~0.0.0", "~>1.2", "~*", "^1.2", "^1", "^0.1", "^0.0.3",
    "^0.0", "^0", "^*", "^1.x", "1.0.0 - 1.2.0", "1 - 2", "1.2 - 1.10 || 0.x", "0.1.0 - 1.0.0-beta",
    "!=2.0.0", "!=2.x", "!=2.0.x", "!=1.0.0-beta", ">1.2", ">1", ">1.2.0", ">x", ">=x", "<=1.2", "<=1", "<=1.2.3",
    "<=x", "<1.2", "<1", "<x", "=1.2.3", "1.2.3", "v1.2.3", "=v1.2", "=>1.2.3", "=<1.2.3", ">=1.0.0-0",
    ">=2.0.0-rc.1 <2.0.0", "2.0.0-rc.1", "1.0.0-beta - 1.0.0", "1.0.0-alpha.1 || 2.x", ">=1.0.0-alpha <1.0.0 || >=3.0.0",
    "2.1.0", "2.1.0+1", "=2.1.0+2", "3.0.0", "3.0.1", "3.x", ">3.0.0", "<0.0.0", ">=0.0.0", "0.0.3", "0.x",
    ">= 1.0, < 1.10", " >=1.0.0  ,  <=1.2.3 ", "1.2.3 1.2.3", ">1.0.0 <1.2.3 !=1.0.1", "01.2.3", "1.02",
    ">=1.0.0-beta.0", ">=1.0.0-beta.1 <1.0.0", "1.0.0-x.y.z", "2.0.0-rc.1 - 2.0.0", "1.x.3", "x.2.3", "1.2.3-x",
    # refused
    "foobar", ">=1.0.0,,<2", "1.2.3.4", "1 | 2", "1.0.0-01", ">=1.0.0 || ", "|| 1.0.0", "1.0.0 -", "- 1.0.0",
    ">=1.0.0-", "1x", "1.x1", "v", ">", ">=1.0.0 - 2.0.0", ">=a.b.c", "~>=1.0",
]
for i, rng in enumerate(ranges):
    q(f"ranges/{i:03d} {rng}", r, ext("ranges", "ranges", version=rng))

# Random ranges from the pieces the syntax is made of (fixed seed): what
# the parser accepts and refuses, and what each accepted range admits.
rnd = random.Random(38)
ops = ["", "=", "!=", ">", "<", ">=", "=>", "<=", "=<", "~", "~>", "^"]
parts = ["0", "1", "2", "3", "10", "01", "x", "X", "*", "|", "1x", ""]
pres = ["", "", "", "-0", "-beta", "-rc.1", "-alpha.1", "-01", "-x.y", "-"]
builds = ["", "", "", "+1", "+build.7", "+"]
seps = [" ", ", ", ",", "  ", " || ", "||", " - ", " , "]
def bound():
    n = rnd.choice([1, 2, 3, 3, 3, 4])
    v = ".".join(rnd.choice(parts) for _ in range(n))
    return rnd.choice(["", "", "", "v"]) + v + rnd.choice(pres) + rnd.choice(builds)
seen = set(ranges)
i = 0
while i < 300:
    k = rnd.choice([1, 1, 2, 2, 3])
    text = rnd.choice(ops) + rnd.choice(["", "", " "]) + bound()
    for _ in range(k - 1):
        text += rnd.choice(seps) + rnd.choice(ops) + rnd.choice(["", "", " "]) + bound()
    if rnd.random() < 0.1:
        text = " " + text
    if len(text) > 64 or text in seen or not text.strip():
        continue
    seen.add(text)
    q(f"ranges/random/{i:03d} {text}", r, ext("ranges", "ranges", version=text))
    i += 1

# Upgrade edges, channels that leave the installed bundle out, releases.
s = [cat("succ", 0, "succ")]
installs = [("succ.v1.0.0", "1.0.0"), ("succ.v1.1.0", "1.1.0"), ("succ.v1.2.0", "1.2.0"), ("succ.v2.0.0", "2.0.0"),
            ("succ.v3.0.0", "3.0.0"), ("succ.v1.5.0", "1.5.0"), ("succ.v1.2.0-r2", "1.2.0+2"), ("succ.v0.9.0", "0.9.0"),
            ("gone", "1.1.0"), ("succ.v1.1.0", "1.1.0+7"), ("succ.v3.1.0", "3.1.0"), ("succ.v1.6.0", "1.6.0"),
            ("succ.v1.0.0", "1.0"), ("succ.v1.0.0", "v1.0.0"), ("succ.orphan", "9.0.0")]
for n, v in installs:
    for chans in [None, ["stable"], ["fast"], ["lts"], ["stable", "fast"], ["bad-range"], ["nosuch"]]:
        tag = "+".join(chans) if chans else "any"
        q(f"succ/upgrade/{n}@{v}/{tag}", s, ext("succ", "succ", channels=chans, installed=(n, v)))
    q(f"succ/upgrade/{n}@{v}/self-certified", s, ext("succ", "succ", policy="SelfCertified", installed=(n, v)))
    q(f"succ/upgrade/{n}@{v}/self-certified/stable", s, ext("succ", "succ", channels=["stable"], policy="SelfCertified", installed=(n, v)))
    q(f"succ/upgrade/{n}@{v}/range-1.x", s, ext("succ", "succ", version="1.x", installed=(n, v)))
    q(f"succ/upgrade/{n}@{v}/range-1.x/self-certified", s, ext("succ", "succ", version="1.x", policy="SelfCertified", installed=(n, v)))
for chans in [None, ["stable"], ["fast"], ["lts"], ["bad-range"], ["stable", "lts"], ["nosuch"]]:
    tag = "+".join(chans) if chans else "any"
    q(f"succ/fresh/{tag}", s, ext("succ", "succ", channels=chans))
    q(f"succ/fresh/{tag}/range-1.2", s, ext("succ", "succ", channels=chans, version="1.2.x"))

# A bundle that declares a dependency, versions that do not read, no bundles, no package.
nd = [cat("nd", 0, "needsdep")]
for rng in ["", "<1.3.0", "<1.2.0", "<1.1.0", "1.1.0"]:
    q(f"needsdep/fresh/{rng or 'any'}", nd, ext("needsdep", "needsdep", version=rng))
q("needsdep/upgrade/nd.v1.0.0", nd, ext("needsdep", "needsdep", installed=("nd.v1.0.0", "1.0.0")))
bv = [cat("bv", 0, "badver")]
for chans in [None, ["stable"], ["odd"], ["none"]]:
    tag = "+".join(chans) if chans else "any"
    q(f"badver/fresh/{tag}", bv, ext("badver", "badver", channels=chans))
    q(f"badver/fresh/{tag}/range", bv, ext("badver", "badver", channels=chans, version=">=0.0.0"))
    q(f"badver/upgrade/{tag}", bv, ext("badver", "badver", channels=chans, installed=("bv.good", "1.0.0")))
q("badver/empty-package", bv, ext("empty", "empty"))
q("badver/no-such-package", bv, ext("nosuch", "nosuch"))
q("badver/no-catalogs", [], ext("badver", "badver"))

# Releases in build metadata and in the explicit release field (which
# operator-controller reads only behind a feature gate that is off), from a
# directory of YAML and JSON files.
rel = [{"name": "rel", "priority": 0, "sources": ["catalogs/rel-dir"]}]
q("rel/fresh", rel, ext("rel", "rel"))
q("rel/fresh/1.0.x", rel, ext("rel", "rel", version="1.0.x"))
for n, v in [("rel.v1.0.0", "1.0.0"), ("rel.v1.0.0-2", "1.0.0+2"), ("rel.v1.0.0-10", "1.0.0+10"), ("rel.v1.1.0", "1.1.0")]:
    q(f"rel/upgrade/{n}", rel, ext("rel", "rel", installed=(n, v)))
    q(f"rel/upgrade/{n}/1.0.x", rel, ext("rel", "rel", version="1.0.x", installed=(n, v)))
    q(f"rel/upgrade/{n}/self-certified/1.0.x", rel, ext("rel", "rel", version="1.0.x", policy="SelfCertified", installed=(n, v)))

# A bundle given twice: the later source wins.
dup = [cat("dup", 0, "dup-1", "dup-2")]
q("dup/fresh", dup, ext("dup", "dup"))
q("dup/upgrade/dup.a", dup, ext("dup", "dup", installed=("dup.a", "1.0.0")))

# The range table: every range (the ones above, and more random ones)
# against versions with pre-releases, releases and build metadata.
table_versions = [
    "0.0.0", "0.0.3", "0.0.4", "0.1.0", "0.1.5", "0.2.0-rc.1", "0.2.0", "1.0.0-0", "1.0.0-alpha", "1.0.0-alpha.1",
    "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2", "1.0.0-beta.11", "1.0.0-rc.1", "1.0.0-x.y.z", "1.0.0",
    "1.0.0+1", "1.0.0+build.5", "1.0.1", "1.1.0", "1.2.0", "1.2.3-x", "1.2.3", "1.2.4", "1.10.0", "2.0.0-rc.1",
    "2.0.0", "2.0.1", "2.1.0+1", "2.1.0+2", "3.0.0+01", "3.0.1", "10.0.0", "11.1.1", "18446744073709551615.0.0",
]
table_ranges = list(ranges)
rnd = random.Random(3838)
while len(table_ranges) < len(ranges) + 700:
    k = rnd.choice([1, 1, 2, 2, 3])
    text = rnd.choice(ops) + rnd.choice(["", "", " "]) + bound()
    for _ in range(k - 1):
        text += rnd.choice(seps) + rnd.choice(ops) + rnd.choice(["", "", " "]) + bound()
    if text not in table_ranges and text.strip():
        table_ranges.append(text)
# Mostly well-formed ones, to weigh what each admits.
good_parts = ["0", "1", "2", "3", "10", "x", "*", "1", "2"]
good_pres = ["", "", "", "", "-0", "-beta", "-rc.1", "-alpha.1", "-x.y"]
good_seps = [" ", ", ", " || ", " - ", ","]
def good_bound():
    n = rnd.choice([1, 2, 3, 3, 3])
    return ".".join(rnd.choice(good_parts) for _ in range(n)) + rnd.choice(good_pres) + rnd.choice(["", "", "", "+1"])
n_before = len(table_ranges)
while len(table_ranges) < n_before + 700:
    k = rnd.choice([1, 1, 2, 2, 3])
    text = rnd.choice(ops) + good_bound()
    for _ in range(k - 1):
        text += rnd.choice(good_seps) + rnd.choice(ops) + good_bound()
    if text not in table_ranges:
        table_ranges.append(text)
table_ranges += ["1.0.0 - 2.0.0 || 1.0.0 - 2.0.0", "a1.0 - 2", "1.2.3.4 - 5", "1 - 2 - 3", "1.0 - 2.0||3.0",
                 ">=1 <=2 " * 40, "1 || " * 33 + "1", "1" + ".0" * 300, "1.0.0-" + "a" * 300]

with open("questions.json", "w") as f:
    json.dump(questions, f, indent=1)
    f.write("\n")
with open("ranges.json", "w") as f:
    json.dump({"versions": table_versions, "ranges": table_ranges}, f, indent=1)
    f.write("\n")
print(f"{len(questions)} questions, {len(table_ranges)} ranges", file=sys.stderr)
