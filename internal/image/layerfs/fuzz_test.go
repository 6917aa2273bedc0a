package layerfs

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"crypto/sha256"
	"encoding/hex"
	"github.com/klauspost/compress/zstd"
)

// FuzzLayerReader feeds arbitrary bytes through the layer stream (compression
// sniffing, gzip, zstd, size caps) and the tar applier. Whatever the input, it
// must not panic, and what it accepts must be a well-formed tree: valid
// paths, readable files, relative symlinks that stay inside the root.
func FuzzLayerReader(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		lr, err := NewReader(io.NopCloser(bytes.NewReader(data)), Expect{Size: int64(len(data)), Digest: digestOf(data)}, 1<<20)
		if err != nil {
			return
		}
		defer lr.Close()
		fsys := New(Limits{MaxEntry: 1 << 20, SpillFile: 1 << 10, SpillTotal: 1 << 16})
		defer fsys.Close()
		if err := fsys.ApplyLayer(context.Background(), lr, "sha256:fuzz"); err != nil {
			return
		}
		if err := lr.Verify(); err != nil {
			return
		}
		err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !fs.ValidPath(p) {
				t.Fatalf("invalid path %q", p)
			}
			switch {
			case d.Type()&fs.ModeSymlink != 0:
				target, err := fsys.ReadLink(p)
				if err != nil {
					t.Fatalf("readlink %s: %v", p, err)
				}
				if !strings.HasPrefix(target, "/") {
					if err := checkSymlink(strings.Split(p, "/"), target); err != nil {
						t.Fatalf("accepted escaping symlink %s -> %s", p, target)
					}
				}
			case d.Type().IsRegular():
				if _, err := fsys.ReadFile(p); err != nil {
					t.Fatalf("read %s: %v", p, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("walk: %v", err)
		}
	})
}

// TestWriteFuzzSeeds regenerates testdata/fuzz/FuzzLayerReader when
// OPM_WRITE_FUZZ_SEEDS=1; the seeds are checked in.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("OPM_WRITE_FUZZ_SEEDS") != "1" {
		t.Skip("set OPM_WRITE_FUZZ_SEEDS=1 to regenerate the fuzz seed corpus")
	}
	plain := makeTar(t,
		tarEntry{Name: "etc/", Typ: tar.TypeDir},
		tarEntry{Name: "etc/a", Body: "a"},
		tarEntry{Name: "etc/.wh.b"},
		tarEntry{Name: "opq/.wh..wh..opq"},
		tarEntry{Name: "lib", Typ: tar.TypeSymlink, Link: "usr/lib"},
		tarEntry{Name: "abs", Typ: tar.TypeSymlink, Link: "/etc/a"},
		tarEntry{Name: "hard", Typ: tar.TypeLink, Link: "etc/a"},
	)
	seeds := map[string][]byte{
		"plain":    plain,
		"dotdot":   makeTar(t, tarEntry{Name: "../../etc/passwd", Body: "x"}),
		"absolute": makeTar(t, tarEntry{Name: "/abs", Body: "x"}),
		"through":  makeTar(t, tarEntry{Name: "evil", Typ: tar.TypeSymlink, Link: "/"}, tarEntry{Name: "evil/etc/passwd", Body: "x"}),
		"device":   makeTar(t, tarEntry{Name: "dev/null", Typ: tar.TypeChar, DevMajor: 1}),
		"huge":     makeTar(t, tarEntry{Name: "big", Size: 2 << 30, NoBody: true}),
		"escape":   makeTar(t, tarEntry{Name: "a/l", Typ: tar.TypeSymlink, Link: "../../x"}),
		"empty":    {},
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	seeds["gzip"] = gz.Bytes()
	enc, _ := zstd.NewWriter(nil)
	seeds["zstd"] = enc.EncodeAll(plain, nil)
	dir := filepath.Join("testdata", "fuzz", "FuzzLayerReader")
	os.MkdirAll(dir, 0o755)
	for name, data := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", data)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLayerUncompressedCap(t *testing.T) {
	// Many small entries that add up past the cap, gzip-compressed to little.
	var entries []tarEntry
	for i := 0; i < 8; i++ {
		entries = append(entries, tarEntry{Name: fmt.Sprintf("f%d", i), Body: strings.Repeat("z", 200<<10)})
	}
	raw := makeTar(t, entries...)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(raw)
	zw.Close()
	d := digestOf(gz.Bytes())
	lr, err := NewReader(io.NopCloser(bytes.NewReader(gz.Bytes())), Expect{Digest: d, Size: int64(gz.Len())}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer lr.Close()
	f := New(Limits{MaxEntry: 1 << 20})
	defer f.Close()
	err = f.ApplyLayer(context.Background(), lr, d)
	if err == nil || !strings.Contains(err.Error(), "uncompressed size is over the 1.0 MiB limit") || !strings.Contains(err.Error(), d) {
		t.Fatalf("err = %v", err)
	}
}

func TestExtractToStaysInside(t *testing.T) {
	f, err := applyAll(t, Limits{}, makeTar(t,
		tarEntry{Name: "usr/lib/x", Body: "x"},
		tarEntry{Name: "lib", Typ: tar.TypeSymlink, Link: "/usr/lib"},
		tarEntry{Name: "root", Typ: tar.TypeSymlink, Link: "/"},
		tarEntry{Name: "usr/bin/up", Typ: tar.TypeSymlink, Link: "/usr/lib/x"},
	))
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "out")
	if err := ExtractTo(context.Background(), f, dir); err != nil {
		t.Fatal(err)
	}
	for link, want := range map[string]string{"lib": "usr/lib", "root": ".", "usr/bin/up": "../../usr/lib/x"} {
		if got, _ := os.Readlink(filepath.Join(dir, link)); got != want {
			t.Errorf("%s -> %q, want %q", link, got, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "usr/bin/up")); err != nil || string(b) != "x" {
		t.Errorf("usr/bin/up: %q %v", b, err)
	}
}

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}
