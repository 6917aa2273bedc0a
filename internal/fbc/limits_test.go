package fbc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// hugeBlobCatalog writes DIR/p/catalog.json: a package blob, a channel, and
// on line 3 a bundle blob whose one property holds n bytes.
func hugeBlobCatalog(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, "p", "catalog.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, `{"schema":"olm.package","name":"p","defaultChannel":"stable"}`)
	fmt.Fprintln(f, `{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"}]}`)
	fmt.Fprint(f, `{"schema":"olm.bundle","name":"p.v1","package":"p","image":"example.com/p:1","properties":[{"type":"example.com/big","value":"`)
	chunk := []byte(strings.Repeat("a", 1<<20))
	for left := n; left > 0; left -= len(chunk) {
		if _, err := f.Write(chunk[:min(left, len(chunk))]); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintln(f, `"}]}`)
	return dir
}

// allocated runs f and returns the bytes it allocated on the heap.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func wantLoadError(t *testing.T, err error, file string, line int, words ...string) {
	t.Helper()
	var le *LoadError
	if !errors.As(err, &le) {
		t.Fatalf("want a *LoadError, got %v", err)
	}
	if le.File != file || le.Line != line {
		t.Errorf("finding at %s:%d, want %s:%d: %v", le.File, le.Line, file, line, le)
	}
	for _, w := range words {
		if !strings.Contains(le.Msg, w) {
			t.Errorf("message lacks %q: %v", w, le)
		}
	}
}

// TestLoadRefusesHugeBlobWithinItsLimit: a 96 MiB blob under a 4 MiB blob
// limit is a finding naming file and line, found before the blob is
// decoded: loading allocates the file once and little more (decoding it
// took several times its size).
func TestLoadRefusesHugeBlobWithinItsLimit(t *testing.T) {
	const n = 96 << 20
	dir := hugeBlobCatalog(t, n)
	var err error
	alloc := allocated(func() {
		_, err = LoadDirWith(dir, LoadOptions{Limits: Limits{MaxBlobBytes: 4 << 20}})
	})
	wantLoadError(t, err, "p/catalog.json", 3, "more than the 4 MiB", "--max-blob-size")
	if limit := uint64(n + 32<<20); alloc > limit {
		t.Errorf("loading allocated %d MiB for a %d MiB file, want at most %d MiB", alloc>>20, n>>20, limit>>20)
	}
	// Under the default limit it is an ordinary catalog.
	c, err := LoadDir(dir)
	if err != nil || len(c.Bundles) != 1 {
		t.Errorf("default limits: %d bundles, %v", len(c.Bundles), err)
	}
}

// TestLoadRefusesFileOverItsLimitUnread: a file larger than the file limit
// is refused by its size, before it is read.
func TestLoadRefusesFileOverItsLimitUnread(t *testing.T) {
	dir := hugeBlobCatalog(t, 8<<20)
	var err error
	alloc := allocated(func() {
		_, err = LoadDirWith(dir, LoadOptions{Limits: Limits{MaxFileBytes: 1 << 20}})
	})
	wantLoadError(t, err, "p/catalog.json", 0, "the file is", "more than the 1 MiB", "--max-file-size")
	if alloc > 4<<20 {
		t.Errorf("refusing an 8 MiB file allocated %d KiB: it was read", alloc>>10)
	}
}

// TestLoadRefusesMillionsOfTinyBlobs: tiny blobs cost the model far more
// than their bytes; each counts 1 KiB against the file limit, so a file of
// very many is refused at the blob where the cost passes the limit.
func TestLoadRefusesMillionsOfTinyBlobs(t *testing.T) {
	dir := t.TempDir()
	blob := `{"schema":"x"}` + "\n"
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(strings.Repeat(blob, 100000)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDirWith(dir, LoadOptions{Limits: Limits{MaxFileBytes: 16 << 20}})
	wantLoadError(t, err, "catalog.json", 16385, "16385 blobs", "at least 1 KiB", "--max-file-size")
}

// TestLoadRefusesHugeYAMLDocument: the blob limit holds for YAML documents
// too, at the document's line.
func TestLoadRefusesHugeYAMLDocument(t *testing.T) {
	dir := t.TempDir()
	doc := "schema: olm.package\nname: p\n---\nschema: example.com/big\nvalue: " + strings.Repeat("a", 2<<20) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "catalog.yaml"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadDirWith(dir, LoadOptions{Limits: Limits{MaxBlobBytes: 1 << 20}})
	wantLoadError(t, err, "catalog.yaml", 3, "more than the 1 MiB")
	if _, err := LoadDir(dir); err != nil {
		t.Errorf("default limits: %v", err)
	}
}

// TestBudgetBoundsParallelReads: readers never hold more than the budget,
// and one larger than it still gets through alone.
func TestBudgetBoundsParallelReads(t *testing.T) {
	b := newBudget(10)
	b.acquire(6)
	got := make(chan struct{})
	go func() { b.acquire(6); close(got) }()
	select {
	case <-got:
		t.Fatal("acquired past the budget")
	case <-time.After(100 * time.Millisecond):
	}
	b.release(6)
	<-got
	b.release(6)
	b.acquire(100) // clamped: alone, it passes
	b.release(100)
}

// TestLoadDirSymlinks: a link that leads out of the catalog is a finding
// (it was followed silently); a link to a directory is a finding (it was
// skipped silently, so a catalog of only one passed with 0 packages); a
// link to a file inside the catalog is read.
func TestLoadDirSymlinks(t *testing.T) {
	outside := t.TempDir()
	pkg := `{"schema":"olm.package","name":"p"}` + "\n"
	if err := os.WriteFile(filepath.Join(outside, "secret.json"), []byte(pkg), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "real"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "real", "catalog.json"), []byte(strings.ReplaceAll(pkg, `"p"`, `"q"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{"out.json": filepath.Join(outside, "secret.json"), "linkdir": "real", "in.json": filepath.Join("real", "catalog.json")} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	c, err := LoadDir(dir)
	got := map[string]string{}
	for _, e := range LoadErrors(err) {
		var le *LoadError
		if errors.As(e, &le) {
			got[le.File] = le.Msg
		}
	}
	if !strings.Contains(got["out.json"], "leads out of the catalog") {
		t.Errorf("link out of the catalog: %q", got["out.json"])
	}
	if !strings.Contains(got["linkdir"], "symbolic link to a directory") {
		t.Errorf("link to a directory: %q", got["linkdir"])
	}
	if _, ok := got["in.json"]; ok || c == nil || len(c.Packages) != 2 {
		t.Errorf("link inside the catalog: %q; packages %v", got["in.json"], c)
	}
}
