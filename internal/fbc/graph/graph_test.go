package graph

import (
	"bytes"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph/mermaidform"
)

// sameDrawing fails unless got draws what want does (mermaidform).
func sameDrawing(t *testing.T, got, want string) {
	t.Helper()
	g, err := mermaidform.Form(got)
	if err != nil {
		t.Fatalf("%v in\n%s", err, got)
	}
	w, err := mermaidform.Form(want)
	if err != nil {
		t.Fatalf("%v in\n%s", err, want)
	}
	if g != w {
		t.Errorf("drawing differs:\n%s\nwant\n%s\n(written:\n%s)", g, w, got)
	}
}

const deprecatedCatalog = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[
 {"name":"p.v1.0.0"},
 {"name":"p.v1.0.1","replaces":"p.v1.0.0"},
 {"name":"p.v1.1.0","replaces":"p.v1.0.0","skips":["p.v1.0.1"]}]}
{"schema":"olm.channel","name":"old","package":"p","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"r/p:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"p.v1.0.1","package":"p","image":"r/p:1.0.1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.1"}}]}
{"schema":"olm.bundle","name":"p.v1.1.0","package":"p","image":"r/p:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.1.0"}}]}
{"schema":"olm.deprecations","package":"p","entries":[
 {"reference":{"schema":"olm.package"},"message":"p is gone"},
 {"reference":{"schema":"olm.channel","name":"old"},"message":"use stable"},
 {"reference":{"schema":"olm.bundle","name":"p.v1.0.1"},"message":"broken"},
 {"reference":{"schema":"olm.bundle","name":"p.v1.1.0"},"message":"also broken"}]}
`

func TestMermaidDeprecations(t *testing.T) {
	c := &fbc.Catalog{}
	if err := c.LoadFile("catalog.json", []byte(deprecatedCatalog)); err != nil {
		t.Fatal(err)
	}
	head := `graph LR
  classDef deprecated fill:#E8960F
  classDef skipped stroke:#FF0000,stroke-width:4px
  classDef deprecatedskipped fill:#E8960F,stroke:#FF0000,stroke-width:4px
  %% package "p"
  subgraph "p"
    %% channel "old"
    subgraph p-old["old"]
      p-old-p.v1.0.0["p.v1.0.0"]
    end
    %% channel "stable"
    subgraph p-stable["stable"]
      p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.1["p.v1.0.1"]-- skip --> p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.0["p.v1.0.0"]-- replace --> p-stable-p.v1.1.0["p.v1.1.0"]
      p-stable-p.v1.0.1["p.v1.0.1"]
      p-stable-p.v1.0.0["p.v1.0.0"]-- replace --> p-stable-p.v1.0.1["p.v1.0.1"]
      p-stable-p.v1.0.0["p.v1.0.0"]
    end
  end
style p fill:#989695
style p-old fill:#DCD0FF
`
	for _, tc := range []struct {
		v0   bool
		tail string
	}{
		// Without v0 semantics only deprecations are drawn.
		{false, "class p-stable-p.v1.0.1,p-stable-p.v1.1.0 deprecated\n"},
		// With them, the skipped deprecated bundle gets the combined class
		// and the replace edge into it is a skipped link.
		{true, "class p-stable-p.v1.1.0 deprecated\nclass p-stable-p.v1.0.1 deprecatedskipped\n" +
			"linkStyle 2 stroke:#FF0000,stroke-width:3px,stroke-dasharray:5;\n"},
	} {
		var buf bytes.Buffer
		if _, err := WriteMermaid(&buf, c, MermaidOptions{V0Semantics: tc.v0}); err != nil {
			t.Fatal(err)
		}
		// Upstream's drawing, read for what it draws (opm's ids are
		// generated).
		sameDrawing(t, buf.String(), head+tc.tail)
	}

	var buf bytes.Buffer
	if _, err := WriteMermaid(&buf, c, MermaidOptions{MinimumEdge: "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown minimum edge: %v", err)
	}
	buf.Reset()
	if _, err := WriteMermaid(&buf, c, MermaidOptions{Package: "other"}); err != nil || strings.Contains(buf.String(), "subgraph") {
		t.Errorf("package filter: %v\n%s", err, buf.String())
	}
}

func TestHeadAndReachable(t *testing.T) {
	c := &fbc.Catalog{}
	if err := c.LoadFile("catalog.json", []byte(deprecatedCatalog)); err != nil {
		t.Fatal(err)
	}
	versions, err := Versions(c)
	if err != nil {
		t.Fatal(err)
	}
	stable := &c.Channels[0]
	h, err := Head(stable)
	if err != nil || h != "p.v1.1.0" {
		t.Fatalf("head %q, %v", h, err)
	}
	if r := Reachable(stable, h, versions); len(r) != 3 {
		t.Errorf("reachable %v", r)
	}
	// 1.0.0 upgrades through 1.0.1 (which 1.1.0 skips) even without 1.1.0's
	// replaces edge; without 1.0.1's too, nothing leads out of 1.0.0.
	cut := *stable
	cut.Entries = append([]fbc.ChannelEntry(nil), stable.Entries...)
	cut.Entries[2].Replaces = ""
	if r := Reachable(&cut, h, versions); !r["p.v1.0.0"] {
		t.Errorf("1.0.0 unreachable through 1.0.1: %v", r)
	}
	cut.Entries[1].Replaces = ""
	if r := Reachable(&cut, h, versions); r["p.v1.0.0"] || !r["p.v1.0.1"] {
		t.Errorf("reachable after cutting the replaces edge: %v", r)
	}
	two := fbc.Channel{Entries: []fbc.ChannelEntry{{Name: "a"}, {Name: "b"}}}
	if _, err := Head(&two); err == nil || !strings.Contains(err.Error(), "a, b") {
		t.Errorf("two heads: %v", err)
	}
	rows, err := ListChannels(c, "")
	if err != nil || len(rows) != 2 || rows[0].Channel != "old" || rows[1].Head != "p.v1.1.0" {
		t.Errorf("channels %+v %v", rows, err)
	}
	if _, err := ListBundles(c, "nope"); err == nil || !strings.Contains(err.Error(), `"nope" not found`) {
		t.Errorf("unknown package: %v", err)
	}
	deps, err := Deprecations(c)
	if err != nil || len(deps["p"]) != 4 || deps["p"][1] != (Deprecation{Schema: "olm.channel", Name: "old", Message: "use stable"}) {
		t.Errorf("deprecations %+v %v", deps, err)
	}
}
