package fbc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index"
)

// The package-at-a-time paths (EachIndexPackage, Writer, DirWriter,
// Scanned, ToIndexScanned, ValidateDir) against the whole-catalog ones
// they replace in the commands: same bytes, same errors.

// streamRender renders a database through EachIndexPackage and Writer.
func streamRender(t *testing.T, path string, format Format) ([]byte, []string) {
	t.Helper()
	var out bytes.Buffer
	w, err := NewWriter(&out, format)
	if err != nil {
		t.Fatal(err)
	}
	var warns []string
	err = EachIndexPackage(context.Background(), openRO(t, path), RenderOptions{}, func(c *Catalog, ws []string) error {
		warns = append(warns, ws...)
		return w.Add(c)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), warns
}

func TestStreamRenderMatchesWholeOnReferenceDBs(t *testing.T) {
	for _, db := range referenceDBs(t) {
		for _, format := range []Format{FormatJSON, FormatYAML} {
			c, warns := renderDB(t, db, RenderOptions{})
			var whole bytes.Buffer
			if err := Write(&whole, c, format); err != nil {
				t.Fatal(err)
			}
			got, gotWarns := streamRender(t, db, format)
			if !bytes.Equal(got, whole.Bytes()) {
				t.Errorf("%s (%s): package-at-a-time render differs from the whole render (%d vs %d bytes)", filepath.Base(db), format, len(got), whole.Len())
			}
			if !reflect.DeepEqual(gotWarns, warns) {
				t.Errorf("%s: warnings %q, want %q", filepath.Base(db), gotWarns, warns)
			}
		}
	}
}

// mergedReferenceDB is one database holding every reference package (the
// replaces render of each where there is one), for a multi-package render.
func mergedReferenceCatalog(t *testing.T) *Catalog {
	t.Helper()
	all := &Catalog{}
	seen := map[string]bool{}
	dbs := referenceDBs(t)
	// replaces renders first: a package's first database wins.
	for _, pass := range []bool{true, false} {
		for _, db := range dbs {
			if strings.Contains(db, ".replaces.") != pass {
				continue
			}
			pkg := strings.SplitN(filepath.Base(db), ".", 2)[0]
			if seen[pkg] {
				continue
			}
			seen[pkg] = true
			c, _ := renderDB(t, db, RenderOptions{})
			all.Merge(c)
		}
	}
	return all
}

func TestStreamMultiPackageDatabase(t *testing.T) {
	ctx := context.Background()
	all := mergedReferenceCatalog(t)
	path := filepath.Join(t.TempDir(), "all.db")
	if err := ToIndex(ctx, all, path, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	c, warns := renderDB(t, path, RenderOptions{})
	var whole bytes.Buffer
	if err := Write(&whole, c, FormatJSON); err != nil {
		t.Fatal(err)
	}
	got, gotWarns := streamRender(t, path, FormatJSON)
	if !bytes.Equal(got, whole.Bytes()) {
		t.Errorf("render of %d packages differs a package at a time", len(c.PackageNames()))
	}
	if !reflect.DeepEqual(gotWarns, warns) {
		t.Errorf("warnings %q, want %q", gotWarns, warns)
	}

	// migrate: WriteDir whole against DirWriter fed package by package.
	wholeDir := filepath.Join(t.TempDir(), "whole")
	if err := WriteDir(wholeDir, c, WriteDirOptions{}); err != nil {
		t.Fatal(err)
	}
	streamDir := filepath.Join(t.TempDir(), "stream")
	dw, err := NewDirWriter(streamDir, WriteDirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = EachIndexPackage(ctx, openRO(t, path), RenderOptions{}, func(pc *Catalog, _ []string) error { return dw.Add(pc) })
	if err != nil {
		t.Fatal(err)
	}
	if err := dw.Commit(); err != nil {
		t.Fatal(err)
	}
	assertSameTree(t, wholeDir, streamDir)
	viaFile := filepath.Join(t.TempDir(), "via-file")
	n0, w0, err := RenderIndexFileToDir(ctx, path, viaFile, RenderOptions{}, WriteDirOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n0 != len(c.PackageNames()) || !reflect.DeepEqual(w0, warns) {
		t.Errorf("RenderIndexFileToDir: %d packages, warnings %q; want %d, %q", n0, w0, len(c.PackageNames()), warns)
	}
	assertSameTree(t, wholeDir, viaFile)

	// migrate --to sqlite of that directory: the same database, byte for
	// byte, whole and a package at a time.
	wholeDB := filepath.Join(t.TempDir(), "whole.db")
	loaded, err := LoadDir(wholeDir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ToIndex(ctx, loaded, wholeDB, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	streamDB := filepath.Join(t.TempDir(), "stream.db")
	n, err := DirToIndex(ctx, streamDir, streamDB, ToIndexOptions{}, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Packages != len(loaded.PackageNames()) || n.Bundles != len(loaded.Bundles) {
		t.Errorf("counts %+v, want %d packages, %d bundles", n, len(loaded.PackageNames()), len(loaded.Bundles))
	}
	a, _ := os.ReadFile(wholeDB)
	b, _ := os.ReadFile(streamDB)
	if !bytes.Equal(a, b) {
		t.Errorf("database written a package at a time differs from the whole conversion")
	}
}

func assertSameTree(t *testing.T, a, b string) {
	t.Helper()
	files := func(root string) map[string][]byte {
		out := map[string][]byte{}
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			data, err := os.ReadFile(p)
			out[rel] = data
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	fa, fb := files(a), files(b)
	if len(fa) != len(fb) {
		t.Errorf("%d files, want %d", len(fb), len(fa))
	}
	for name, data := range fa {
		if !bytes.Equal(fb[name], data) {
			t.Errorf("%s differs", name)
		}
	}
}

func TestWriterRefusesPackagesOutOfOrder(t *testing.T) {
	w, err := NewWriter(&bytes.Buffer{}, FormatJSON)
	if err != nil {
		t.Fatal(err)
	}
	pkg := func(n string) *Catalog {
		return &Catalog{Packages: []Package{{Schema: SchemaPackage, Name: n, DefaultChannel: "stable"}}}
	}
	if err := w.Add(pkg("b")); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(pkg("a")); err == nil || !strings.Contains(err.Error(), "name order") {
		t.Errorf("a package before the last one: %v, want an error", err)
	}
	if err := w.Add(pkg("b")); err == nil {
		t.Error("a package given twice was accepted")
	}
}

// messyCatalog writes a catalog directory with what Load must cope with:
// several packages in one file, a package split over files, YAML, a
// custom schema, null documents, blobs whose schema is not their first
// key, escaped and duplicate keys, and broken blobs and files.
func messyCatalog(t *testing.T, withErrors bool) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bundle := func(pkg, name, version string) string {
		return fmt.Sprintf(`{"schema": "olm.bundle", "name": %q, "package": %q, "image": "r/%s:%s", "properties": [{"type": "olm.package", "value": {"packageName": %q, "version": %q}}]}`,
			name, pkg, pkg, version, pkg, version)
	}
	write("all.json", `{"schema":"olm.package","name":"alpha","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"alpha","entries":[{"name":"alpha.v1"},{"name":"alpha.v2","replaces":"alpha.v1"}]}
`+bundle("alpha", "alpha.v1", "1.0.0")+`
{"schema":"olm.package","name":"beta","defaultChannel":"fast"}
{"package":"beta","schema":"olm.channel","name":"fast","entries":[{"name":"beta.v1"}]}
`+bundle("beta", "beta.v1", "1.0.0")+`
null
{"schema":"example.com/custom","package":"beta","name":"note","data":{"x":[1,2,{"y":"}"}]}}
{"schema":"olm.deprecations","package":"alpha","entries":[]}
`)
	write("alpha/more.json", bundle("alpha", "alpha.v2", "2.0.0")+"\n"+
		`{"schema":"olm.bundle","name":"alpha.v3","package":"alpha","package":"gamma","image":"x","properties":[]}`+"\n"+
		`{"schema":"olm.bundle","name":"esc\"aped","package":"al\u0070ha","image":"x","properties":[{"type":"olm.package","value":{"packageName":"alpha","version":"3.0.1"}}]}`+"\n")
	write("gamma/catalog.yaml", `---
schema: olm.package
name: gamma
defaultChannel: alpha
---
schema: olm.channel
package: gamma
name: alpha
entries:
  - name: gamma.v0.1.0
---
schema: olm.bundle
package: gamma
name: gamma.v0.1.0
image: r/gamma:0.1.0
properties:
  - type: olm.package
    value: {packageName: gamma, version: 0.1.0}
---
schema: example.com/note
package: gamma
name: lt
text: "a <b> & c"
`)
	write("notes.txt", "not a catalog file")
	if withErrors {
		write("broken/a.json", `{"schema":"olm.bundle","name":"b1","package":"delta","image":"x","properties":"oops"}
["a list"]
{"name":"no schema"}
{"schema":"olm.channel","package":"delta","name":"c","entries":{}}
{"schema": 7}
{"schema":"olm.package","name":"delta","defaultChannel":"c"}
{"schema":"olm.package","name":
`)
		write("broken/b.yaml", "schema: olm.package\nname: [unclosed\n")
		write("broken/c.json", `{"schema":"olm.bundle","name":"b2","package":3}`+"\n")
	}
	return dir
}

func TestScannedMatchesLoad(t *testing.T) {
	ctx := context.Background()
	for _, withErrors := range []bool{false, true} {
		dir := messyCatalog(t, withErrors)
		whole, loadErr := LoadDir(dir)
		s, err := ScanDir(dir, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		// A package whose blobs all fail to decode is still listed (the scan
		// does not decode); it comes to Each empty.
		if !withErrors && !reflect.DeepEqual(s.Packages(), whole.PackageNames()) {
			t.Errorf("packages %q, want %q", s.Packages(), whole.PackageNames())
		}
		if !reflect.DeepEqual(s.Ignored, whole.Ignored) {
			t.Errorf("ignored %q, want %q", s.Ignored, whole.Ignored)
		}
		err = s.Each(ctx, func(name string, c *Catalog) error {
			want := whole.Package(name)
			if !reflect.DeepEqual(c, want) {
				gotJ, _ := json.Marshal(c)
				wantJ, _ := json.Marshal(want)
				t.Errorf("package %q:\n got %s\nwant %s", name, gotJ, wantJ)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(s.Err()) != fmt.Sprint(loadErr) {
			t.Errorf("errors (withErrors=%v):\n got %v\nwant %v", withErrors, s.Err(), loadErr)
		}
		if withErrors && loadErr == nil {
			t.Error("the broken catalog loaded without errors")
		}

		for _, olmv1 := range []bool{false, true} {
			findings, err := ValidateDir(ctx, dir, olmv1, LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			want := LoadFindings(loadErr)
			want = append(want, Validate(whole)...)
			if olmv1 {
				want = append(want, ValidateOLMv1(whole)...)
			}
			if !reflect.DeepEqual(findings, want) {
				t.Errorf("ValidateDir (withErrors=%v, olmv1=%v):\n got %+v\nwant %+v", withErrors, olmv1, findings, want)
			}
		}

		// Converting: the same error (into the same path), or the same
		// database.
		out := filepath.Join(t.TempDir(), "x.db")
		var wholeErr error
		if loadErr != nil {
			wholeErr = loadErr
		} else {
			wholeErr = ToIndex(ctx, whole, out, ToIndexOptions{})
		}
		_, streamErr := DirToIndex(ctx, dir, out, ToIndexOptions{Force: true}, LoadOptions{})
		if fmt.Sprint(streamErr) != fmt.Sprint(wholeErr) {
			t.Errorf("DirToIndex (withErrors=%v):\n got %v\nwant %v", withErrors, streamErr, wholeErr)
		}
	}
}

func TestDirToIndexRefusesAsToIndex(t *testing.T) {
	ctx := context.Background()
	// Two packages that do not validate (a channel naming a missing
	// bundle; a default channel that does not exist) and one whose bundle
	// cannot be converted: the validation errors win, as for the whole.
	dir := t.TempDir()
	files := map[string]string{
		"a/catalog.json": `{"schema":"olm.package","name":"a","defaultChannel":"s"}
{"schema":"olm.channel","name":"s","package":"a","entries":[{"name":"a.v1"},{"name":"a.v2","replaces":"a.v1"}]}
{"schema":"olm.bundle","name":"a.v1","package":"a","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}}]}
`,
		"b/catalog.json": `{"schema":"olm.package","name":"b","defaultChannel":"nope"}
{"schema":"olm.channel","name":"s","package":"b","entries":[{"name":"b.v1"}]}
{"schema":"olm.bundle","name":"b.v1","package":"b","image":"r/b:1","properties":[{"type":"olm.package","value":{"packageName":"b","version":"1.0.0"}}]}
`,
		"c/catalog.json": `{"schema":"olm.package","name":"c","defaultChannel":"s"}
{"schema":"olm.channel","name":"s","package":"c","entries":[{"name":"c.v1"}]}
{"schema":"olm.bundle","name":"c.v1","package":"c","image":"r/c:1","properties":[{"type":"olm.package","value":{"packageName":"c","version":"1.0.0"}},{"type":"olm.bundle.object","value":{"ref":"manifests/csv.yaml"}}]}
`,
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, drop := range []string{"", "a/catalog.json"} {
		if drop != "" {
			// Without a, b still fails validation; without a and b only the
			// conversion error of c remains.
			_ = os.Remove(filepath.Join(dir, drop))
			_ = os.Remove(filepath.Join(dir, "b/catalog.json"))
		}
		whole, err := LoadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "x.db")
		wholeErr := ToIndex(ctx, whole, out, ToIndexOptions{})
		_, streamErr := DirToIndex(ctx, dir, out, ToIndexOptions{}, LoadOptions{})
		if wholeErr == nil || fmt.Sprint(streamErr) != fmt.Sprint(wholeErr) {
			t.Errorf("DirToIndex:\n got %v\nwant %v", streamErr, wholeErr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Error("a refused catalog left a database")
		}
	}
}

func TestDumpEachHandsOverPackagesInOrder(t *testing.T) {
	ctx := context.Background()
	all := mergedReferenceCatalog(t)
	path := filepath.Join(t.TempDir(), "all.db")
	if err := ToIndex(ctx, all, path, ToIndexOptions{}); err != nil {
		t.Fatal(err)
	}
	db := openRO(t, path)
	whole, err := db.Dump(ctx)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	tipCalls := 0
	err = db.DumpEach(ctx, func(int64) { tipCalls++ }, func(p *index.PackageDump) error {
		if tipCalls != 1 {
			t.Errorf("min depth reported %d times before package %s", tipCalls, p.Name)
		}
		if i >= len(whole) || !reflect.DeepEqual(p, whole[i]) {
			t.Errorf("package %d (%s) differs from Dump's", i, p.Name)
		}
		i++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if i != len(whole) || i < 2 {
		t.Errorf("%d packages, want %d", i, len(whole))
	}
}

// TestStreamKeptBlobs: deprecations and custom schemas the database keeps
// (of a package with rows, of none, of one without rows) come out of a
// package-at-a-time render where the whole render puts them.
func TestStreamKeptBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	files := map[string]string{
		"alpha/catalog.json": `{"schema":"olm.package","name":"alpha","defaultChannel":"stable","description":"A"}
{"schema":"olm.channel","name":"stable","package":"alpha","entries":[{"name":"alpha.v1.0.0"},{"name":"alpha.v2.0.0","replaces":"alpha.v1.0.0"}]}
{"schema":"olm.bundle","name":"alpha.v1.0.0","package":"alpha","image":"quay.io/x/alpha:1","properties":[{"type":"olm.package","value":{"packageName":"alpha","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"alpha.v2.0.0","package":"alpha","image":"quay.io/x/alpha:2","properties":[{"type":"olm.package","value":{"packageName":"alpha","version":"2.0.0"}}]}
{"schema":"olm.deprecations","package":"alpha","entries":[{"reference":{"schema":"olm.bundle","name":"alpha.v1.0.0"},"message":"use 2 <now>"}]}
{"schema":"example.com/note","package":"alpha","name":"n1","text":"a"}
`,
		"catalog.json":      `{"schema":"example.com/note","name":"global","text":"no package"}` + "\n",
		"zzz/catalog.json":  `{"schema":"example.com/note","package":"zzz","name":"z","text":"rows-less package"}` + "\n",
		"beta/catalog.yaml": "schema: olm.package\nname: beta\ndefaultChannel: fast\n---\nschema: olm.channel\npackage: beta\nname: fast\nentries:\n- name: beta.v0.1.0\n---\nschema: olm.bundle\npackage: beta\nname: beta.v0.1.0\nimage: quay.io/x/beta:0.1.0\nproperties:\n- type: olm.package\n  value: {packageName: beta, version: 0.1.0}\n",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db := filepath.Join(t.TempDir(), "kept.db")
	if _, err := DirToIndex(ctx, dir, db, ToIndexOptions{}, LoadOptions{}); err != nil {
		t.Fatal(err)
	}
	c, warns := renderDB(t, db, RenderOptions{})
	if len(c.Others) != 4 {
		t.Fatalf("the whole render kept %d blobs of other schemas, want 4", len(c.Others))
	}
	var whole bytes.Buffer
	if err := Write(&whole, c, FormatJSON); err != nil {
		t.Fatal(err)
	}
	got, gotWarns := streamRender(t, db, FormatJSON)
	if !bytes.Equal(got, whole.Bytes()) {
		t.Errorf("package-at-a-time render:\n%s\nwhole:\n%s", got, whole.Bytes())
	}
	if len(gotWarns) != len(warns) {
		t.Errorf("warnings %q, want %q", gotWarns, warns)
	}
}

// TestScannedKeepsLoadLimits: with limits small enough to refuse blobs and
// files, the scan refuses what LoadDirWith refuses, with the same errors.
func TestScannedKeepsLoadLimits(t *testing.T) {
	ctx := context.Background()
	dir := messyCatalog(t, false)
	for _, lim := range []Limits{{MaxBlobBytes: 100}, {MaxFileBytes: 300}, {MaxBlobBytes: 150, MaxFileBytes: 1500}} {
		opts := LoadOptions{Limits: lim}
		whole, loadErr := LoadDirWith(dir, opts)
		if loadErr == nil {
			t.Fatalf("limits %+v refused nothing: the test needs smaller limits", lim)
		}
		s, err := ScanDir(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		err = s.Each(ctx, func(name string, c *Catalog) error {
			if want := whole.Package(name); !reflect.DeepEqual(c, want) {
				t.Errorf("limits %+v, package %q differs from LoadDirWith's", lim, name)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(s.Err()) != fmt.Sprint(loadErr) {
			t.Errorf("limits %+v:\n got %v\nwant %v", lim, s.Err(), loadErr)
		}
		_ = s.Close()
	}
}
