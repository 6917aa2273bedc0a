package graph

import (
	"bytes"
	"regexp"
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
		if a, b := strings.Index(out, `["a"]`), strings.Index(out, `["b"]`); a < 0 || b < a {
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

// hostileNames is a package, channels and bundles whose names try to end
// their label or comment and add a statement (a click handler, a style).
const hostileNames = `{"schema":"olm.package","name":"p\"]\nclick p1 call alert(2)\n%%","defaultChannel":"stable\"]\nclick a call alert(1)\n%%"}
{"schema":"olm.channel","package":"p\"]\nclick p1 call alert(2)\n%%","name":"stable\"]\nclick a call alert(1)\n%%","entries":[{"name":"b\"]\nclick n1 href \"javascript:alert(3)\"\n%%","replaces":"old#quot;]\nclick x"},{"name":"c<b>` + "`" + `","replaces":"b\"]\nclick n1 href \"javascript:alert(3)\"\n%%","skipRange":"<9.0.0"}]}
{"schema":"olm.bundle","package":"p\"]\nclick p1 call alert(2)\n%%","name":"b\"]\nclick n1 href \"javascript:alert(3)\"\n%%","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","package":"p\"]\nclick p1 call alert(2)\n%%","name":"c<b>` + "`" + `","properties":[{"type":"olm.package","value":{"packageName":"p","version":"2.0.0"}}]}
{"schema":"olm.deprecations","package":"p\"]\nclick p1 call alert(2)\n%%","entries":[{"reference":{"schema":"olm.package"},"message":"x"},{"reference":{"schema":"olm.channel","name":"stable\"]\nclick a call alert(1)\n%%"},"message":"y"}]}
`

// TestMermaidNamesCannotAddStatements: names reach the drawing only inside
// escaped labels; every line is one of the statements the writer makes,
// each id generated, and no click, href or stray quote gets through.
func TestMermaidNamesCannotAddStatements(t *testing.T) {
	t.Parallel()
	c := &fbc.Catalog{}
	if err := c.LoadFile("catalog.json", []byte(hostileNames)); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := WriteMermaid(&buf, c, MermaidOptions{V0Semantics: true}); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	label := `"[^"\n<>` + "`" + `]*"`
	allowed := regexp.MustCompile(`^(graph LR|  classDef \w+ [\w:#,-]+| +%% (package|channel) ` + label + `|  +subgraph [pc]\d+\[` + label + `\]|  +end|` +
		`      n\d+\[` + label + `\]|      n\d+(\[` + label + `\]|\{\{` + label + `\}\})-- (skip|replace|"skipRange\([^"\n]*\)") --> n\d+\[` + label + `\]|` +
		`style [pc]\d+ fill:#\w+|class [n\d,]+ \w+|linkStyle [\d,]+ [\w:#,;.-]+)$`)
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !allowed.MatchString(line) {
			t.Errorf("line not one of the writer's statements: %q", line)
		}
	}
	if strings.Contains(out, "click") && !strings.Contains(out, "#quot;]") {
		t.Errorf("names not escaped:\n%s", out)
	}
	for _, want := range []string{`#quot;]`, `#lt;b#gt;#96;`, `#35;quot;`, `style p1 fill`, `style c2 fill`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// TestDotNamesCannotAddStatements: in the digraph, ids are generated and
// names only in quoted labels whose quotes, backslashes and line breaks
// are escaped: every line is one of the writer's statements.
func TestDotNamesCannotAddStatements(t *testing.T) {
	t.Parallel()
	c := &fbc.Catalog{}
	if err := c.LoadFile("catalog.json", []byte(hostileNames+`{"schema":"olm.channel","package":"p\"]\nclick p1 call alert(2)\n%%","name":"x\\\"];\n}\ndigraph y {","entries":[{"name":"c<b>`+"`"+`","replaces":"q\\"}]}`+"\n")); err != nil {
		t.Fatal(err)
	}
	for _, compact := range []bool{false, true} {
		doc, _, err := NewDocument(c, GraphOptions{CompactRanges: compact})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := WriteDot(&buf, doc); err != nil {
			t.Fatal(err)
		}
		label := `"([^"\\\n]|\\.)*"`
		allowed := regexp.MustCompile(`^(digraph "upgrade graph" \{|  rankdir=LR;|  node \[shape=box, fontname="Helvetica"\];|  edge \[fontname="Helvetica", fontsize=10\];|` +
			`  subgraph cluster\d+ \{|    label=` + label + `;|    n\d+ \[(label=` + label + `|shape=note|style=\w+|peripheries=2|fillcolor="#\w+"|color="#\w+"|, )+\];|  \}|` +
			`  n\d+ -> n\d+( \[(style=\w+|label=` + label + `|, )+\])?;|\})$`)
		for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			if !allowed.MatchString(line) {
				t.Errorf("compact=%v: line not one of the writer's statements: %q", compact, line)
			}
		}
		if !strings.Contains(buf.String(), `stable\"]\nclick a call alert(1)\n%%`) {
			t.Errorf("compact=%v: the channel's name is not in its escaped label:\n%s", compact, buf.String())
		}
	}
}
