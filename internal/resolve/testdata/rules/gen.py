#!/usr/bin/env python3
"""Writes the rule fixtures: one FBC file per catalog under catalogs/.

Run from this directory: python3 gen.py. The questions and the answers
OLM v0 gives (worked out from its resolver's rules, one rule a case) are
in questions.json and answers.json beside it.
"""
import json, os

def pkg(name, default):
    return {"schema": "olm.package", "name": name, "defaultChannel": default}

def ch(pkgname, name, *entries):
    return {"schema": "olm.channel", "package": pkgname, "name": name, "entries": list(entries)}

def ent(name, replaces=None, skips=None, skipRange=None):
    e = {"name": name}
    if replaces: e["replaces"] = replaces
    if skips: e["skips"] = skips
    if skipRange: e["skipRange"] = skipRange
    return e

def bundle(pkgname, name, version, *props):
    ps = [{"type": "olm.package", "value": {"packageName": pkgname, "version": version}}]
    ps += list(props)
    return {"schema": "olm.bundle", "name": name, "package": pkgname,
            "image": "example.com/%s:%s" % (pkgname, version), "properties": ps}

def gvk(g, v, k): return {"type": "olm.gvk", "value": {"group": g, "kind": k, "version": v}}
def gvkreq(g, v, k): return {"type": "olm.gvk.required", "value": {"group": g, "kind": k, "version": v}}
def pkgreq(p, r): return {"type": "olm.package.required", "value": {"packageName": p, "versionRange": r}}
def constraint(c): return {"type": "olm.constraint", "value": c}

def write(name, blobs):
    os.makedirs("catalogs", exist_ok=True)
    with open(os.path.join("catalogs", name + ".json"), "w") as f:
        for b in blobs:
            f.write(json.dumps(b, indent=2) + "\n")

# p: three versions in stable (default), v1.1 in fast too.
write("chain", [
    pkg("p", "stable"),
    ch("p", "stable", ent("p.v1.0.0"), ent("p.v1.1.0", replaces="p.v1.0.0"), ent("p.v1.2.0", replaces="p.v1.1.0")),
    ch("p", "fast", ent("p.v1.1.0"), ent("p.v2.0.0", replaces="p.v1.1.0", skipRange=">=1.0.0 <2.0.0")),
    bundle("p", "p.v1.0.0", "1.0.0"), bundle("p", "p.v1.1.0", "1.1.0"),
    bundle("p", "p.v1.2.0", "1.2.0"), bundle("p", "p.v2.0.0", "2.0.0"),
])

# olm.deprecations: the head of p's stable channel is deprecated.
write("deprecations", [
    pkg("p", "stable"),
    ch("p", "stable", ent("p.v1.0.0"), ent("p.v1.1.0", replaces="p.v1.0.0")),
    bundle("p", "p.v1.0.0", "1.0.0"), bundle("p", "p.v1.1.0", "1.1.0"),
    {"schema": "olm.deprecations", "package": "p", "entries": [
        {"reference": {"schema": "olm.bundle", "name": "p.v1.1.0"}, "message": "p.v1.1.0 has a bad bug"}]},
])

# s: v3 skips v2, so v2 is never a candidate; v4 has a skipRange over 1.x.
write("skips", [
    pkg("s", "stable"),
    ch("s", "stable", ent("s.v1.0.0"), ent("s.v2.0.0", replaces="s.v1.0.0"),
       ent("s.v3.0.0", replaces="s.v2.0.0", skips=["s.v2.0.0"])),
    bundle("s", "s.v1.0.0", "1.0.0"), bundle("s", "s.v2.0.0", "2.0.0"), bundle("s", "s.v3.0.0", "3.0.0"),
])

# app: v2 needs db >2.0.0 (missing), v1 needs db >=1.0.0; db 1.5.0 exists.
write("deps", [
    pkg("app", "stable"),
    ch("app", "stable", ent("app.v1.0.0"), ent("app.v2.0.0", replaces="app.v1.0.0")),
    bundle("app", "app.v1.0.0", "1.0.0", pkgreq("db", ">=1.0.0")),
    bundle("app", "app.v2.0.0", "2.0.0", pkgreq("db", ">2.0.0")),
    pkg("db", "stable"),
    ch("db", "stable", ent("db.v1.0.0"), ent("db.v1.5.0", replaces="db.v1.0.0")),
    bundle("db", "db.v1.0.0", "1.0.0", gvk("db.example.com", "v1", "Database")),
    bundle("db", "db.v1.5.0", "1.5.0", gvk("db.example.com", "v1", "Database")),
    # needs-api requires the Database API; nothing else
    pkg("needs-api", "stable"),
    ch("needs-api", "stable", ent("needs-api.v1.0.0")),
    bundle("needs-api", "needs-api.v1.0.0", "1.0.0", gvkreq("db.example.com", "v1", "Database")),
    # broken needs a package nobody has, in every version
    pkg("broken", "stable"),
    ch("broken", "stable", ent("broken.v1.0.0")),
    bundle("broken", "broken.v1.0.0", "1.0.0", pkgreq("ghost", ">=1.0.0")),
    # cycle: a needs b, b needs a
    pkg("ca", "stable"), ch("ca", "stable", ent("ca.v1.0.0")),
    bundle("ca", "ca.v1.0.0", "1.0.0", pkgreq("cb", ">=1.0.0")),
    pkg("cb", "stable"), ch("cb", "stable", ent("cb.v1.0.0")),
    bundle("cb", "cb.v1.0.0", "1.0.0", pkgreq("ca", ">=1.0.0")),
    # deprecated: the head carries olm.deprecated
    pkg("dep", "stable"),
    ch("dep", "stable", ent("dep.v1.0.0"), ent("dep.v2.0.0", replaces="dep.v1.0.0")),
    bundle("dep", "dep.v1.0.0", "1.0.0"),
    bundle("dep", "dep.v2.0.0", "2.0.0", {"type": "olm.deprecated", "value": {}}),
    # clash: its head provides the Database API too
    pkg("clash", "stable"),
    ch("clash", "stable", ent("clash.v1.0.0"), ent("clash.v2.0.0", replaces="clash.v1.0.0")),
    bundle("clash", "clash.v1.0.0", "1.0.0"),
    bundle("clash", "clash.v2.0.0", "2.0.0", gvk("db.example.com", "v1", "Database")),
    # twoheads: a channel with two heads
    pkg("twoheads", "stable"),
    ch("twoheads", "stable", ent("twoheads.v1.0.0"), ent("twoheads.v1.1.0")),
    bundle("twoheads", "twoheads.v1.0.0", "1.0.0"), bundle("twoheads", "twoheads.v1.1.0", "1.1.0"),
])

# constraints: each olm.constraint kind
cel_db2 = 'properties.exists(p, p.type == "olm.package" && p.value.packageName == "db" && semver_compare(p.value.version, "1.2.0") >= 0)'
write("constraints", [
    pkg("db", "stable"),
    ch("db", "stable", ent("db.v1.0.0"), ent("db.v1.5.0", replaces="db.v1.0.0"), ent("db.v2.0.0", replaces="db.v1.5.0")),
    bundle("db", "db.v1.0.0", "1.0.0", gvk("db.example.com", "v1", "Database")),
    bundle("db", "db.v1.5.0", "1.5.0", gvk("db.example.com", "v1", "Database")),
    bundle("db", "db.v2.0.0", "2.0.0", gvk("db.example.com", "v2", "Database")),
    pkg("c-pkg", "stable"), ch("c-pkg", "stable", ent("c-pkg.v1.0.0")),
    bundle("c-pkg", "c-pkg.v1.0.0", "1.0.0", constraint({"package": {"packageName": "db", "versionRange": "<1.2.0"}})),
    pkg("c-gvk", "stable"), ch("c-gvk", "stable", ent("c-gvk.v1.0.0")),
    bundle("c-gvk", "c-gvk.v1.0.0", "1.0.0", constraint({"gvk": {"group": "db.example.com", "version": "v1", "kind": "Database"}})),
    pkg("c-all", "stable"), ch("c-all", "stable", ent("c-all.v1.0.0")),
    bundle("c-all", "c-all.v1.0.0", "1.0.0", constraint({"failureMessage": "needs db 1.x with v1", "all": {"constraints": [
        {"package": {"packageName": "db", "versionRange": ">=1.0.0"}},
        {"gvk": {"group": "db.example.com", "version": "v1", "kind": "Database"}}]}})),
    pkg("c-any", "stable"), ch("c-any", "stable", ent("c-any.v1.0.0")),
    bundle("c-any", "c-any.v1.0.0", "1.0.0", constraint({"any": {"constraints": [
        {"package": {"packageName": "ghost", "versionRange": ">=1.0.0"}},
        {"package": {"packageName": "db", "versionRange": "1.0.0"}}]}})),
    pkg("c-not", "stable"), ch("c-not", "stable", ent("c-not.v1.0.0")),
    bundle("c-not", "c-not.v1.0.0", "1.0.0", constraint({"all": {"constraints": [
        {"package": {"packageName": "db", "versionRange": ">=1.0.0"}},
        {"not": {"constraints": [{"gvk": {"group": "db.example.com", "version": "v2", "kind": "Database"}}]}}]}})),
    pkg("c-cel", "stable"), ch("c-cel", "stable", ent("c-cel.v1.0.0")),
    bundle("c-cel", "c-cel.v1.0.0", "1.0.0", constraint({"cel": {"rule": cel_db2}})),
    pkg("c-bad", "stable"), ch("c-bad", "stable", ent("c-bad.v1.0.0")),
    bundle("c-bad", "c-bad.v1.0.0", "1.0.0", constraint({"cel": {"rule": "properties.size()"}})),
])

# two catalogs provide the Database API (different packages), at
# different priorities; the requiring bundle lives in a third.
write("api-low", [
    pkg("db-low", "stable"), ch("db-low", "stable", ent("db-low.v1.0.0")),
    bundle("db-low", "db-low.v1.0.0", "1.0.0", gvk("db.example.com", "v1", "Database")),
])
write("api-high", [
    pkg("db-high", "stable"), ch("db-high", "stable", ent("db-high.v1.0.0")),
    bundle("db-high", "db-high.v1.0.0", "1.0.0", gvk("db.example.com", "v1", "Database")),
])
write("api-user", [
    pkg("user", "stable"), ch("user", "stable", ent("user.v1.0.0")),
    bundle("user", "user.v1.0.0", "1.0.0", gvkreq("db.example.com", "v1", "Database")),
])
