package catalogtest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// HostileChannel is issue 40's n² channel as file-based catalog JSON:
// package h, channel stable of bundles h.v1.0.0 .. h.vn.0.0, entry i
// replacing i-1 with skipRange "<i.0.0", so it covers every bundle before
// it. Release drop is left out (entry and bundle) when drop > 0, leaving
// its successor's replaces dangling.
func HostileChannel(n, drop int) []byte {
	var sb strings.Builder
	sb.WriteString(`{"schema":"olm.package","name":"h","defaultChannel":"stable"}` + "\n")
	var entries []string
	for i := 1; i <= n; i++ {
		if i == drop {
			continue
		}
		e := fmt.Sprintf(`{"name":"h.v%d.0.0"`, i)
		if i > 1 {
			e += fmt.Sprintf(`,"replaces":"h.v%d.0.0","skipRange":"<%d.0.0"`, i-1, i)
		}
		entries = append(entries, e+"}")
		fmt.Fprintf(&sb, `{"schema":"olm.bundle","package":"h","name":"h.v%d.0.0","image":"example.com/h:%d","properties":[{"type":"olm.package","value":{"packageName":"h","version":"%d.0.0"}}]}`+"\n", i, i, i)
	}
	sb.WriteString(`{"schema":"olm.channel","package":"h","name":"stable","entries":[` + strings.Join(entries, ",") + "]}\n")
	return []byte(sb.String())
}

// HostileCatalog loads HostileChannel(n, drop) as catalog.json.
func HostileCatalog(tb testing.TB, n, drop int) *fbc.Catalog {
	tb.Helper()
	c := &fbc.Catalog{}
	if err := c.LoadFile("catalog.json", HostileChannel(n, drop)); err != nil {
		tb.Fatal(err)
	}
	return c
}
