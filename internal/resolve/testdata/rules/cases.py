#!/usr/bin/env python3
"""Writes questions.json and answers.json: one case per OLM v0 rule, the
answer worked out from OLM's resolver (see each case's comment)."""
import json

NS, G = "operators", "olm"
qs, ans = [], []

def cat(name, *sources, ns="", priority=0):
    c = {"name": name, "namespace": ns or G, "sources": ["catalogs/%s.json" % s for s in sources]}
    if priority: c["priority"] = priority
    return c

def sub(p, catalog, channel="", starting="", installed="", cns=G):
    s = {"package": p, "catalog": catalog, "catalogNamespace": cns}
    if channel: s["channel"] = channel
    if starting: s["startingCSV"] = starting
    if installed: s["installedCSV"] = installed
    return s

def op(p, bundle, channel, catalog, dep=False, cns=G):
    o = {"package": p, "bundle": bundle, "channel": channel, "catalog": catalog, "catalogNamespace": cns}
    if dep: o["dependency"] = True
    return o

def case(name, catalogs, subs, ops, installed=(), unsat=False, reasons=None):
    q = {"name": name, "namespace": NS, "globalNamespace": G, "catalogs": catalogs, "subscriptions": subs}
    if installed: q["installed"] = [{"package": p, "csv": c} for p, c in installed]
    qs.append(q)
    a = {"operators": sorted(ops, key=lambda o: o["package"])}
    if unsat: a["unsatisfiable"] = True
    e = {"name": name, "answer": a}
    if reasons: e["reasonsContain"] = reasons
    ans.append(e)

C = [cat("chain", "chain")]
case("channel-head/stable", C, [sub("p", "chain", "stable")], [op("p", "p.v1.2.0", "stable", "chain")],
     reasons={"p": ["head of channel stable"]})
case("channel-head/default-channel", C, [sub("p", "chain")], [op("p", "p.v1.2.0", "stable", "chain")])
case("channel-head/fast", C, [sub("p", "chain", "fast")], [op("p", "p.v2.0.0", "fast", "chain")])
case("starting-csv", C, [sub("p", "chain", "stable", starting="p.v1.0.0")], [op("p", "p.v1.0.0", "stable", "chain")],
     reasons={"p": ["startingCSV"]})
case("upgrade/replaces", C, [sub("p", "chain", "stable", installed="p.v1.0.0")], [op("p", "p.v1.1.0", "stable", "chain")],
     reasons={"p": ["it replaces p.v1.0.0"]})
case("upgrade/replaces-and-skiprange", C, [sub("p", "chain", "fast", installed="p.v1.1.0")], [op("p", "p.v2.0.0", "fast", "chain")])
case("upgrade/skiprange", C, [sub("p", "chain", "fast", installed="p.v1.0.0")], [op("p", "p.v2.0.0", "fast", "chain")],
     reasons={"p": ["skipRange \">=1.0.0 <2.0.0\" includes 1.0.0"]})
case("upgrade/up-to-date", C, [sub("p", "chain", "stable", installed="p.v1.2.0")], [op("p", None, "stable", "chain")],
     reasons={"p": ["p.v1.2.0 stays"]})
# olm.deprecations do not change what OLM v0 picks; the reason says so.
case("deprecations-ignored", [cat("deprecations", "deprecations")], [sub("p", "deprecations", "stable")],
     [op("p", "p.v1.1.0", "stable", "deprecations")],
     reasons={"p": ["deprecates bundle p.v1.1.0 (p.v1.1.0 has a bad bug)"]})
# The head skips v2, so v2 is left out of the channel's order: a fresh
# Subscription gets v3, and v1 has nothing that upgrades it.
S = [cat("skips", "skips")]
case("skipped/fresh", S, [sub("s", "skips", "stable")], [op("s", "s.v3.0.0", "stable", "skips")])
case("skipped/stuck", S, [sub("s", "skips", "stable", installed="s.v1.0.0")], [op("s", None, "stable", "skips")])

D = [cat("deps", "deps")]
case("deps/missing-range", D, [sub("app", "deps", "stable")],
     [op("app", "app.v1.0.0", "stable", "deps"), op("db", "db.v1.5.0", "stable", "deps", dep=True)],
     reasons={"app": ["app.v2.0.0 requires db >2.0.0, which no catalog given has in that range", "app.v1.0.0 is the newest"],
              "db": ["app.v1.0.0 requires db >=1.0.0"]})
# The installed app.v1.0.0 still requires db: OLM installs db for it.
case("deps/upgrade-stuck", D, [sub("app", "deps", "stable", installed="app.v1.0.0")],
     [op("app", None, "stable", "deps"), op("db", "db.v1.5.0", "stable", "deps", dep=True)],
     reasons={"app": ["app.v1.0.0 stays: every bundle that upgrades it fails",
                      "app.v2.0.0 requires db >2.0.0, which no catalog given has in that range"]})
# Providers of the API in one catalog: default channels, then by package
# name: clash sorts before db.
case("deps/gvk-package-order", D, [sub("needs-api", "deps", "stable")],
     [op("needs-api", "needs-api.v1.0.0", "stable", "deps"), op("clash", "clash.v2.0.0", "stable", "deps", dep=True)])
case("deps/unsatisfiable", D, [sub("broken", "deps", "stable")], [op("broken", None, "stable", "deps")], unsat=True,
     reasons={"broken": ["broken.v1.0.0 requires ghost >=1.0.0, which no catalog given has"]})
case("deps/cycle", D, [sub("ca", "deps", "stable")],
     [op("ca", "ca.v1.0.0", "stable", "deps"), op("cb", "cb.v1.0.0", "stable", "deps", dep=True)])
case("deprecated-property", D, [sub("dep", "deps", "stable")], [op("dep", "dep.v1.0.0", "stable", "deps")],
     reasons={"dep": ["dep.v2.0.0 is deprecated"]})
case("installed/provides-api", D, [sub("needs-api", "deps", "stable")],
     [op("needs-api", "needs-api.v1.0.0", "stable", "deps")], installed=[("db", "db.v1.5.0")])
case("installed/api-conflict", D, [sub("clash", "deps", "stable")],
     [op("clash", "clash.v1.0.0", "stable", "deps")], installed=[("db", "db.v1.0.0")],
     reasons={"clash": ["clash.v2.0.0 provides Database (db.example.com/v1) as does installed db.v1.0.0"]})
# One Subscription failing on its own blocks the namespace: the other,
# fine alone, gets nothing, and its reason says so rather than blaming it.
case("namespace/blocked-by-another", D, [sub("needs-api", "deps", "stable"), sub("broken", "deps", "stable")],
     [op("broken", None, "stable", "deps"), op("needs-api", None, "stable", "deps")], unsat=True,
     reasons={"needs-api": ["could be installed on its own", "the Subscription to broken cannot be met"]})
case("channel-two-heads", D, [sub("twoheads", "deps", "stable")], [op("twoheads", None, "stable", "deps")], unsat=True,
     reasons={"twoheads": ["2 replaces chains"]})

K = [cat("constraints", "constraints")]
for p, want in [("c-pkg", "db.v1.0.0"), ("c-gvk", "db.v1.5.0"), ("c-all", "db.v1.5.0"), ("c-any", "db.v1.0.0"),
                ("c-not", "db.v1.5.0"), ("c-cel", "db.v2.0.0")]:
    case("constraint/" + p[2:], K, [sub(p, "constraints", "stable")],
         [op(p, p + ".v1.0.0", "stable", "constraints"), op("db", want, "stable", "constraints", dep=True)])
case("constraint/cel-not-bool", K, [sub("c-bad", "constraints", "stable")], [op("c-bad", None, "stable", "constraints")],
     unsat=True, reasons={"c-bad": ["must be a bool"]})

# Dependency catalogs: the requiring bundle's own catalog, then priority,
# then the namespace's own catalogs, then name.
case("catalogs/priority", [cat("low", "api-low"), cat("high", "api-high", priority=10), cat("user", "api-user")],
     [sub("user", "user", "stable")],
     [op("user", "user.v1.0.0", "stable", "user"), op("db-high", "db-high.v1.0.0", "stable", "high", dep=True)])
case("catalogs/own-first", [cat("a", "api-low", "api-user"), cat("high", "api-high", priority=10)],
     [sub("user", "a", "stable")],
     [op("user", "user.v1.0.0", "stable", "a"), op("db-low", "db-low.v1.0.0", "stable", "a", dep=True)])
case("catalogs/namespace-first", [cat("zz-local", "api-low", ns=NS), cat("aa-global", "api-high"), cat("user", "api-user")],
     [sub("user", "user", "stable")],
     [op("user", "user.v1.0.0", "stable", "user"), op("db-low", "db-low.v1.0.0", "stable", "zz-local", dep=True, cns=NS)])
case("catalogs/name-order", [cat("zz", "api-low"), cat("aa", "api-high"), cat("user", "api-user")],
     [sub("user", "user", "stable")],
     [op("user", "user.v1.0.0", "stable", "user"), op("db-high", "db-high.v1.0.0", "stable", "aa", dep=True)])
case("catalogs/other-namespace-invisible", [cat("elsewhere", "api-high", ns="team-b"), cat("low", "api-low"), cat("user", "api-user")],
     [sub("user", "user", "stable")],
     [op("user", "user.v1.0.0", "stable", "user"), op("db-low", "db-low.v1.0.0", "stable", "low", dep=True)])

json.dump(qs, open("questions.json", "w"), indent=1)
open("questions.json", "a").write("\n")
json.dump(ans, open("answers.json", "w"), indent=1)
open("answers.json", "a").write("\n")
