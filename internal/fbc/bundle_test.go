package fbc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/index"
)

// corpusPackage loads a real package's bundle directories with the image
// references upstream's reference databases were built from.
func corpusPackage(t *testing.T, pkg string) []index.LoadedBundle {
	t.Helper()
	shared := sharedDir(t)
	f, err := os.Open(filepath.Join(shared, "reference", "index", "bundle-refs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []index.LoadedBundle
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if len(cols) < 3 || cols[0] != pkg {
			continue
		}
		b, err := bundle.LoadDir(filepath.Join(shared, "corpus", "real", pkg, cols[1]))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, index.LoadedBundle{Bundle: b, BundlePath: cols[2]})
	}
	if len(out) == 0 {
		t.Fatalf("no bundles of %s in bundle-refs.tsv", pkg)
	}
	return out
}

func blobJSON(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// TestRenderBundleMatchesIndexRender: a bundle rendered on its own is the
// blob the same bundle gets when added to an index and the index rendered,
// and (replaces mode keeps every bundle's manifests) upstream's blob too —
// for every package upstream built in replaces mode (properties.yaml and
// dependencies included: pelorus, apicast, ibmcloud).
func TestRenderBundleMatchesIndexRender(t *testing.T) {
	refs, _ := filepath.Glob(filepath.Join(sharedDir(t), "reference", "index", "*.replaces.fbc.json"))
	if len(refs) == 0 {
		t.Fatal("no replaces-mode references")
	}
	for _, ref := range refs {
		pkg := strings.TrimSuffix(filepath.Base(ref), ".replaces.fbc.json")
		t.Run(pkg, func(t *testing.T) {
			lbs := corpusPackage(t, pkg)
			dbPath := filepath.Join(t.TempDir(), "index.db")
			db, err := index.Create(dbPath)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Add(context.Background(), lbs, index.AddOptions{Mode: index.ModeReplaces, Permissive: true}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			fromDB, _ := renderDB(t, dbPath, RenderOptions{})
			upstream := &Catalog{}
			data, err := os.ReadFile(ref)
			if err != nil {
				t.Fatal(err)
			}
			if err := upstream.LoadFile(filepath.Base(ref), data); err != nil {
				t.Fatal(err)
			}
			find := func(c *Catalog, name string) *Bundle {
				for i := range c.Bundles {
					if c.Bundles[i].Name == name {
						return &c.Bundles[i]
					}
				}
				return nil
			}
			compared := 0
			for _, lb := range lbs {
				got, err := RenderBundle(lb.Bundle, lb.BundlePath, RenderOptions{})
				if err != nil {
					t.Fatal(err)
				}
				want := find(fromDB, got.Name)
				if want == nil {
					continue // left out by the add (upstream refused it too, or skipped)
				}
				compared++
				if g, w := blobJSON(t, got), blobJSON(t, want); g != w {
					t.Errorf("%s: alone and from the index differ: %s", got.Name, firstDiff([]byte(g), []byte(w)))
				}
				if up := find(upstream, got.Name); up == nil {
					t.Errorf("%s not in upstream's render", got.Name)
				} else if g, w := blobJSON(t, got), blobJSON(t, up); g != w {
					t.Errorf("%s: differs from upstream's: %s", got.Name, firstDiff([]byte(g), []byte(w)))
				}
			}
			if compared == 0 {
				t.Error("no bundle compared")
			}
		})
	}
}

// TestRenderBundleCSVMetadata: the csv-metadata level swaps the manifests for
// one olm.csv.metadata property, the rest unchanged.
func TestRenderBundleCSVMetadata(t *testing.T) {
	lb := corpusPackage(t, "etcd")[0]
	full, err := RenderBundle(lb.Bundle, lb.BundlePath, RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	meta, err := RenderBundle(lb.Bundle, lb.BundlePath, RenderOptions{Migrate: MigrateCSVMetadata})
	if err != nil {
		t.Fatal(err)
	}
	var kept []Property
	var md *Property
	for i, p := range meta.Properties {
		switch p.Type {
		case PropertyBundleObject:
			t.Errorf("olm.bundle.object left at csv-metadata level")
		case PropertyCSVMetadata:
			md = &meta.Properties[i]
		default:
			kept = append(kept, p)
		}
	}
	var fullKept []Property
	for _, p := range full.Properties {
		if p.Type != PropertyBundleObject {
			fullKept = append(fullKept, p)
		}
	}
	if blobJSON(t, kept) != blobJSON(t, fullKept) {
		t.Errorf("other properties changed")
	}
	if md == nil {
		t.Fatal("no olm.csv.metadata property")
	}
	var v map[string]any
	if err := json.Unmarshal(md.Value, &v); err != nil {
		t.Fatal(err)
	}
	if v["displayName"] != lb.Bundle.CSV.Spec.DisplayName || v["crdDescriptions"] == nil || v["installModes"] == nil {
		t.Errorf("csv metadata lacks fields: %v", keys(v))
	}
}

// TestRenderBundleFromDirectory: without an image the bundle path is empty
// and no bundle image is listed among the related images.
func TestRenderBundleFromDirectory(t *testing.T) {
	lb := corpusPackage(t, "etcd")[0]
	b, err := RenderBundle(lb.Bundle, "", RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if b.Image != "" {
		t.Errorf("image %q", b.Image)
	}
	for _, ri := range b.RelatedImages {
		if strings.Contains(ri.Image, "bundle") {
			t.Errorf("bundle image listed: %v", ri)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func TestBundleObjectValueIsMarshal(t *testing.T) {
	for _, obj := range []string{"", "{}", `{"kind":"X","a":"<&>"}`, "\x00\xff"} {
		want, _ := json.Marshal(BundleObjectValue{Data: []byte(obj)})
		if got := bundleObjectValue([]byte(obj)); string(got) != string(want) {
			t.Errorf("%q: got %s want %s", obj, got, want)
		}
	}
}
