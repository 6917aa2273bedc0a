package graph

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// chainCatalog is one package with a channel of n bundles, each replacing
// the one before and every tenth with a skipRange over its minor.
func chainCatalog(b *testing.B, n int) *Package {
	b.Helper()
	var sb strings.Builder
	sb.WriteString(`{"schema":"olm.package","name":"big","defaultChannel":"s"}` + "\n")
	var entries []string
	for i := range n {
		v := fmt.Sprintf("1.%d.%d", i/10, i%10)
		e := fmt.Sprintf(`{"name":"big.v%s"`, v)
		if i > 0 {
			e += fmt.Sprintf(`,"replaces":"big.v1.%d.%d"`, (i-1)/10, (i-1)%10)
		}
		if i%10 == 9 {
			e += fmt.Sprintf(`,"skipRange":">=1.%d.0 <%s"`, i/10, v)
		}
		entries = append(entries, e+"}")
		fmt.Fprintf(&sb, `{"schema":"olm.bundle","name":"big.v%s","package":"big","properties":[{"type":"olm.package","value":{"packageName":"big","version":"%s"}}]}`+"\n", v, v)
	}
	sb.WriteString(`{"schema":"olm.channel","package":"big","name":"s","entries":[` + strings.Join(entries, ",") + "]}\n")
	c := &fbc.Catalog{}
	if err := c.LoadFile("c.json", []byte(sb.String())); err != nil {
		b.Fatal(err)
	}
	p, err := NewPackage(c, "big")
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkPath: the OLM v0 path from the oldest of 1,000 bundles, and the
// bundles to keep for all of them.
func BenchmarkPath(b *testing.B) {
	p := chainCatalog(b, 1000)
	b.Run("path", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.Path(PathQuery{From: "big.v1.0.0"}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("keep-all", func(b *testing.B) {
		for b.Loop() {
			if _, err := p.KeepForRange(PathQuery{}, ">=1.0.0"); err != nil {
				b.Fatal(err)
			}
		}
	})
}
