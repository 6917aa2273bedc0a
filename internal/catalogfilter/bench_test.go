package catalogfilter

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/validate"
)

// synthCatalog is a catalog of packages of ten bundles each (n/10 of
// them), shaped as real ones are: a stable channel of versions 1.0.0 to
// 1.8.0 as a replaces chain, every fifth entry with a skipRange over the
// ones below it, and a z-stream branch (1.4.1 replaces 1.3.0; 1.5.0
// replaces 1.4.0 and skips 1.4.1); a fast channel from 1.5.0 up; a
// deprecation per package. Each bundle carries an olm.package and an
// olm.gvk property and a kilobyte-sized olm.bundle.object, as in a
// rendered catalog (the blob's bytes are shared, not copied, by the
// filter).
func synthCatalog(n int) *fbc.Catalog {
	c := &fbc.Catalog{}
	obj := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"payload"},"data":{"k":"` + strings.Repeat("A", 1024) + `"}}`
	object := json.RawMessage(`{"data":"` + base64.StdEncoding.EncodeToString([]byte(obj)) + `"}`)
	for p := 0; len(c.Bundles) < n; p++ {
		pkg := fmt.Sprintf("pkg-%05d", p)
		c.Packages = append(c.Packages, fbc.Package{Schema: fbc.SchemaPackage, Name: pkg, DefaultChannel: "stable"})
		stable := fbc.Channel{Schema: fbc.SchemaChannel, Name: "stable", Package: pkg}
		name := func(minor, patch int) string { return fmt.Sprintf("%s.v1.%d.%d", pkg, minor, patch) }
		add := func(minor, patch int, e fbc.ChannelEntry) {
			e.Name = name(minor, patch)
			stable.Entries = append(stable.Entries, e)
			c.Bundles = append(c.Bundles, fbc.Bundle{
				Schema: fbc.SchemaBundle, Name: e.Name, Package: pkg,
				Image: fmt.Sprintf("registry.example.com/%s:v1.%d.%d", pkg, minor, patch),
				Properties: []fbc.Property{
					{Type: fbc.PropertyPackage, Value: json.RawMessage(fmt.Sprintf(`{"packageName":%q,"version":"1.%d.%d"}`, pkg, minor, patch))},
					{Type: fbc.PropertyGVK, Value: json.RawMessage(`{"group":"example.com","kind":"Thing","version":"v1"}`)},
					{Type: fbc.PropertyBundleObject, Value: object},
				},
			})
		}
		for i := 0; i <= 8; i++ {
			var e fbc.ChannelEntry
			if i > 0 {
				e.Replaces = name(i-1, 0)
			}
			if i%5 == 0 && i > 0 {
				e.SkipRange = fmt.Sprintf(">=1.0.0 <1.%d.0", i)
			}
			if i == 5 {
				e.Skips = []string{name(4, 1)}
			}
			add(i, 0, e)
			if i == 4 {
				add(4, 1, fbc.ChannelEntry{Replaces: name(3, 0)})
			}
		}
		fast := stable
		fast.Name = "fast"
		fast.Entries = append([]fbc.ChannelEntry(nil), stable.Entries[6:]...)
		fast.Entries[0].Replaces, fast.Entries[0].Skips, fast.Entries[0].SkipRange = "", nil, ""
		c.Channels = append(c.Channels, stable, fast)
		c.Others = append(c.Others, fbc.Meta{Schema: fbc.SchemaDeprecations, Package: pkg,
			Blob: json.RawMessage(fmt.Sprintf(`{"schema":"olm.deprecations","package":%q,"entries":[{"reference":{"schema":"olm.bundle","name":%q},"message":"old"},{"reference":{"schema":"olm.channel","name":"fast"},"message":"use stable"}]}`, pkg, name(0, 0)))})
	}
	return c
}

// halfConfigs are configurations like bench/filter-scale.sh's for c,
// keeping every other package: a FilterConfiguration keeping its stable
// channel from 1.4.0 up, and an ImageSetConfiguration (full: true) keeping
// 1.3.0 to 1.4.x in every channel, where 1.4.0 and 1.4.1 would both be
// heads and the filter keeps 1.5.0 to join them.
func halfConfigs(c *fbc.Catalog) map[string]*Config {
	filter := &Config{Kind: "FilterConfiguration"}
	imageSet := &Config{Kind: "ImageSetConfiguration"}
	for i, p := range c.Packages {
		if i%2 == 1 {
			continue
		}
		filter.Packages = append(filter.Packages, Package{Name: p.Name, Channels: []Channel{{Name: "stable", Range: ">=1.4.0"}}})
		imageSet.Packages = append(imageSet.Packages, Package{Name: p.Name, Range: ">=1.3.0 <1.5.0"})
	}
	return map[string]*Config{"filter": filter, "imageset": imageSet}
}

func mustValidB(b *testing.B, what string, c *fbc.Catalog) {
	b.Helper()
	for _, f := range fbc.Validate(c) {
		if f.Severity == validate.Error {
			b.Fatalf("%s does not validate: %s", what, f.Message)
		}
	}
}

// BenchmarkFilter (issue 29): Filter alone (no loading, validating or
// writing) over synthetic catalogs of 5,000 and 22,000 bundles, keeping
// about half the packages from their middle version up. Reports the time
// per bundle of the catalog.
func BenchmarkFilter(b *testing.B) {
	for _, n := range []int{5000, 22000} {
		c := synthCatalog(n)
		mustValidB(b, "the source", c)
		for _, kind := range []string{"filter", "imageset"} {
			cfg := halfConfigs(c)[kind]
			b.Run(fmt.Sprintf("%d/%s", n, kind), func(b *testing.B) {
				out, rep, err := Filter(c, cfg)
				if err != nil {
					b.Fatal(err)
				}
				if len(out.Bundles) == 0 || len(out.Bundles) >= n {
					b.Fatalf("kept %d bundles of %d", len(out.Bundles), n)
				}
				if kind == "imageset" && len(rep.Extra) == 0 {
					b.Fatal("no bundle kept outside the range: the benchmark no longer joins heads")
				}
				mustValidB(b, "the result", out)
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, _, err := Filter(c, cfg); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/bundle")
			})
		}
	}
}
