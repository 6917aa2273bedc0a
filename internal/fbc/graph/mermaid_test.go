package graph

import (
	"bytes"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// twoStables has packages b and a (in that catalog order) with a channel
// named stable each; b's replace edge into a skipped bundle is a skipped
// link whose number depends on which stable is counted first.
const twoStables = `{"schema":"olm.package","name":"b","defaultChannel":"stable"}
{"schema":"olm.channel","package":"b","name":"stable","entries":[{"name":"b.v3","skips":["b.v2"]},{"name":"b.v2","replaces":"b.v1"},{"name":"b.v1"}]}
{"schema":"olm.bundle","package":"b","name":"b.v3","image":"b:3","properties":[{"type":"olm.package","value":{"packageName":"b","version":"3.0.0"}}]}
{"schema":"olm.bundle","package":"b","name":"b.v2","image":"b:2","properties":[{"type":"olm.package","value":{"packageName":"b","version":"2.0.0"}}]}
{"schema":"olm.bundle","package":"b","name":"b.v1","image":"b:1","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}
{"schema":"olm.package","name":"a","defaultChannel":"stable"}
{"schema":"olm.channel","package":"a","name":"stable","entries":[{"name":"a.v2","replaces":"a.v1"},{"name":"a.v1"}]}
{"schema":"olm.bundle","package":"a","name":"a.v2","image":"a:2","properties":[{"type":"olm.package","value":{"packageName":"a","version":"2.0.0"}}]}
{"schema":"olm.bundle","package":"a","name":"a.v1","image":"a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}
`

// TestMermaidChannelOrder pins the one ordering the two commands differ
// in: render-graph numbers same-named channels by package, render-template
// (CatalogOrder) as its catalog lists them. The text is by package either way.
func TestMermaidChannelOrder(t *testing.T) {
	t.Parallel()
	c := &fbc.Catalog{}
	if err := c.LoadFile("catalog.json", []byte(twoStables)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		catalogOrder bool
		link         string
	}{
		{false, "linkStyle 2 "},
		{true, "linkStyle 1 "},
	} {
		var buf bytes.Buffer
		if _, err := WriteMermaid(&buf, c, MermaidOptions{V0Semantics: true, CatalogOrder: tc.catalogOrder}); err != nil {
			t.Fatal(err)
		}
		out := buf.String()
		if !strings.Contains(out, "\n"+tc.link) {
			t.Errorf("catalogOrder=%v: want %q in\n%s", tc.catalogOrder, tc.link, out)
		}
		if a, b := strings.Index(out, `subgraph "a"`), strings.Index(out, `subgraph "b"`); a < 0 || b < a {
			t.Errorf("catalogOrder=%v: packages not in name order:\n%s", tc.catalogOrder, out)
		}
	}
}

// TestMermaidBadDeprecations: a deprecations blob that does not decode is
// an error naming its file and line for both commands (upstream refuses
// such a catalog when loading it), not a drawing without it.
func TestMermaidBadDeprecations(t *testing.T) {
	t.Parallel()
	c := &fbc.Catalog{}
	data := twoStables + `{"schema":"olm.deprecations","package":"a","entries":"not a list"}` + "\n"
	if err := c.LoadFile("catalog.json", []byte(data)); err != nil {
		t.Fatal(err)
	}
	for _, o := range []MermaidOptions{{}, {V0Semantics: true, CatalogOrder: true}} {
		var buf bytes.Buffer
		_, err := WriteMermaid(&buf, c, o)
		if err == nil || !strings.Contains(err.Error(), "catalog.json:10") || !strings.Contains(err.Error(), "olm.deprecations") {
			t.Errorf("%+v: err %v", o, err)
		}
		if buf.Len() != 0 {
			t.Errorf("%+v: wrote %q on error", o, buf.String())
		}
	}
}
