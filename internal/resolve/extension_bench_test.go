package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// syntheticExtFBC is a catalog of 50 packages of 100 bundles each (5,000
// bundles): one replaces chain per package in two channels, every tenth
// bundle with a skipRange, a deprecation per package.
func syntheticExtFBC() []byte {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	for p := 0; p < 50; p++ {
		pkg := fmt.Sprintf("pkg-%02d", p)
		_ = enc.Encode(map[string]any{"schema": "olm.package", "name": pkg, "defaultChannel": "stable"})
		var stable, fast []map[string]any
		for i := 0; i < 100; i++ {
			name := fmt.Sprintf("%s.v1.%d.0", pkg, i)
			e := map[string]any{"name": name}
			if i > 0 {
				e["replaces"] = fmt.Sprintf("%s.v1.%d.0", pkg, i-1)
			}
			if i%10 == 0 && i > 0 {
				e["skipRange"] = fmt.Sprintf(">=1.%d.0 <1.%d.0", i-10, i)
			}
			stable = append(stable, e)
			if i%2 == 0 {
				fast = append(fast, map[string]any{"name": name, "skipRange": fmt.Sprintf("<1.%d.0", i)})
			}
			_ = enc.Encode(map[string]any{"schema": "olm.bundle", "name": name, "package": pkg, "image": "example.invalid/" + name,
				"properties": []any{map[string]any{"type": "olm.package", "value": map[string]any{"packageName": pkg, "version": fmt.Sprintf("1.%d.0", i)}}}})
		}
		_ = enc.Encode(map[string]any{"schema": "olm.channel", "name": "stable", "package": pkg, "entries": stable})
		_ = enc.Encode(map[string]any{"schema": "olm.channel", "name": "fast", "package": pkg, "entries": fast})
		_ = enc.Encode(map[string]any{"schema": "olm.deprecations", "package": pkg, "entries": []any{
			map[string]any{"reference": map[string]any{"schema": "olm.bundle", "name": fmt.Sprintf("%s.v1.99.0", pkg)}, "message": "bad"}}})
	}
	return []byte(b.String())
}

// BenchmarkResolveExtensionLoad5000 is the baseline: loading the catalog.
func BenchmarkResolveExtensionLoad5000(b *testing.B) {
	data := syntheticExtFBC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c := &fbc.Catalog{}
		if err := c.LoadFile("catalog.json", data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkResolveExtension5000 answers 100 questions (fresh, ranged and
// upgrades, in two catalogs of 5,000 bundles) per iteration.
func BenchmarkResolveExtension5000(b *testing.B) {
	data := syntheticExtFBC()
	c := &fbc.Catalog{}
	if err := c.LoadFile("catalog.json", data); err != nil {
		b.Fatal(err)
	}
	cats := []Catalog{{Name: "a", Priority: 1, Catalog: c}, {Name: "b", Catalog: c}}
	var exts []ClusterExtension
	for q := 0; q < 100; q++ {
		pkg := fmt.Sprintf("pkg-%02d", q%50)
		e := ClusterExtension{PackageName: pkg}
		switch q % 4 {
		case 1:
			e.Version = ">=1.20.0 <1.60.0 || 1.9x.x"
		case 2:
			e.Installed = &InstalledBundle{Name: fmt.Sprintf("%s.v1.%d.0", pkg, q), Version: fmt.Sprintf("1.%d.0", q)}
		case 3:
			e.Installed = &InstalledBundle{Name: fmt.Sprintf("%s.v1.%d.0", pkg, q/2), Version: fmt.Sprintf("1.%d.0", q/2)}
			e.Channels = []string{"fast"}
		}
		exts = append(exts, e)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, e := range exts {
			if _, err := ResolveExtension(context.Background(), cats, e); err != nil {
				b.Fatal(err)
			}
		}
	}
}
