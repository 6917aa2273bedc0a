package render_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/render"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/shareddata"
)

// sharedDir is ../shared beside the checkout: skipped with the reason when
// absent, a failure under CI.
func sharedDir(t *testing.T) string {
	t.Helper()
	shareddata.Require(t, "reference", "index")
	return shareddata.Root()
}

// The reference databases checked through the command: a replaces-mode and
// semver-mode one, and one with dependencies and properties.
var referenceDBs = []string{"etcd.replaces", "kubedb-installer.semver", "ibmcloud-operator.replaces"}

// TestRenderReferenceDatabases: opm render DB prints upstream's render byte
// for byte; the catalog migrated from it renders back to the same bytes,
// and its YAML form loads back to the same catalog.
func TestRenderReferenceDatabases(t *testing.T) {
	ref := filepath.Join(sharedDir(t), "reference", "index")
	for _, name := range referenceDBs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			want, err := os.ReadFile(filepath.Join(ref, name+".fbc.json"))
			if err != nil {
				t.Fatal(err)
			}
			o := cmdtest.New(t)
			r := o.Run("render", filepath.Join(ref, name+".db"))
			if r.Code != 0 {
				t.Fatalf("render: exit %d: %s", r.Code, r.ErrOut)
			}
			if r.Out != string(want) {
				t.Fatalf("render differs from upstream's at byte %d", firstDiff(r.Out, string(want)))
			}
			dir := filepath.Join(t.TempDir(), "catalog")
			if r := o.Run("migrate", filepath.Join(ref, name+".db"), dir); r.Code != 0 {
				t.Fatalf("migrate: exit %d: %s", r.Code, r.ErrOut)
			}
			r = o.Run("render", dir)
			if r.Code != 0 || r.Out != string(want) {
				t.Fatalf("render of the migrated directory: exit %d, differs at byte %d: %s", r.Code, firstDiff(r.Out, string(want)), r.ErrOut)
			}
			r = o.Run("render", filepath.Join(ref, name+".db"), "-o", "yaml")
			if r.Code != 0 || !strings.HasPrefix(r.Out, "---\n") {
				t.Fatalf("render -o yaml: exit %d: %.200s %s", r.Code, r.Out, r.ErrOut)
			}
			c := &fbc.Catalog{}
			if err := c.LoadFile("x.yaml", []byte(r.Out)); err != nil {
				t.Fatal(err)
			}
			var back bytes.Buffer
			if err := fbc.Write(&back, c, fbc.FormatJSON); err != nil {
				t.Fatal(err)
			}
			if back.String() != string(want) {
				t.Fatalf("yaml loaded back differs at byte %d", firstDiff(back.String(), string(want)))
			}
		})
	}
}

// TestRenderBundleDir: a bundle directory renders to upstream's blob for
// that bundle, but for what only an image has (the image field and the
// bundle image among related images).
func TestRenderBundleDir(t *testing.T) {
	t.Parallel()
	shared := sharedDir(t)
	want := &fbc.Catalog{}
	data, err := os.ReadFile(filepath.Join(shared, "reference", "index", "etcd.replaces.fbc.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := want.LoadFile("etcd.json", data); err != nil {
		t.Fatal(err)
	}
	r := cmdtest.New(t).Run("render", filepath.Join(shared, "corpus", "real", "etcd", "0.9.4"))
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	got := &fbc.Catalog{}
	if err := got.LoadFile("out.json", []byte(r.Out)); err != nil {
		t.Fatal(err)
	}
	if len(got.Bundles) != 1 || len(got.Packages) != 0 || len(got.Channels) != 0 {
		t.Fatalf("want one olm.bundle blob, got %d packages, %d channels, %d bundles", len(got.Packages), len(got.Channels), len(got.Bundles))
	}
	var up *fbc.Bundle
	for i := range want.Bundles {
		if want.Bundles[i].Name == got.Bundles[0].Name {
			up = &want.Bundles[i]
		}
	}
	if up == nil {
		t.Fatalf("%s is not in upstream's render", got.Bundles[0].Name)
	}
	if got.Bundles[0].Image != "" {
		t.Errorf("a bundle directory has no image, got %q", got.Bundles[0].Image)
	}
	if g, w := normalized(t, got.Bundles[0], ""), normalized(t, *up, up.Image); g != w {
		t.Errorf("differs from upstream's blob at byte %d:\n got %.300s\nwant %.300s", firstDiff(g, w), g[max(0, firstDiff(g, w)-100):], w[max(0, firstDiff(g, w)-100):])
	}
}

// normalized is a blob's JSON without its image and without image among
// its related images.
func normalized(t *testing.T, b fbc.Bundle, image string) string {
	t.Helper()
	raw, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	delete(m, "image")
	if rel, ok := m["relatedImages"].([]any); ok {
		var kept []any
		for _, r := range rel {
			if r.(map[string]any)["image"] != image {
				kept = append(kept, r)
			}
		}
		m["relatedImages"] = kept
	}
	out, _ := json.Marshal(m)
	return string(out)
}

func TestRenderRefusesBadSources(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	missing := filepath.Join(t.TempDir(), "nope")
	r := o.Run("render", missing)
	if r.Code == 0 || !strings.Contains(r.ErrOut, missing) || !strings.Contains(r.ErrOut, "no such file or directory") {
		t.Errorf("missing source: exit %d: %s", r.Code, r.ErrOut)
	}
	bad := filepath.Join(t.TempDir(), "cat")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, "c.json"), []byte(`{"schema":"olm.package","name":"x"`), 0o644); err != nil {
		t.Fatal(err)
	}
	r = o.Run("render", bad)
	if r.Code == 0 || !strings.Contains(r.ErrOut, "c.json") || r.Out != "" {
		t.Errorf("broken catalog: exit %d, stdout %q: %s", r.Code, r.Out, r.ErrOut)
	}
	r = o.Run("render", bad, "-o", "xml")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "json or yaml") {
		t.Errorf("-o xml: exit %d: %s", r.Code, r.ErrOut)
	}
	r = o.Run("render", bad, "--migrate-level", "all")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "bundle-object-to-csv-metadata") {
		t.Errorf("--migrate-level all: exit %d: %s", r.Code, r.ErrOut)
	}
}

func TestRenderFlags(t *testing.T) {
	opts, err := cmdtest.Parse(t, render.NewCmd, "a.db", "dir", "-o", "yaml", "--migrate-level", "bundle-object-to-csv-metadata")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(opts.Sources, ",") != "a.db,dir" || opts.Output != "yaml" || opts.MigrateLevel != "bundle-object-to-csv-metadata" {
		t.Errorf("parsed %+v", opts)
	}
	if _, err := cmdtest.Parse(t, render.NewCmd); err == nil {
		t.Error("no source: want an error")
	}
}

func firstDiff(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// TestRenderImageRefTemplate: a bundle directory rendered with the image
// reference upstream's bundle image had gives upstream's blob exactly,
// related bundle image included; --migrate rewrites it to olm.csv.metadata.
func TestRenderImageRefTemplate(t *testing.T) {
	t.Parallel()
	shared := sharedDir(t)
	want := &fbc.Catalog{}
	data, err := os.ReadFile(filepath.Join(shared, "reference", "index", "etcd.replaces.fbc.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := want.LoadFile("etcd.json", data); err != nil {
		t.Fatal(err)
	}
	o := cmdtest.New(t)
	dir := filepath.Join(shared, "corpus", "real", "etcd", "0.9.4")
	r := o.Run("render", dir, "--alpha-image-ref-template", "127.0.0.1:5077/{{.Package}}-bundle:{{.Version}}")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	got := &fbc.Catalog{}
	if err := got.LoadFile("out.json", []byte(r.Out)); err != nil {
		t.Fatal(err)
	}
	if len(got.Bundles) != 1 || got.Bundles[0].Image != "127.0.0.1:5077/etcd-bundle:0.9.4" {
		t.Fatalf("rendered %+v", got.Bundles)
	}
	var up *fbc.Bundle
	for i := range want.Bundles {
		if want.Bundles[i].Name == got.Bundles[0].Name {
			up = &want.Bundles[i]
		}
	}
	if up == nil {
		t.Fatalf("%s is not in upstream's render", got.Bundles[0].Name)
	}
	g, _ := json.Marshal(got.Bundles[0])
	w, _ := json.Marshal(up)
	if string(g) != string(w) {
		t.Errorf("differs from upstream's blob at byte %d", firstDiff(string(g), string(w)))
	}

	r = o.Run("render", dir, "--alpha-image-ref-template", "r/{{.Name}}:v{{.Version}}", "--migrate")
	if r.Code != 0 {
		t.Fatalf("--migrate: exit %d: %s", r.Code, r.ErrOut)
	}
	got = &fbc.Catalog{}
	if err := got.LoadFile("out.json", []byte(r.Out)); err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, p := range got.Bundles[0].Properties {
		types = append(types, p.Type)
	}
	if got.Bundles[0].Image != "r/etcdoperator.v0.9.4:v0.9.4" || strings.Contains(strings.Join(types, ","), "olm.bundle.object") || !strings.Contains(strings.Join(types, ","), "olm.csv.metadata") {
		t.Errorf("--migrate: image %s, properties %v", got.Bundles[0].Image, types)
	}

	r = o.Run("render", dir, "--migrate", "--migrate-level", "none")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "migrate") {
		t.Errorf("--migrate with --migrate-level: exit %d: %s", r.Code, r.ErrOut)
	}
	r = o.Run("render", dir, "--alpha-image-ref-template", "{{.Package")
	if r.Code != 2 || !strings.Contains(r.ErrOut, "--alpha-image-ref-template") {
		t.Errorf("unparsable template: exit %d: %s", r.Code, r.ErrOut)
	}
	r = o.Run("render", dir, "--alpha-image-ref-template", "{{.Tag}}")
	if r.Code == 0 || !strings.Contains(r.ErrOut, "Tag") || r.Out != "" {
		t.Errorf("unknown template field: exit %d, stdout %q: %s", r.Code, r.Out, r.ErrOut)
	}
}

// TestRenderLimitsAndLinks: render reads catalog directories within
// --max-blob-size, and does not follow a link out of the directory.
func TestRenderLimitsAndLinks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blob := `{"schema":"example.com/big","value":"` + strings.Repeat("a", 2<<20) + `"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(blob), 0o644); err != nil {
		t.Fatal(err)
	}
	o := cmdtest.New(t)
	if r := o.Run("render", dir, "--max-blob-size", "1MiB"); r.Code == 0 || !strings.Contains(r.ErrOut, "--max-blob-size") {
		t.Errorf("blob over the limit: exit %d: %.300s", r.Code, r.ErrOut)
	}
	if r := o.Run("render", dir); r.Code != 0 {
		t.Errorf("default limits: exit %d: %.300s", r.Code, r.ErrOut)
	}
	outside := filepath.Join(t.TempDir(), "secret.json")
	if err := os.WriteFile(outside, []byte(`{"schema":"example.com/secret"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	if r := o.Run("render", dir); r.Code == 0 || strings.Contains(r.Out, "example.com/secret") || !strings.Contains(r.ErrOut, "leads out of the catalog") {
		t.Errorf("link out of the catalog: exit %d: %.300s", r.Code, r.ErrOut)
	}
}
