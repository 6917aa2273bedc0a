#!/usr/bin/env python3
"""Writes the request tables the catalogd harness answers (see README.md).

fixture.requests.json: every sample query of catalogd's sample-queries.txt
(given as the first argument), GraphQL edge cases, and the Accept-Encoding
table; reference.requests.json: the sample queries and a few more, for the
reference renders.
"""
import json
import re
import sys

GQL = "/catalogs/test-catalog/api/v1/graphql"
JSON = {"Content-Type": "application/json"}


def samples(path):
    out, title, block = [], None, None
    for line in open(path):
        line = line.rstrip("\n")
        if block is not None:
            block.append(line)
            if line == "}":
                out.append((title, "\n".join(block)))
                block = None
        elif line.startswith("# "):
            title = line[2:]
        elif line == "{":
            block = [line]
    return out


def post(name, query, **kw):
    r = {"name": name, "method": "POST", "path": kw.pop("path", GQL),
         "header": kw.pop("header", dict(JSON)), "body": json.dumps({"query": query})}
    r.update(kw)
    return r


def raw(name, method, body, header=None, path=GQL):
    r = {"name": name, "method": method, "path": path, "header": header if header is not None else dict(JSON)}
    if body is not None:
        r["body"] = body
    return r


sample = [post("sample: " + t, q) for t, q in samples(sys.argv[1])]

more = [
    post("introspection: query fields and their arguments",
         "{ __schema { queryType { name fields { name args { name description defaultValue type { name } } type { kind ofType { name } } } } } }"),
    post("introspection: every type", "{ __schema { types { name kind } } }"),
    post("introspection: olm.bundle's type",
         '{ __type(name: "OlmBundle") { name fields { name type { kind name ofType { kind name } } } } }'),
    post("olm.bundle: every field", "{ olmbundles { name package image properties { type value } relatedImages { name image } } }"),
    post("olm.channel entries", "{ olmchannels { name package entries { name replaces skipRange } } }"),
    post("olm.channel entries with skips (a list inside a list of objects)", "{ olmchannels { name entries { name skips } } }"),
    post("olm.package: icon is JSON text", "{ olmpackages { name icon description defaultChannel } }"),
    post("olm.deprecations", "{ olmdeprecationss { package entries { message reference } } }"),
]

edge = [
    post("odd keys: every field", "{ myoddschemas { name package csvDescription csvThing field_123abc value snakeCaseKey private aB big tiny nothing emptyList mixedList numbers floats nullFirst { a } object objects { k list n otherKey third } later { now } extra } }"),
    post("odd keys: scalar fields only", "{ myoddschemas { name csvDescription csvThing field_123abc value snakeCaseKey private aB big tiny nothing extra } }"),
    post("odd keys: objects", "{ myoddschemas { name objects { k n otherKey third } } }"),
    post("odd keys: later (a string, then a list of objects)", "{ myoddschemas { name later { now } } }"),
    post("odd keys: numbers (a list, then a number)", "{ myoddschemas { name numbers } }"),
    post("keys in other cases", "{ mycases { schema name package value list } }"),
    post("keys in other cases: NAME is name", "{ mycases { name } }"),
    post("pagination: limit 1 offset 1", "{ olmbundles(limit: 1, offset: 1) { name } }"),
    post("pagination: limit 0", "{ olmbundles(limit: 0) { name } }"),
    post("pagination: limit -1", "{ olmbundles(limit: -1) { name } }"),
    post("pagination: limit 1000", "{ olmbundles(limit: 1000) { name } }"),
    post("pagination: offset past the end", "{ olmbundles(offset: 1000) { name } }"),
    post("pagination: offset -5", "{ olmbundles(offset: -5, limit: 2) { name } }"),
    post("pagination: limit null", "{ olmbundles(limit: null) { name } }"),
    post("pagination: limit of the wrong type", '{ olmbundles(limit: "x") { name } }'),
    post("unknown field", "{ olmbundles { name nosuchfield } }"),
    post("unknown root field", "{ nosuch { name } }"),
    post("unknown argument", "{ olmbundles(first: 1) { name } }"),
    post("syntax error", "{ olmbundles { name "),
    post("not graphql at all", "hello"),
    post("scalar with a selection", "{ olmbundles { name { x } } }"),
    post("object without a selection", "{ summary }"),
    post("aliases", "{ a: olmbundles(limit: 1) { n: name } b: olmpackages { name } }"),
    post("fragments", "query { olmbundles(limit: 2) { ...B } } fragment B on OlmBundle { name package }"),
    post("named query with a variable (variables are ignored)", "query Q($n: Int) { olmbundles(limit: $n) { name } }", body=json.dumps({"query": "query Q($n: Int) { olmbundles(limit: $n) { name } }", "variables": {"n": 1}})),
    post("required variable not given", "query Q($n: Int!) { olmbundles(limit: $n) { name } }"),
    post("two operations, operationName ignored", "query A { summary { totalSchemas } } query B { olmpackages { name } }", body=json.dumps({"query": "query A { summary { totalSchemas } } query B { olmpackages { name } }", "operationName": "B"})),
    post("mutation", "mutation { x }"),
    post("subscription", "subscription { olmbundles { name } }"),
    post("depth 11", '{ __type(name: "OlmBundle") { fields { name type { ' + "ofType { " * 7 + "name" + " }" * 7 + " } } } }"),
    post("depth 10", '{ __type(name: "OlmBundle") { fields { name type { ' + "ofType { " * 6 + "name" + " }" * 6 + " } } } }"),
    post("depth 12 through a fragment", "{ ...F } fragment F on Query { __schema { types { name fields { name type { " + "ofType { " * 6 + "name" + " }" * 6 + " } } } } }"),
    post("51 aliases", "{ " + " ".join("a%d: summary { totalSchemas }" % i for i in range(51)) + " }"),
    post("50 aliases", "{ " + " ".join("a%d: olmpackages(limit: 1) { name }" % i for i in range(50)) + " }"),
    post("501 fields", "{ olmbundles { " + " ".join(["name"] * 500) + " } }"),
    post("__typename", "{ __typename summary { __typename totalSchemas } }"),
    raw("GET", "GET", None, header={}),
    raw("GET with a query parameter", "GET", None, header={}, path=GQL + "?query=%7Bsummary%7BtotalSchemas%7D%7D"),
    raw("HEAD", "HEAD", None, header={}),
    raw("PUT", "PUT", json.dumps({"query": "{ summary { totalSchemas } }"})),
    raw("OPTIONS", "OPTIONS", None, header={}),
    raw("POST text/plain", "POST", json.dumps({"query": "{ summary { totalSchemas } }"}), header={"Content-Type": "text/plain"}),
    raw("POST application/graphql", "POST", "{ summary { totalSchemas } }", header={"Content-Type": "application/graphql"}),
    raw("POST without a content type", "POST", json.dumps({"query": "{ summary { totalSchemas } }"}), header={}),
    raw("POST form-encoded", "POST", "query=%7Bsummary%7BtotalSchemas%7D%7D", header={"Content-Type": "application/x-www-form-urlencoded"}),
    raw("empty body", "POST", ""),
    raw("empty object", "POST", "{}"),
    raw("empty query", "POST", '{"query": ""}'),
    raw("null query", "POST", '{"query": null}'),
    raw("query is a number", "POST", '{"query": 5}'),
    raw("body is null", "POST", "null"),
    raw("body is a list", "POST", '[{"query": "{ summary { totalSchemas } }"}]'),
    raw("body is not JSON", "POST", "{query: x}"),
    raw("trailing garbage after the object", "POST", '{"query": "{ summary { totalSchemas } }"} trailing'),
    raw("Query key in capitals", "POST", '{"Query": "{ summary { totalSchemas } }"}'),
    raw("whitespace-only query", "POST", '{"query": "   "}'),
    dict(raw("query of 100001 bytes", "POST", " "), bodyRepeat=100000 - len("{summary{totalSchemas}}") + 1, bodyPrefix='{"query": "{summary{totalSchemas}}', bodySuffix='"}'),
    dict(raw("query of 100000 bytes", "POST", " "), bodyRepeat=100000 - len("{summary{totalSchemas}}"), bodyPrefix='{"query": "{summary{totalSchemas}}', bodySuffix='"}'),
    dict(raw("body over 1 MiB", "POST", " "), bodyRepeat=1 << 20, bodyPrefix='{"query": "{summary{totalSchemas}}', bodySuffix='"}'),
    post("invalid catalog name", "{ summary { totalSchemas } }", path="/catalogs/Not_Valid/api/v1/graphql"),
    raw("invalid catalog name, GET", "GET", None, header={}, path="/catalogs/Not_Valid/api/v1/graphql"),
    raw("invalid catalog name, bad body", "POST", "nope", path="/catalogs/Not_Valid/api/v1/graphql"),
    post("another catalog", "{ summary { totalSchemas } }", path="/catalogs/other-catalog/api/v1/graphql"),
    post("another catalog, query that does not parse", "{ summary", path="/catalogs/other-catalog/api/v1/graphql"),
    post("another catalog, unknown field", "{ nosuch }", path="/catalogs/other-catalog/api/v1/graphql"),
    raw("another catalog, empty body", "POST", "", path="/catalogs/other-catalog/api/v1/graphql"),
    raw("another catalog, GET", "GET", None, header={}, path="/catalogs/other-catalog/api/v1/graphql"),
    post("trailing slash", "{ summary { totalSchemas } }", path=GQL + "/"),
]

encodings = ["", "gzip", "zstd", "gzip, zstd", "zstd, gzip", "zstd;q=0.5, gzip", "gzip;q=0.5, zstd",
             "gzip;q=0.5, zstd;q=0.5", "gzip;q=0", "zstd;q=0", "gzip;q=0, zstd;q=0", "*", "*;q=0", "x-gzip",
             "x-gzip, zstd", "GZIP", "ZSTD", "deflate", "br", "identity", "identity;q=0", "gzip;q=abc",
             "gzip; q=0.8, zstd; Q=0.9", "gzip;q=1.5, zstd;q=0.9", "zstd;q=-1, gzip", " gzip ", "gzip, gzip;q=0",
             "gzip;q=0, gzip", "deflate, gzip;q=1.0, *;q=0.5", "gzip, deflate, br, zstd", "gzip;level=9",
             "gzip;q =0.5, zstd;q=0.4", "zstd;q=0.001, gzip;q=0.0001", "gzip,", ",zstd",
             "gzip;q=NaN", "gzip;q=NaN, zstd", "zstd;q=NaN, gzip", "gzip;q=1e400", "gzip;q=0.5;q=0"]
paths = [("all (large)", "/catalogs/test-catalog/api/v1/all"),
         ("metas 1023 bytes", "/catalogs/test-catalog/api/v1/metas?name=pad1023"),
         ("metas 1024 bytes", "/catalogs/test-catalog/api/v1/metas?name=pad1024"),
         ("metas 1025 bytes", "/catalogs/test-catalog/api/v1/metas?name=pad1025"),
         ("metas 1024 bytes, every parameter", "/catalogs/test-catalog/api/v1/metas?name=pad1024&schema=pad.blob&package=pad")]
enc = []
for label, path in paths:
    for ae in encodings:
        enc.append({"name": "Accept-Encoding %r, %s" % (ae, label), "method": "GET", "path": path,
                    "header": {"Accept-Encoding": ae} if ae else {}})
for ae in ["gzip", "zstd"]:
    enc += [
        {"name": "HEAD %s, all" % ae, "method": "HEAD", "path": "/catalogs/test-catalog/api/v1/all", "header": {"Accept-Encoding": ae}},
        {"name": "Range %s, all" % ae, "method": "GET", "path": "/catalogs/test-catalog/api/v1/all", "header": {"Accept-Encoding": ae, "Range": "bytes=0-1999"}},
        {"name": "If-Modified-Since %s, all" % ae, "method": "GET", "path": "/catalogs/test-catalog/api/v1/all", "header": {"Accept-Encoding": ae, "If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"}},
        {"name": "404 %s" % ae, "method": "GET", "path": "/catalogs/test-catalog/api/v1/nothing", "header": {"Accept-Encoding": ae}},
        {"name": "405 %s" % ae, "method": "POST", "path": "/catalogs/test-catalog/api/v1/all", "header": {"Accept-Encoding": ae}},
        post("GraphQL large answer, %s" % ae, "{ olmbundles { name image properties { type value } relatedImages { name image } } }", header={"Content-Type": "application/json", "Accept-Encoding": ae}),
        post("GraphQL small answer, %s" % ae, "{ summary { totalSchemas } }", header={"Content-Type": "application/json", "Accept-Encoding": ae}),
    ]

json.dump(sample + more + edge + enc, open("fixture.requests.json", "w"), indent=1)
json.dump(sample + more[:3] + [post("olm.bundle names and images", "{ olmbundles { name package image } }"),
                               post("olm.channel entries", "{ olmchannels { name package entries { name replaces skipRange } } }"),
                               post("olm.package", "{ olmpackages { name defaultChannel description } }"),
                               more[3],
                               post("second page of bundles", "{ olmbundles(limit: 100, offset: 100) { name } }"),
                               post("every bundle's properties, gzip", "{ olmbundles { name properties { type value } } }", header={"Content-Type": "application/json", "Accept-Encoding": "gzip"}),
                               post("every bundle's properties, zstd", "{ olmbundles { name properties { type value } } }", header={"Content-Type": "application/json", "Accept-Encoding": "zstd"}),
                               {"name": "all, zstd", "method": "GET", "path": "/catalogs/test-catalog/api/v1/all", "header": {"Accept-Encoding": "zstd"}}],
          open("reference.requests.json", "w"), indent=1)
# big.requests.json: over a catalog with a blob larger than catalogd's
# GraphQL reads (16 MiB), written by bigBlobCatalog in ../../catalogd_test.go.
json.dump([post("a page with the big blob", "{ bigblobs { name } }"),
           post("the page after it", "{ bigblobs(offset: 1) { name } }"),
           post("summary", "{ summary { schemas { name totalObjects totalFields } } }"),
           {"name": "all, zstd", "method": "GET", "path": "/catalogs/test-catalog/api/v1/all", "header": {"Accept-Encoding": "zstd"}}],
          open("big.requests.json", "w"), indent=1)
# hostile.requests.json: documents graphql-go's parser and validation
# recurse on without bound, over fixture/ (the harness runs with -isolate:
# several kill catalogd's process). "opm" is the error opm answers instead.
NEST = "query nests more than 256 levels of braces, brackets or parentheses: flatten it (at byte %d)"
def nest_error(q):
    depth = 0
    for i, c in enumerate(q):
        depth += (c in "{[(") - (c in "}])")
        if depth > 256:
            return NEST % i
def chain(n, used):
    frags = " ".join("fragment F%d on Query { ...F%d }" % (i, i + 1) for i in range(n)) + " fragment F%d on Query { summary { totalSchemas } }" % n
    return ("{ ...F0 } " if used else "{ summary { totalSchemas } } ") + frags
def doubling(n):
    frags = ["fragment A0 on Query { ...A1 ...B1 }"]
    for i in range(1, n):
        frags += ["fragment A%d on Query { ...A%d ...B%d }" % (i, i + 1, i + 1), "fragment B%d on Query { ...A%d ...B%d }" % (i, i + 1, i + 1)]
    frags += ["fragment A%d on Query { summary { totalSchemas } }" % n, "fragment B%d on Query { summary { totalSchemas } }" % n]
    return "{ summary { totalSchemas } } " + " ".join(frags)
deep_sel = "{ " + "summary { " * 7000 + "totalSchemas" + " }" * 7001
deep_list = "{ olmbundles(limit: " + "[" * 30000 + "1" + "]" * 30000 + ") { name } }"
deep_obj = "{ olmbundles(limit: " + "{a: " * 19000 + "1" + "}" * 19000 + ") { name } }"
hostile = [
    post("fragment spreading itself (50 bytes)", "fragment A on Query { ...A } { ...A }", opm='Cannot spread fragment "A" within itself.'),
    post("fragment spreading itself, not used", "{ summary { totalSchemas } } fragment A on Query { summary { totalSchemas } ...A }", opm='Cannot spread fragment "A" within itself.'),
    post("two fragments spreading each other, not used", "{ summary { totalSchemas } } fragment A on Query { ...B } fragment B on Query { ...A }", opm='Cannot spread fragment "A" within itself via B.'),
    post("a cycle of three under a field", "{ olmbundles { ...F } } fragment F on OlmBundle { name ...G } fragment G on OlmBundle { package ...H } fragment H on OlmBundle { image ...F }", opm='Cannot spread fragment "F" within itself via G, H.'),
    post("selections nested 7,000 deep", deep_sel, opm=nest_error(deep_sel)),
    post("a list nested 30,000 deep in an argument", deep_list, opm=nest_error(deep_list)),
    post("an object nested 19,000 deep in an argument", deep_obj, opm=nest_error(deep_obj)),
    post("selections nested 100 deep (within opm's nesting bound)", "{ " + "summary { " * 99 + "totalSchemas" + " }" * 100),
    post("a chain of 2,000 fragments, not used", chain(2000, False), opm='fragment "F0" leads through more than 32 fragments: spread fewer fragments within fragments'),
    post("a chain of 2,000 fragments, used", chain(2000, True)),
    post("a chain of 20 fragments, not used", chain(20, False)),
    post("fragments each spreading two of the next, 24 deep, not used", doubling(24), opm='fragment "A0" comes to more than 5000 selections with the fragments it spreads written out: spread it less'),
]
json.dump(hostile, open("hostile.requests.json", "w"), indent=1)
print(len(sample), "sample queries;", len(sample + more + edge + enc), "fixture requests")
