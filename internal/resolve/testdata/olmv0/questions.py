#!/usr/bin/env python3
"""Writes the OLM v0 resolver questions (questions.json) and the small
file-based catalogs they use (catalogs/*/catalog.json).

Run from this directory: python3 questions.py [SHARED_DIR]
(SHARED_DIR defaults to ../../../../../shared, the worktree's ../shared).

Three kinds of question, named by prefix:
  ref/CATALOG/...   every catalog in SHARED/reference/index/*.fbc.json: a fresh
                    Subscription per package and channel (and one naming no
                    channel), an upgrade from every non-head bundle of every channel;
  deps/CATALOG/MODE/...  the reference catalogs whose bundles require packages
                    or APIs, with the providers (catalogs/providers, a fixture:
                    the corpus has none of them) in the same catalog, in
                    another one, or partly;
  fixture/CASE/...  the fixtures below, one case per way OLM's resolver chooses.
"""
import glob
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SHARED = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "../../../../../shared"))
GLOBAL = "olm"
NS = "operators"


def load_fbc(path):
    """The blobs of an FBC JSON stream (concatenated objects)."""
    dec = json.JSONDecoder()
    s = open(path).read()
    i, out = 0, []
    while True:
        while i < len(s) and s[i].isspace():
            i += 1
        if i >= len(s):
            return out
        o, i = dec.raw_decode(s, i)
        out.append(o)


def cat(name, sources, namespace=GLOBAL, priority=0):
    return {"name": name, "namespace": namespace, "priority": priority, "sources": sources}


def sub(package, catalog, channel="", namespace=GLOBAL, installed="", starting="", name=""):
    s = {"package": package, "channel": channel, "startingCSV": starting, "catalog": catalog,
         "catalogNamespace": namespace, "installedCSV": installed}
    if name:
        s["name"] = name
    return s


def question(name, catalogs, subs, installed=(), namespace=NS):
    inst = []
    for s in subs:
        if s["installedCSV"]:
            inst.append({"package": s["package"], "csv": s["installedCSV"]})
    for i in installed:
        if all(x["csv"] != i["csv"] for x in inst):
            inst.append(i)
    q = {"name": name, "globalNamespace": GLOBAL, "namespace": namespace,
         "catalogs": catalogs, "subscriptions": subs}
    if inst:
        q["installed"] = inst
    return q


def channels_of(blobs):
    """package -> (default channel, {channel: entries})."""
    pkgs = {}
    for b in blobs:
        if b["schema"] == "olm.package":
            pkgs.setdefault(b["name"], [b.get("defaultChannel", ""), {}])[0] = b.get("defaultChannel", "")
    for b in blobs:
        if b["schema"] == "olm.channel":
            pkgs.setdefault(b["package"], ["", {}])[1][b["name"]] = b["entries"]
    return pkgs


def non_heads(entries):
    """Entries some other entry of the channel replaces or skips: the ones
    an upgrade can leave. With more than one head (entries nothing
    replaces or skips), all are asked about."""
    named = set()
    for e in entries:
        if e.get("replaces"):
            named.add(e["replaces"])
        named.update(e.get("skips") or [])
    heads = [e["name"] for e in entries if e["name"] not in named]
    if len(heads) > 1:
        return [e["name"] for e in entries]
    return [e["name"] for e in entries if e["name"] in named]


def graph_questions(prefix, catalogs, subcat, blobs, subns=GLOBAL):
    """Fresh Subscriptions per package and channel (and the default one),
    an upgrade from every non-head bundle of every channel."""
    out = []
    for pkg, (default, chans) in sorted(channels_of(blobs).items()):
        out.append(question(f"{prefix}/fresh/{pkg}/(default)", catalogs, [sub(pkg, subcat, "", subns)]))
        for ch in sorted(chans):
            out.append(question(f"{prefix}/fresh/{pkg}/{ch}", catalogs, [sub(pkg, subcat, ch, subns)]))
        for ch in sorted(chans):
            for csv in sorted(set(non_heads(chans[ch]))):
                out.append(question(f"{prefix}/upgrade/{pkg}/{ch}/{csv}", catalogs,
                                    [sub(pkg, subcat, ch, subns, installed=csv)]))
    return out


# ---------------------------------------------------------------- fixtures

def bundle(pkg, version, name=None, provides=(), requires_gvk=(), requires_pkg=(), constraints=(), props=()):
    name = name or f"{pkg}.v{version}"
    p = [{"type": "olm.package", "value": {"packageName": pkg, "version": version}}]
    for g, v, k in provides:
        p.append({"type": "olm.gvk", "value": {"group": g, "kind": k, "version": v}})
    for g, v, k in requires_gvk:
        p.append({"type": "olm.gvk.required", "value": {"group": g, "kind": k, "version": v}})
    for n, r in requires_pkg:
        p.append({"type": "olm.package.required", "value": {"packageName": n, "versionRange": r}})
    for c in constraints:
        p.append({"type": "olm.constraint", "value": c})
    p.extend(props)
    return {"schema": "olm.bundle", "name": name, "package": pkg,
            "image": f"example.com/{pkg}-bundle:v{version}", "properties": p}


def package(name, default):
    return {"schema": "olm.package", "name": name, "defaultChannel": default}


def channel(pkg, name, entries):
    """entries: names, or (name, replaces), or dicts."""
    es = []
    for e in entries:
        if isinstance(e, str):
            es.append({"name": e})
        elif isinstance(e, tuple):
            d = {"name": e[0]}
            if e[1]:
                d["replaces"] = e[1]
            es.append(d)
        else:
            es.append(e)
    return {"schema": "olm.channel", "package": pkg, "name": name, "entries": es}


def linear(pkg, chname, versions):
    """A replaces chain over versions, oldest first."""
    es, prev = [], None
    for v in versions:
        es.append((f"{pkg}.v{v}", prev))
        prev = f"{pkg}.v{v}"
    return channel(pkg, chname, es)


def simple_pkg(pkg, versions, ch="stable", **kw):
    """package + one linear channel + bundles with the same properties."""
    return [package(pkg, ch), linear(pkg, ch, versions)] + [bundle(pkg, v, **kw) for v in versions]


FIXTURES = {}


def fixture(name, blobs):
    FIXTURES[name] = blobs
    return "catalogs/" + name


WIDGET = ("example.com", "v1", "Widget")
GADGET = ("example.com", "v1", "Gadget")


def fixture_questions():
    qs = []
    # providers for the corpus packages' requirements
    prov = fixture("providers",
                   [package("grafana-operator", "v4"),
                    linear("grafana-operator", "v4", ["4.6.0", "4.8.0", "4.10.0"]),
                    linear("grafana-operator", "v5", ["5.0.0"]),
                    bundle("grafana-operator", "4.6.0", provides=[("integreatly.org", "v1alpha1", "Grafana")]),
                    bundle("grafana-operator", "4.8.0", provides=[("integreatly.org", "v1alpha1", "Grafana")]),
                    bundle("grafana-operator", "4.10.0", provides=[("integreatly.org", "v1alpha1", "Grafana")]),
                    bundle("grafana-operator", "5.0.0", provides=[("grafana.integreatly.org", "v1beta1", "Grafana")])]
                   + simple_pkg("prometheus", ["0.47.0", "0.56.0"], ch="beta",
                                provides=[("monitoring.coreos.com", "v1", "Prometheus")])
                   + simple_pkg("argocd-operator", ["0.5.0", "0.6.0"], ch="alpha",
                                provides=[("argoproj.io", "v1alpha1", "Application")])
                   + simple_pkg("hive-operator", ["1.1.16"], ch="alpha",
                                provides=[("hive.openshift.io", "v1", "ClusterClaim"), ("hive.openshift.io", "v1", "ClusterDeployment")])
                   + simple_pkg("cert-manager", ["1.11.0", "1.12.0"],
                                provides=[("cert-manager.io", "v1", "Certificate"), ("cert-manager.io", "v1", "Issuer")])
                   + simple_pkg("self-node-remediation", ["0.4.0", "0.5.0"],
                                provides=[("self-node-remediation.medik8s.io", "v1alpha1", "SelfNodeRemediation")])
                   + simple_pkg("poison-pill", ["0.2.0"],
                                provides=[("poison-pill.medik8s.io", "v1alpha1", "PoisonPillRemediation")]))
    partial = fixture("providers-partial",
                      [package("grafana-operator", "v4"),
                       linear("grafana-operator", "v4", ["4.6.0"]),
                       bundle("grafana-operator", "4.6.0", provides=[("integreatly.org", "v1alpha1", "Grafana")])]
                      + simple_pkg("prometheus", ["0.47.0"], ch="beta",
                                   provides=[("monitoring.coreos.com", "v1", "Prometheus")])
                      + simple_pkg("cert-manager", ["1.11.0"], provides=[("cert-manager.io", "v1", "Certificate")])
                      + simple_pkg("self-node-remediation", ["0.4.0"],
                                   provides=[("self-node-remediation.medik8s.io", "v1alpha1", "SelfNodeRemediation")]))
    for f in sorted(glob.glob(os.path.join(SHARED, "reference/index/*.fbc.json"))):
        blobs = load_fbc(f)
        if not any(p["type"] in ("olm.package.required", "olm.gvk.required", "olm.constraint")
                   for b in blobs if b["schema"] == "olm.bundle" for p in b.get("properties", [])):
            continue
        base = os.path.basename(f)[:-len(".fbc.json")]
        src = "shared:reference/index/" + os.path.basename(f)
        cn = base.replace(".", "-")
        qs += graph_questions(f"deps/{base}/union", [cat(cn, [src, prov])], cn, blobs)
        qs += graph_questions(f"deps/{base}/separate", [cat(cn, [src]), cat("providers", [prov])], cn, blobs)
        qs += graph_questions(f"deps/{base}/partial", [cat(cn, [src]), cat("providers", [partial])], cn, blobs)

    # a missing dependency: the newest bundles need dep >=2.0.0, which no
    # catalog has; older ones need nothing
    md = fixture("missing-dep",
                 [package("app", "stable"), linear("app", "stable", ["1.0.0", "1.1.0", "1.2.0", "1.3.0"]),
                  bundle("app", "1.0.0"), bundle("app", "1.1.0"),
                  bundle("app", "1.2.0", requires_pkg=[("dep", ">=2.0.0")]),
                  bundle("app", "1.3.0", requires_pkg=[("dep", ">=2.0.0")])]
                 + simple_pkg("dep", ["1.0.0", "1.5.0"]))
    dep2 = fixture("dep-v2", simple_pkg("dep", ["2.0.0", "2.1.0"]))
    c = [cat("main", [md])]
    qs.append(question("fixture/missing-dep/fresh", c, [sub("app", "main", "stable")]))
    qs.append(question("fixture/missing-dep/fresh-default", c, [sub("app", "main")]))
    for v in ["1.0.0", "1.1.0", "1.2.0"]:
        qs.append(question(f"fixture/missing-dep/upgrade/app.v{v}", c, [sub("app", "main", "stable", installed=f"app.v{v}")]))
    c2 = [cat("main", [md]), cat("deps", [dep2])]
    qs.append(question("fixture/missing-dep/provided-elsewhere/fresh", c2, [sub("app", "main", "stable")]))
    qs.append(question("fixture/missing-dep/provided-elsewhere/upgrade/app.v1.1.0", c2,
                       [sub("app", "main", "stable", installed="app.v1.1.0")]))
    qs.append(question("fixture/missing-dep/provided-elsewhere/dep-installed-old", c2,
                       [sub("app", "main", "stable", installed="app.v1.1.0"), sub("dep", "main", "stable", installed="dep.v1.0.0")]))
    apponly = fixture("missing-dep-app", [b for b in FIXTURES["missing-dep"] if b.get("package", b.get("name")) == "app"])
    qs.append(question("fixture/missing-dep/union/fresh", [cat("main", [apponly, dep2])], [sub("app", "main", "stable")]))
    qs.append(question("fixture/missing-dep/union/upgrade/app.v1.1.0", [cat("main", [apponly, dep2])],
                       [sub("app", "main", "stable", installed="app.v1.1.0")]))

    # one API from two catalogs (and packages) at different priorities
    cons = fixture("widget-consumer", simple_pkg("consumer", ["1.0.0", "1.1.0"], requires_gvk=[WIDGET]))
    wa = fixture("widget-a", simple_pkg("widget-a", ["1.0.0"], provides=[WIDGET]))
    wb = fixture("widget-b", simple_pkg("widget-b", ["2.0.0"], provides=[WIDGET]))
    wab = fixture("widget-ab", simple_pkg("widget-a", ["1.0.0"], provides=[WIDGET]) + simple_pkg("widget-b", ["2.0.0"], provides=[WIDGET]))
    wsame = fixture("widget-same-pkg", simple_pkg("widget", ["1.0.0"], provides=[WIDGET]))
    wsame2 = fixture("widget-same-pkg-2", simple_pkg("widget", ["2.0.0"], provides=[WIDGET]))
    for pa, pb in [(0, 0), (0, 10), (10, 0), (-5, 0)]:
        cs = [cat("consumers", [cons]), cat("cat-a", [wa], priority=pa), cat("cat-b", [wb], priority=pb)]
        qs.append(question(f"fixture/priority/two-packages/a{pa}-b{pb}", cs, [sub("consumer", "consumers", "stable")]))
        cs = [cat("consumers", [cons]), cat("cat-a", [wsame], priority=pa), cat("cat-b", [wsame2], priority=pb)]
        qs.append(question(f"fixture/priority/same-package/a{pa}-b{pb}", cs, [sub("consumer", "consumers", "stable")]))
        # the consumer's own catalog also provides it
        cs = [cat("consumers", [cons, wa], priority=pa), cat("cat-b", [wb], priority=pb)]
        qs.append(question(f"fixture/priority/own-catalog/own{pa}-other{pb}", cs, [sub("consumer", "consumers", "stable")]))
        # namespace-local catalog vs a global one
        cs = [cat("consumers", [cons]), cat("local", [wa], namespace=NS, priority=pa), cat("global", [wb], priority=pb)]
        qs.append(question(f"fixture/priority/local-vs-global/local{pa}-global{pb}", cs, [sub("consumer", "consumers", "stable")]))
    qs.append(question("fixture/priority/one-catalog-two-packages", [cat("consumers", [cons]), cat("widgets", [wab])],
                       [sub("consumer", "consumers", "stable")]))
    qs.append(question("fixture/priority/catalog-name-tie", [cat("consumers", [cons]), cat("zz", [wa]), cat("aa", [wb])],
                       [sub("consumer", "consumers", "stable")]))
    qs.append(question("fixture/priority/local-consumer", [cat("consumers", [cons], namespace=NS), cat("global-a", [wa]), cat("local-b", [wb], namespace=NS)],
                       [sub("consumer", "consumers", "stable", namespace=NS)]))

    # installed operators providing a required API
    qs.append(question("fixture/installed-provider/unsubscribed-csv", [cat("consumers", [cons]), cat("cat-a", [wa]), cat("cat-b", [wb])],
                       [sub("consumer", "consumers", "stable")], installed=[{"package": "widget-b", "csv": "widget-b.v2.0.0"}]))
    qs.append(question("fixture/installed-provider/subscribed", [cat("consumers", [cons]), cat("cat-a", [wa]), cat("cat-b", [wb])],
                       [sub("consumer", "consumers", "stable"), sub("widget-b", "cat-b", "stable", installed="widget-b.v2.0.0")]))
    qs.append(question("fixture/installed-provider/not-in-any-catalog", [cat("consumers", [cons]), cat("cat-a", [wa])],
                       [sub("consumer", "consumers", "stable")],
                       installed=[{"package": "gone", "csv": "gone.v0.1.0", "provided": [{"group": "example.com", "version": "v1", "kind": "Widget"}]}]))
    qs.append(question("fixture/installed-provider/upgrade-consumer", [cat("consumers", [cons]), cat("cat-a", [wa]), cat("cat-b", [wb])],
                       [sub("consumer", "consumers", "stable", installed="consumer.v1.0.0")],
                       installed=[{"package": "widget-b", "csv": "widget-b.v2.0.0"}]))
    qs.append(question("fixture/installed-provider/two-providers-installed", [cat("consumers", [cons]), cat("widgets", [wab])],
                       [sub("consumer", "consumers", "stable")],
                       installed=[{"package": "widget-a", "csv": "widget-a.v1.0.0"}, {"package": "widget-b", "csv": "widget-b.v2.0.0"}]))

    # olm.constraint of each kind
    pa = {"package": {"packageName": "prov-a", "versionRange": ">=1.5.0"}}
    gg = {"gvk": {"group": "example.com", "version": "v1", "kind": "Gadget"}}
    cblobs = (simple_pkg("prov-a", ["1.0.0", "1.5.0", "2.0.0"])
              + simple_pkg("prov-b", ["1.0.0"], provides=[GADGET])
              + simple_pkg("prov-c", ["3.0.0"], props=[{"type": "example.com/tier", "value": "gold"}])
              + simple_pkg("con-package", ["1.0.0"], constraints=[pa])
              + simple_pkg("con-gvk", ["1.0.0"], constraints=[gg])
              + simple_pkg("con-all", ["1.0.0"], constraints=[{"all": {"constraints": [pa, gg]}}])
              + simple_pkg("con-any", ["1.0.0"], constraints=[{"any": {"constraints": [
                  {"package": {"packageName": "prov-a", "versionRange": ">=3.0.0"}}, gg]}}])
              + simple_pkg("con-any-none", ["1.0.0"], constraints=[{"any": {"constraints": [
                  {"package": {"packageName": "prov-a", "versionRange": ">=3.0.0"}},
                  {"package": {"packageName": "nope", "versionRange": ">=0.0.0"}}]}}])
              + simple_pkg("con-not", ["1.0.0"], constraints=[{"not": {"constraints": [
                  {"package": {"packageName": "prov-a", "versionRange": ">=2.0.0"}}]}}])
              + simple_pkg("con-all-not", ["1.0.0"], constraints=[{"all": {"constraints": [
                  {"package": {"packageName": "prov-a", "versionRange": ">=1.0.0"}},
                  {"not": {"constraints": [{"package": {"packageName": "prov-a", "versionRange": ">=1.5.0"}}]}}]}}])
              + simple_pkg("con-cel", ["1.0.0"], constraints=[{"cel": {"rule":
                  "properties.exists(p, p.type == 'example.com/tier' && p.value == 'gold')"}}])
              + simple_pkg("con-cel-semver", ["1.0.0"], constraints=[{"cel": {"rule":
                  "properties.exists(p, p.type == 'olm.package' && p.value.packageName == 'prov-a' && semver_compare(p.value.version, '1.2.0') < 0)"}}])
              + simple_pkg("con-cel-none", ["1.0.0"], constraints=[{"failureMessage": "needs platinum", "cel": {"rule":
                  "properties.exists(p, p.type == 'example.com/tier' && p.value == 'platinum')"}}]))
    cc = fixture("constraints", cblobs)
    c = [cat("cons", [cc])]
    for p in ["con-package", "con-gvk", "con-all", "con-any", "con-any-none", "con-not", "con-all-not", "con-cel", "con-cel-semver", "con-cel-none"]:
        qs.append(question(f"fixture/constraint/{p}", c, [sub(p, "cons", "stable")]))
    qs.append(question("fixture/constraint/con-not/with-prov-a", c, [sub("con-not", "cons", "stable"), sub("prov-a", "cons", "stable")]))
    qs.append(question("fixture/constraint/con-not/with-prov-a-installed", c,
                       [sub("con-not", "cons", "stable"), sub("prov-a", "cons", "stable", installed="prov-a.v1.0.0")]))
    qs.append(question("fixture/constraint/con-package/prov-a-installed-old", c,
                       [sub("con-package", "cons", "stable"), sub("prov-a", "cons", "stable", installed="prov-a.v1.0.0")]))
    qs.append(question("fixture/constraint/con-package/prov-a-installed-unsubscribed", c,
                       [sub("con-package", "cons", "stable")], installed=[{"package": "prov-a", "csv": "prov-a.v1.0.0"}]))

    # dependency cycles
    cyc = fixture("cycle", simple_pkg("cyc-a", ["1.0.0"], requires_pkg=[("cyc-b", ">=1.0.0")])
                  + simple_pkg("cyc-b", ["1.0.0"], requires_pkg=[("cyc-a", ">=1.0.0")])
                  + simple_pkg("gcyc-a", ["1.0.0"], provides=[("a.example.com", "v1", "A")], requires_gvk=[("b.example.com", "v1", "B")])
                  + simple_pkg("gcyc-b", ["1.0.0"], provides=[("b.example.com", "v1", "B")], requires_gvk=[("a.example.com", "v1", "A")])
                  + simple_pkg("self", ["1.0.0"], requires_pkg=[("self", ">=1.0.0")])
                  + simple_pkg("cyc-bad-a", ["1.0.0"], requires_pkg=[("cyc-bad-b", ">=1.0.0")])
                  + simple_pkg("cyc-bad-b", ["1.0.0"], requires_pkg=[("cyc-bad-a", ">=2.0.0")]))
    c = [cat("cyc", [cyc])]
    for p in ["cyc-a", "gcyc-a", "self", "cyc-bad-a"]:
        qs.append(question(f"fixture/cycle/{p}", c, [sub(p, "cyc", "stable")]))
    qs.append(question("fixture/cycle/both-subscribed", c, [sub("cyc-a", "cyc", "stable"), sub("cyc-b", "cyc", "stable")]))

    # startingCSV, skips and skipRange upgrades, channel head vs newest
    up = fixture("upgrades",
                 [package("up", "stable"),
                  channel("up", "stable", [{"name": "up.v1.0.0"},
                                           {"name": "up.v1.1.0", "replaces": "up.v1.0.0"},
                                           {"name": "up.v1.2.0", "replaces": "up.v1.1.0", "skips": ["up.v1.0.0"]},
                                           {"name": "up.v1.3.0", "replaces": "up.v1.2.0"},
                                           {"name": "up.v1.4.0", "replaces": "up.v1.3.0", "skipRange": ">=1.1.0 <1.4.0"}]),
                  channel("up", "fast", [{"name": "up.v1.0.0"},
                                         {"name": "up.v2.0.0", "replaces": "up.v1.0.0", "skipRange": ">=1.0.0 <2.0.0"}])]
                 + [bundle("up", v) for v in ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "2.0.0"]]
                 + [package("oddhead", "stable"),
                    channel("oddhead", "stable", [{"name": "oddhead.v3.0.0"}, {"name": "oddhead.v2.0.0", "replaces": "oddhead.v3.0.0"}]),
                    bundle("oddhead", "3.0.0"), bundle("oddhead", "2.0.0")]
                 + [package("skiponly", "stable"),
                    channel("skiponly", "stable", [{"name": "skiponly.v1.0.0"}, {"name": "skiponly.v1.1.0", "skips": ["skiponly.v1.0.0"]}]),
                    bundle("skiponly", "1.0.0"), bundle("skiponly", "1.1.0")]
                 + [package("rangeonly", "stable"),
                    channel("rangeonly", "stable", [{"name": "rangeonly.v1.0.0"},
                                                    {"name": "rangeonly.v1.1.0", "replaces": "rangeonly.v1.0.0"},
                                                    {"name": "rangeonly.v1.2.0", "skips": ["rangeonly.v1.1.0", "rangeonly.v1.0.0"], "skipRange": "<1.2.0"}]),
                    bundle("rangeonly", "1.0.0"), bundle("rangeonly", "1.1.0"), bundle("rangeonly", "1.2.0")]
                 + [package("multi", "b"),
                    linear("multi", "a", ["1.0.0", "3.0.0"]), linear("multi", "b", ["1.0.0", "2.0.0"]), linear("multi", "c", ["1.0.0", "4.0.0"]),
                    bundle("multi", "1.0.0"), bundle("multi", "2.0.0"), bundle("multi", "3.0.0"), bundle("multi", "4.0.0")])
    c = [cat("ups", [up])]
    qs += graph_questions("fixture/upgrades", c, "ups", FIXTURES["upgrades"])
    for v in ["1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0", "9.9.9"]:
        qs.append(question(f"fixture/starting-csv/up.v{v}", c, [sub("up", "ups", "stable", starting=f"up.v{v}")]))
    qs.append(question("fixture/starting-csv/fast/up.v1.0.0", c, [sub("up", "ups", "fast", starting="up.v1.0.0")]))
    qs.append(question("fixture/starting-csv/default-channel/up.v1.1.0", c, [sub("up", "ups", starting="up.v1.1.0")]))
    qs.append(question("fixture/starting-csv/with-installed", c, [sub("up", "ups", "stable", installed="up.v1.1.0", starting="up.v1.0.0")]))
    qs.append(question("fixture/upgrades/switch-channel/up.v1.0.0-to-fast", c, [sub("up", "ups", "fast", installed="up.v1.0.0")]))
    qs.append(question("fixture/upgrades/switch-channel/up.v1.3.0-to-fast", c, [sub("up", "ups", "fast", installed="up.v1.3.0")]))
    qs.append(question("fixture/upgrades/installed-head", c, [sub("up", "ups", "stable", installed="up.v1.4.0")]))
    qs.append(question("fixture/upgrades/installed-not-in-channel", c, [sub("up", "ups", "fast", installed="up.v1.2.0")]))

    # dependencies on a package version range; default channel; shared deps
    vr = fixture("version-range",
                 [package("lib", "stable"),
                  linear("lib", "stable", ["0.9.0", "1.0.0", "1.5.0", "2.0.0"]),
                  linear("lib", "preview", ["1.7.0"]),
                  linear("lib", "legacy", ["1.2.0"])]
                 + [bundle("lib", v) for v in ["0.9.0", "1.0.0", "1.5.0", "2.0.0", "1.7.0", "1.2.0"]]
                 + simple_pkg("range-user", ["1.0.0"], requires_pkg=[("lib", ">=1.0.0 <2.0.0")])
                 + simple_pkg("range-preview", ["1.0.0"], requires_pkg=[("lib", ">=1.6.0 <2.0.0")])
                 + simple_pkg("range-legacy", ["1.0.0"], requires_pkg=[("lib", "1.2.0")])
                 + simple_pkg("range-none", ["1.0.0"], requires_pkg=[("lib", ">=3.0.0")])
                 + simple_pkg("range-low", ["1.0.0"], requires_pkg=[("lib", "<1.2.0")])
                 + simple_pkg("range-high", ["1.0.0"], requires_pkg=[("lib", ">=1.5.0")])
                 + simple_pkg("range-any", ["1.0.0"], requires_pkg=[("lib", ">=0.0.0")])
                 + simple_pkg("dep-gvk-user", ["1.0.0"], requires_gvk=[GADGET])
                 + [package("gadgets", "stable"),
                    linear("gadgets", "stable", ["1.0.0", "1.1.0"]), linear("gadgets", "edge", ["1.0.0", "1.2.0"]),
                    bundle("gadgets", "1.0.0", provides=[GADGET]), bundle("gadgets", "1.1.0", provides=[GADGET]),
                    bundle("gadgets", "1.2.0", provides=[GADGET])]
                 + simple_pkg("more-gadgets", ["9.0.0"], provides=[GADGET]))
    c = [cat("vr", [vr])]
    for p in ["range-user", "range-preview", "range-legacy", "range-none", "range-any", "dep-gvk-user"]:
        qs.append(question(f"fixture/version-range/{p}", c, [sub(p, "vr", "stable")]))
    qs.append(question("fixture/shared-dep/overlapping", c, [sub("range-low", "vr", "stable"), sub("range-user", "vr", "stable")]))
    qs.append(question("fixture/shared-dep/disjoint", c, [sub("range-low", "vr", "stable"), sub("range-high", "vr", "stable")]))
    qs.append(question("fixture/shared-dep/same-range", c, [sub("range-user", "vr", "stable"), sub("range-any", "vr", "stable")]))
    qs.append(question("fixture/shared-dep/with-lib-subscribed", c, [sub("range-user", "vr", "stable"), sub("lib", "vr", "stable")]))
    qs.append(question("fixture/shared-dep/with-lib-installed", c,
                       [sub("range-user", "vr", "stable"), sub("lib", "vr", "stable", installed="lib.v0.9.0")]))
    qs.append(question("fixture/shared-dep/lib-installed-too-new", c,
                       [sub("range-user", "vr", "stable"), sub("lib", "vr", "stable", installed="lib.v2.0.0")]))
    qs.append(question("fixture/shared-dep/lib-installed-in-range", c,
                       [sub("range-user", "vr", "stable")], installed=[{"package": "lib", "csv": "lib.v1.0.0"}]))
    qs.append(question("fixture/shared-dep/two-subs-one-package", c, [sub("lib", "vr", "stable"), sub("lib", "vr", "preview", name="lib-preview")]))

    # errors in the Subscription itself
    c = [cat("vr", [vr])]
    qs.append(question("fixture/subscription/no-such-catalog", c, [sub("lib", "nope", "stable")]))
    qs.append(question("fixture/subscription/no-such-package", c, [sub("nope", "vr", "stable")]))
    qs.append(question("fixture/subscription/no-such-channel", c, [sub("lib", "vr", "nope")]))
    qs.append(question("fixture/subscription/catalog-in-other-namespace", c, [sub("lib", "vr", "stable", namespace=NS)]))
    qs.append(question("fixture/subscription/one-bad-one-good", c, [sub("lib", "vr", "nope"), sub("range-any", "vr", "stable")]))

    # a provider whose installed version lacks the API a new Subscription needs
    ev = fixture("api-evolves",
                 [package("evolving", "stable"), linear("evolving", "stable", ["1.0.0", "1.1.0", "2.0.0"]),
                  bundle("evolving", "1.0.0"), bundle("evolving", "1.1.0"), bundle("evolving", "2.0.0", provides=[GADGET])]
                 + simple_pkg("needs-gadget", ["1.0.0"], requires_gvk=[GADGET])
                 + simple_pkg("needs-evolving-2", ["1.0.0"], requires_pkg=[("evolving", ">=2.0.0")])
                 + simple_pkg("needs-evolving-1", ["1.0.0"], requires_pkg=[("evolving", "<2.0.0")]))
    c = [cat("ev", [ev])]
    for v in ["1.0.0", "1.1.0"]:
        qs.append(question(f"fixture/api-evolves/gvk/installed-{v}", c,
                           [sub("needs-gadget", "ev", "stable"), sub("evolving", "ev", "stable", installed=f"evolving.v{v}")]))
        qs.append(question(f"fixture/api-evolves/package/installed-{v}", c,
                           [sub("needs-evolving-2", "ev", "stable"), sub("evolving", "ev", "stable", installed=f"evolving.v{v}")]))
    qs.append(question("fixture/api-evolves/pinned-below", c,
                       [sub("needs-evolving-1", "ev", "stable"), sub("evolving", "ev", "stable", installed="evolving.v1.0.0")]))
    qs.append(question("fixture/api-evolves/fresh-both", c, [sub("needs-evolving-1", "ev", "stable"), sub("evolving", "ev", "stable")]))
    qs.append(question("fixture/api-evolves/unsubscribed-installed", c,
                       [sub("needs-gadget", "ev", "stable")], installed=[{"package": "evolving", "csv": "evolving.v1.1.0"}]))

    # a dependency chain inside one catalog: app's newest bundles need dep >=2.0.0
    ch = fixture("chain-dep",
                 [b for b in FIXTURES["missing-dep"] if b.get("package", b.get("name")) == "app"]
                 + simple_pkg("dep", ["1.0.0", "1.5.0", "2.0.0", "2.1.0"]))
    c = [cat("main", [ch])]
    qs.append(question("fixture/chain-dep/app-and-dep-installed", c,
                       [sub("app", "main", "stable", installed="app.v1.1.0"), sub("dep", "main", "stable", installed="dep.v1.0.0")]))
    qs.append(question("fixture/chain-dep/app-and-dep-1.5-installed", c,
                       [sub("app", "main", "stable", installed="app.v1.1.0"), sub("dep", "main", "stable", installed="dep.v1.5.0")]))
    qs.append(question("fixture/chain-dep/dep-installed-unsubscribed", c,
                       [sub("app", "main", "stable", installed="app.v1.1.0")], installed=[{"package": "dep", "csv": "dep.v1.0.0"}]))
    qs.append(question("fixture/chain-dep/fresh-with-dep-installed", c,
                       [sub("app", "main", "stable"), sub("dep", "main", "stable", installed="dep.v1.5.0")]))

    # one dependency package (same bundles) in two catalogs
    dp = fixture("dep-pkg-user", simple_pkg("dep-user", ["1.0.0"], requires_pkg=[("shared-lib", ">=1.0.0")]))
    l1 = fixture("shared-lib-1", simple_pkg("shared-lib", ["1.0.0", "1.1.0"]))
    l2 = fixture("shared-lib-2", simple_pkg("shared-lib", ["1.0.0", "1.2.0"]))
    for pa, pb in [(0, 0), (0, 1), (1, 0)]:
        qs.append(question(f"fixture/dep-two-catalogs/x{pa}-y{pb}", [cat("users", [dp]), cat("x", [l1], priority=pa), cat("y", [l2], priority=pb)],
                           [sub("dep-user", "users", "stable")]))
        qs.append(question(f"fixture/dep-two-catalogs/reversed/x{pa}-y{pb}", [cat("users", [dp]), cat("x", [l2], priority=pa), cat("y", [l1], priority=pb)],
                           [sub("dep-user", "users", "stable")]))
        qs.append(question(f"fixture/dep-two-catalogs/local/x{pa}-y{pb}", [cat("users", [dp]), cat("x", [l1], priority=pa), cat("y", [l2], namespace=NS, priority=pb)],
                           [sub("dep-user", "users", "stable")]))
    qs.append(question("fixture/dep-two-catalogs/users-local", [cat("users", [dp], namespace=NS), cat("x", [l1]), cat("y", [l2])],
                       [sub("dep-user", "users", "stable", namespace=NS)]))

    # the dependency's own Subscription pins it to the catalog without the version needed
    qs.append(question("fixture/dep-two-catalogs/pinned-elsewhere", [cat("users", [dp]), cat("x", [l1]), cat("y", [l2])],
                       [sub("dep-user", "users", "stable"), sub("shared-lib", "y", "stable", installed="shared-lib.v1.0.0")]))
    vu = fixture("dep-pkg-user-v12", simple_pkg("dep-user-12", ["1.0.0"], requires_pkg=[("shared-lib", ">=1.2.0")]))
    qs.append(question("fixture/dep-two-catalogs/only-one-satisfies", [cat("users", [vu]), cat("x", [l1], priority=5), cat("y", [l2])],
                       [sub("dep-user-12", "users", "stable")]))
    qs.append(question("fixture/dep-two-catalogs/pinned-to-unsatisfying", [cat("users", [vu]), cat("x", [l1]), cat("y", [l2])],
                       [sub("dep-user-12", "users", "stable"), sub("shared-lib", "x", "stable")]))

    # deprecations do not change what OLM v0 resolves
    dd = fixture("deprecated",
                 simple_pkg("old", ["1.0.0", "1.1.0"])
                 + [{"schema": "olm.deprecations", "package": "old", "entries": [
                     {"reference": {"schema": "olm.bundle", "name": "old.v1.1.0"}, "message": "old.v1.1.0 is deprecated"},
                     {"reference": {"schema": "olm.channel", "name": "stable"}, "message": "stable is deprecated"}]}]
                 + simple_pkg("old-user", ["1.0.0"], requires_pkg=[("old", ">=1.0.0")]))
    c = [cat("dd", [dd])]
    qs.append(question("fixture/deprecated/fresh", c, [sub("old", "dd", "stable")]))
    qs.append(question("fixture/deprecated/upgrade", c, [sub("old", "dd", "stable", installed="old.v1.0.0")]))
    qs.append(question("fixture/deprecated/as-dependency", c, [sub("old-user", "dd", "stable")]))
    return qs


def main():
    qs = []
    for f in sorted(glob.glob(os.path.join(SHARED, "reference/index/*.fbc.json"))):
        base = os.path.basename(f)[:-len(".fbc.json")]
        cn = base.replace(".", "-")
        qs += graph_questions(f"ref/{base}", [cat(cn, ["shared:reference/index/" + os.path.basename(f)])], cn, load_fbc(f))
    qs += fixture_questions()
    names = [q["name"] for q in qs]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"duplicate question names: {sorted(dup)}")
    for name, blobs in FIXTURES.items():
        d = os.path.join(HERE, "catalogs", name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "catalog.json"), "w") as fh:
            for b in blobs:
                fh.write(json.dumps(b, indent=2) + "\n")
    with open(os.path.join(HERE, "questions.json"), "w") as fh:
        json.dump(qs, fh, indent=1)
        fh.write("\n")
    kinds = {}
    for q in qs:
        k = q["name"].split("/")[0]
        kinds[k] = kinds.get(k, 0) + 1
    print(len(qs), "questions:", kinds, file=sys.stderr)


if __name__ == "__main__":
    main()
