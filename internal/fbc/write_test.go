package fbc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWriteDirMatchesUpstreamMigrate: DIR/<package>/catalog.json holds
// upstream's bytes (its migrate output equals its render for one package).
func TestWriteDirMatchesUpstreamMigrate(t *testing.T) {
	for _, dbPath := range referenceDBs(t) {
		c, _ := renderDB(t, copyDB(t, dbPath), RenderOptions{})
		out := filepath.Join(t.TempDir(), "catalog")
		if err := WriteDir(out, c, WriteDirOptions{}); err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(strings.TrimSuffix(dbPath, ".db") + ".fbc.json")
		got, err := os.ReadFile(filepath.Join(out, c.Packages[0].Name, "catalog.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: %s", dbPath, firstDiff(got, want))
		}
		entries, _ := os.ReadDir(out)
		if len(entries) != 1 {
			t.Errorf("want one package directory, got %d entries", len(entries))
		}
		// And it loads back to the same catalog.
		back, err := LoadDir(out)
		if err != nil {
			t.Fatal(err)
		}
		var a bytes.Buffer
		if err := Write(&a, back, FormatJSON); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(a.Bytes(), want) {
			t.Errorf("%s: loaded back: %s", dbPath, firstDiff(a.Bytes(), want))
		}
	}
}

func TestWriteDirRefusesNonEmptyUnlessForced(t *testing.T) {
	c := smallCatalog()
	out := t.TempDir()
	keep := filepath.Join(out, "keep.txt")
	if err := os.WriteFile(keep, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteDir(out, c, WriteDirOptions{})
	if err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Fatalf("want a not-empty error, got %v", err)
	}
	if data, _ := os.ReadFile(keep); string(data) != "mine" {
		t.Fatal("refused write changed the destination")
	}
	if err := WriteDir(out, c, WriteDirOptions{Force: true, Format: FormatYAML}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(keep); !os.IsNotExist(err) {
		t.Error("forced write kept the old content")
	}
	data, err := os.ReadFile(filepath.Join(out, "op", "catalog.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), "---\ndefaultChannel: stable\n") {
		t.Errorf("unexpected YAML:\n%s", data)
	}
	// No temporary directories are left beside it.
	siblings, _ := os.ReadDir(filepath.Dir(out))
	for _, s := range siblings {
		if strings.Contains(s.Name(), ".opm-") {
			t.Errorf("left behind %s", s.Name())
		}
	}
}

// TestWriteDirFailureLeavesDestination: a write that fails (a package name
// that cannot be a directory) leaves an existing destination as it was.
func TestWriteDirFailureLeavesDestination(t *testing.T) {
	out := t.TempDir()
	old := filepath.Join(out, "op", "catalog.json")
	os.MkdirAll(filepath.Dir(old), 0o755)
	os.WriteFile(old, []byte("old"), 0o644)
	c := smallCatalog()
	c.Packages = append(c.Packages, Package{Schema: SchemaPackage, Name: "../evil", DefaultChannel: "x"})
	if err := WriteDir(out, c, WriteDirOptions{Force: true}); err == nil {
		t.Fatal("want an error for a package name with a slash")
	}
	if data, _ := os.ReadFile(old); string(data) != "old" {
		t.Fatal("failed write changed the destination")
	}
}

func TestWriteYAMLLoadsBack(t *testing.T) {
	c := smallCatalog()
	var buf bytes.Buffer
	if err := Write(&buf, c, FormatYAML); err != nil {
		t.Fatal(err)
	}
	back := &Catalog{}
	if err := back.LoadFile("catalog.yaml", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	var a, b bytes.Buffer
	Write(&a, c, FormatJSON)
	Write(&b, back, FormatJSON)
	if a.String() != b.String() {
		t.Errorf("YAML round trip changed the catalog:\n%s\nvs\n%s", a.String(), b.String())
	}
}

// smallCatalog is one package, one channel, two bundles.
func smallCatalog() *Catalog {
	return &Catalog{
		Packages: []Package{{Schema: SchemaPackage, Name: "op", DefaultChannel: "stable"}},
		Channels: []Channel{{Schema: SchemaChannel, Name: "stable", Package: "op", Entries: []ChannelEntry{
			{Name: "op.v1.0.0"}, {Name: "op.v1.1.0", Replaces: "op.v1.0.0", SkipRange: "<1.1.0"}}}},
		Bundles: []Bundle{
			{Schema: SchemaBundle, Name: "op.v1.0.0", Package: "op", Image: "quay.io/x/op-bundle:1.0.0",
				Properties: []Property{mustProperty(PropertyPackage, PackageValue{PackageName: "op", Version: "1.0.0"})}},
			{Schema: SchemaBundle, Name: "op.v1.1.0", Package: "op", Image: "quay.io/x/op-bundle:1.1.0",
				Properties: []Property{mustProperty(PropertyPackage, PackageValue{PackageName: "op", Version: "1.1.0"}),
					mustProperty(PropertyGVK, GVKValue{Group: "x.io", Kind: "Thing", Version: "v1"})},
				RelatedImages: []RelatedImage{{Name: "op", Image: "quay.io/x/op:1.1.0"}}},
		},
	}
}

// TestWriteDirCleansUpKilledRuns: a migrate killed between moving the old
// catalog aside and the new one in (the fallback without an exchange) left
// no DIR, the old catalog and a half-written one beside it; the next run
// restores, then replaces, and leaves nothing of either behind.
func TestWriteDirCleansUpKilledRuns(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "out")
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(cmd.Process.Pid)
	for _, d := range []string{".out.opm-old-" + dead + "-1/p", ".out.opm-tmp-" + dead + "-2/p"} {
		if err := os.MkdirAll(filepath.Join(parent, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteDir(dir, &Catalog{}, WriteDirOptions{}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("the restored old catalog is not empty: want a refusal without --force, got %v", err)
	}
	if err := WriteDir(dir, &Catalog{}, WriteDirOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(parent, ".out.opm-*"))
	if len(left) != 0 {
		t.Errorf("left beside the catalog: %v", left)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the new (empty) catalog has %d entries", len(entries))
	}
}
