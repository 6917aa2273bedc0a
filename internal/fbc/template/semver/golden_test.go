package semver

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph/mermaidform"
)

// TestRenderMatchesUpstream renders the templates of testdata/ from the
// bundles of testdata/bundles.json and compares the JSON, YAML and mermaid
// output byte for byte with testdata/<name>.upstream.<format>: what upstream
// opm (operator-registry HEAD 4f9d6f22, its semver template and catalog
// writers) printed for the same template and bundles.
func TestRenderMatchesUpstream(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/bundles.json")
	if err != nil {
		t.Fatal(err)
	}
	bundles := &fbc.Catalog{}
	if err := bundles.LoadFile("bundles.json", data); err != nil {
		t.Fatal(err)
	}
	reg := registry{}
	for i := range bundles.Bundles {
		reg[bundles.Bundles[i].Image] = &bundles.Bundles[i]
	}
	templates, _ := filepath.Glob("testdata/*.yaml")
	compared := 0
	for _, path := range templates {
		name := strings.TrimSuffix(filepath.Base(path), ".yaml")
		if strings.Contains(name, ".upstream") {
			continue
		}
		t.Run(name, func(t *testing.T) {
			tmpl, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			c, err := Render(context.Background(), tmpl, Options{RenderBundle: reg.render(nil), Source: path})
			if err != nil {
				t.Fatal(err)
			}
			for _, format := range []string{"json", "yaml", "mermaid"} {
				want, err := os.ReadFile("testdata/" + name + ".upstream." + format)
				if err != nil {
					t.Fatal(err)
				}
				var got bytes.Buffer
				if format == "mermaid" {
					err = Mermaid(&got, c, nil)
				} else {
					err = fbc.Write(&got, c, fbc.Format(format))
				}
				if err != nil {
					t.Fatal(err)
				}
				if format == "mermaid" {
					// opm generates node ids and draws a skipRange as one
					// node: compare what is drawn.
					g, w := drawing(t, got.String()), drawing(t, string(want))
					if g != w {
						t.Errorf("mermaid draws other than upstream's:\n%s", lineDiff(g, w))
					}
				} else if !bytes.Equal(got.Bytes(), want) {
					t.Errorf("%s differs from upstream's:\n%s", format, lineDiff(got.String(), string(want)))
				}
			}
		})
		compared++
	}
	if compared < 3 {
		t.Fatalf("compared %d templates, want at least 3", compared)
	}
}

// lineDiff shows the first differing line of two texts.
func lineDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return "line " + itoa(i+1) + ":\n got: " + gl + "\nwant: " + wl
		}
	}
	return "(equal lines; different bytes)"
}

// drawing is what a mermaid text draws (mermaidform), ids aside.
func drawing(t *testing.T, text string) string {
	t.Helper()
	f, err := mermaidform.Form(text)
	if err != nil {
		t.Fatalf("%v in\n%s", err, text)
	}
	return f
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestMermaidMatchesUpstream draws testdata/graph (two packages,
// deprecations of a package, a channel and bundles, skips, a skipRange and
// one that does not parse) and compares with upstream's drawing of it.
func TestMermaidMatchesUpstream(t *testing.T) {
	t.Parallel()
	c, err := fbc.LoadDir("testdata/graph")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/graph.upstream.mermaid")
	if err != nil {
		t.Fatal(err)
	}
	var got, warn bytes.Buffer
	if err := Mermaid(&got, c, &warn); err != nil {
		t.Fatal(err)
	}
	if g, w := drawing(t, got.String()), drawing(t, string(want)); g != w {
		t.Errorf("draws other than upstream's:\n%s", lineDiff(g, w))
	}
	if !strings.Contains(warn.String(), `invalid skipRange "not a range" of zeta/zeta.v1.2.0`) {
		t.Errorf("warnings: %q", warn.String())
	}
}
