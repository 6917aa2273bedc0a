package fbc

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/validate"
)

// TestValidateUpstreamModel: each catalog under testdata/upstream-model
// makes one mistake that upstream opm's catalog model refuses (or none).
// Our findings at error level are exactly the rules expected, and our
// verdict equals upstream's, recorded in upstream-verdicts.json (what
// operator-registry HEAD 4f9d6f22's ConvertToModel said of each catalog),
// except where noted.
func TestValidateUpstreamModel(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"ok":                          nil,
		"release-name-ok":             nil,
		"deprecations-two":            {"catalog-deprecation-unique"},
		"deprecation-no-message":      {"catalog-deprecation-message"},
		"deprecation-missing-bundle":  {"catalog-deprecation-reference"},
		"deprecation-missing-channel": {"catalog-deprecation-reference"},
		"deprecation-unknown-schema":  {"catalog-deprecation-reference"},
		"deprecation-package-named":   {"catalog-deprecation-reference"},
		"deprecation-unknown-package": {"catalog-deprecation-unique"},
		"deprecation-repeated":        {"catalog-deprecation-unique"},
		"version-duplicate":           {"catalog-version-unique"},
		"package-name-rfc1123":        {"catalog-package-name"},
		"image-pullspec":              {"catalog-bundle-image"},
		"related-image-pullspec":      {"catalog-bundle-image"},
		"image-missing":               {"catalog-bundle-image"},
		"release-name":                {"catalog-release"},
		"release-format":              {"catalog-release"},
		"release-build-metadata":      {"catalog-release"},
		"skiprange-bad":               {"catalog-property"},
		"two-heads":                   {"catalog-channel-head"},
		"stranded":                    {"catalog-channel-stranded"},
		"skip-empty":                  {"catalog-channel-edge"},
		// Upstream's catalog model does not follow substitutesFor (its
		// sqlite loader refused cycles); opm refuses them in catalogs too.
		"substitutes-cycle": {"catalog-substitutes-cycle"},
	}
	upstreamMisses := map[string]bool{"substitutes-cycle": true}

	root := filepath.Join("testdata", "upstream-model")
	data, err := os.ReadFile(filepath.Join(root, "upstream-verdicts.json"))
	if err != nil {
		t.Fatal(err)
	}
	var verdicts map[string]struct {
		Passed bool   `json:"passed"`
		Error  string `json:"error"`
	}
	if err := json.Unmarshal(data, &verdicts); err != nil {
		t.Fatal(err)
	}
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "catalog.yaml"))
	if len(dirs) != len(want) {
		t.Errorf("%d cases on disk, %d expected", len(dirs), len(want))
	}
	for name, rules := range want {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			c, err := LoadDir(filepath.Join(root, name))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range Validate(c) {
				if f.Severity != validate.Error {
					continue
				}
				got = append(got, f.Rule)
				if f.File != "catalog.yaml" || f.Line == 0 || f.Field == "" || f.Hint == "" || f.Message == "" {
					t.Errorf("finding lacks file, line, field, message or hint: %+v", f)
				}
			}
			sort.Strings(got)
			if strings.Join(got, " ") != strings.Join(rules, " ") {
				t.Errorf("error findings %v, want %v", got, rules)
				for _, f := range Validate(c) {
					t.Logf("%s:%d %s %s: %s", f.File, f.Line, f.Rule, f.Field, f.Message)
				}
			}
			up, ok := verdicts[name]
			if !ok {
				t.Fatalf("no upstream verdict for %s", name)
			}
			if passed := len(got) == 0; passed != up.Passed && !upstreamMisses[name] {
				t.Errorf("opm passed=%v, upstream passed=%v (%s)", passed, up.Passed, up.Error)
			}
		})
	}
}

// TestValidateSubstitutesSources: the olm.substitutesFor annotation is read
// from the rendered CSV, an olm.bundle.object CSV or olm.csv.metadata, and a
// bundle naming itself is a cycle.
func TestValidateSubstitutesSources(t *testing.T) {
	t.Parallel()
	pkg := Package{Schema: SchemaPackage, Name: "op", DefaultChannel: "s", Pos: Position{"c.json", 1}}
	ch := Channel{Schema: SchemaChannel, Name: "s", Package: "op", Entries: []ChannelEntry{{Name: "a"}, {Name: "b", Replaces: "a"}}, Pos: Position{"c.json", 2}}
	mk := func(name, version string, extra Property, csv string) Bundle {
		return Bundle{Schema: SchemaBundle, Name: name, Package: "op", Image: "example.com/op:" + version, Pos: Position{"c.json", 3},
			CSV: json.RawMessage(csv),
			Properties: []Property{
				mustProperty(PropertyPackage, PackageValue{PackageName: "op", Version: version}), extra}}
	}
	meta := mustProperty(PropertyCSVMetadata, map[string]any{"annotations": map[string]string{"olm.substitutesFor": "a"}})
	for name, c := range map[string]*Catalog{
		"csv field and csv metadata": {Packages: []Package{pkg}, Channels: []Channel{ch}, Bundles: []Bundle{
			mk("a", "1.0.0", mustProperty("x", 1), `{"metadata":{"annotations":{"olm.substitutesFor":"b"}}}`),
			mk("b", "1.1.0", meta, ""),
		}},
		"self": {Packages: []Package{pkg}, Channels: []Channel{{Schema: SchemaChannel, Name: "s", Package: "op", Entries: []ChannelEntry{{Name: "a"}}}}, Bundles: []Bundle{
			mk("a", "1.0.0", mustProperty("x", 1), `{"metadata":{"annotations":{"olm.substitutesFor":"a"}}}`),
		}},
	} {
		var got []string
		for _, f := range Validate(c) {
			if f.Rule == validate.RuleCatalogSubstitutesCycle.ID {
				got = append(got, f.Message)
			}
		}
		if len(got) != 1 {
			t.Errorf("%s: substitutes findings %q, want one", name, got)
		}
	}
}

// TestValidateLocalBundlePath: a bundle added to a database from a directory
// renders with that directory as its image. No cluster can pull it, so it is
// a warning, but the catalog still renders and serves for local work.
func TestValidateLocalBundlePath(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile(filepath.Join("testdata", "upstream-model", "ok", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/tmp/Work/op/1.0.0", "./bundles/1.0.0", "../op/1.0.0"} {
		dir := t.TempDir()
		text := strings.Replace(string(data), `image: "quay.io/example/op-bundle:1.0.0"`, `image: "`+path+`"`, 1)
		if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var warned bool
		for _, f := range Validate(c) {
			if f.Severity == validate.Error {
				t.Errorf("%s: error %s: %s", path, f.Rule, f.Message)
			}
			if f.Rule == "catalog-bundle-image" && f.Severity == validate.Warning && strings.Contains(f.Message, "local directory") {
				warned = true
			}
		}
		if !warned {
			t.Errorf("%s: no warning that the bundle image is a local directory", path)
		}
	}
}

// TestSubstitutesInManifests: the annotation is found in an
// olm.bundle.object CSV whatever its place in the manifest, and not taken
// from objects that are not CSVs.
func TestSubstitutesInManifests(t *testing.T) {
	t.Parallel()
	for pad := 0; pad < 4; pad++ {
		obj := func(name, kind, to string) Property {
			csv := fmt.Sprintf(`{"kind":%q,"metadata":{"name":"%s%s","annotations":{"olm.substitutesFor":%q}}}`, kind, name, strings.Repeat("x", pad), to)
			return mustProperty(PropertyBundleObject, BundleObjectValue{Data: []byte(csv)})
		}
		mk := func(name, version string, objs ...Property) Bundle {
			return Bundle{Schema: SchemaBundle, Name: name, Package: "op", Image: "example.com/op:" + version, Pos: Position{"c.json", 3},
				Properties: append([]Property{mustProperty(PropertyPackage, PackageValue{PackageName: "op", Version: version})}, objs...)}
		}
		c := &Catalog{
			Packages: []Package{{Schema: SchemaPackage, Name: "op", DefaultChannel: "s", Pos: Position{"c.json", 1}}},
			Channels: []Channel{{Schema: SchemaChannel, Name: "s", Package: "op", Entries: []ChannelEntry{{Name: "a"}, {Name: "b", Replaces: "a"}}, Pos: Position{"c.json", 2}}},
			Bundles: []Bundle{
				mk("a", "1.0.0", obj("crd", "CustomResourceDefinition", "b"), obj("a", "ClusterServiceVersion", "b")),
				mk("b", "1.1.0", obj("b", "ClusterServiceVersion", "a")),
			},
		}
		var got []string
		for _, f := range Validate(c) {
			if f.Rule == validate.RuleCatalogSubstitutesCycle.ID {
				got = append(got, f.Message)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0], "a → b → a") {
			t.Errorf("pad %d: %q, want one cycle a → b → a", pad, got)
		}
		// A CRD that happens to carry the annotation does not count.
		c.Bundles[1] = mk("b", "1.1.0", obj("b", "CustomResourceDefinition", "a"))
		for _, f := range Validate(c) {
			if f.Rule == validate.RuleCatalogSubstitutesCycle.ID {
				t.Errorf("pad %d: cycle through a CRD: %s", pad, f.Message)
			}
		}
	}
}
