package layerfs

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func applyAll(t *testing.T, opts Limits, layers ...[]byte) (*FS, error) {
	t.Helper()
	f := New(opts)
	t.Cleanup(func() { f.Close() })
	for i, l := range layers {
		if err := f.ApplyLayer(context.Background(), bytes.NewReader(l), "sha256:layer"+string(rune('0'+i))); err != nil {
			return f, err
		}
	}
	return f, nil
}

func TestApplyHostile(t *testing.T) {
	cases := []struct {
		name    string
		entries []tarEntry
		want    string
	}{
		{"dotdot", []tarEntry{{Name: "../../etc/passwd", Body: "root::0:0::/:/bin/sh\n"}}, `entry "../../etc/passwd": path escapes the image root through ".."`},
		{"absolute", []tarEntry{{Name: "/abs", Body: "x"}}, `entry "/abs": absolute path`},
		{"symlink-then-file", []tarEntry{
			{Name: "evil", Typ: tar.TypeSymlink, Link: "/"},
			{Name: "evil/etc/passwd", Body: "pwned"},
		}, `entry "evil/etc/passwd": parent "evil" is a symbolic link; writing through symbolic links is refused`},
		{"symlink-escape", []tarEntry{{Name: "a/link", Typ: tar.TypeSymlink, Link: "../../etc"}}, `entry "a/link": symbolic link to "../../etc" points outside the image root`},
		{"hardlink-escape", []tarEntry{{Name: "h", Typ: tar.TypeLink, Link: "../etc/passwd"}}, `entry "h": hard link to "../etc/passwd" points outside the image root`},
		{"hardlink-absolute", []tarEntry{{Name: "h", Typ: tar.TypeLink, Link: "/etc/passwd"}}, `entry "h": hard link to absolute path "/etc/passwd" points outside the image root`},
		{"hardlink-missing", []tarEntry{{Name: "h", Typ: tar.TypeLink, Link: "nothere"}}, `hard link to "nothere", which is not in the image`},
		{"huge-sparse", []tarEntry{{Name: "big.img", Size: 2 << 30, NoBody: true}}, `entry "big.img": size 2.0 GiB is over the 512.0 MiB limit (--max-layer-size)`},
		{"char-device", []tarEntry{{Name: "dev/null", Typ: tar.TypeChar, DevMajor: 1}}, `entry "dev/null": device node`},
		{"block-device", []tarEntry{{Name: "dev/sda", Typ: tar.TypeBlock, DevMajor: 8}}, `entry "dev/sda": device node`},
		{"fifo", []tarEntry{{Name: "pipe", Typ: tar.TypeFifo}}, `entry "pipe": named pipe`},
		{"truncated", []tarEntry{{Name: "short", Size: 100, NoBody: true}}, `entry "short": layer ends inside this entry`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			work := t.TempDir()
			opts := Limits{TempDir: work}
			f, err := applyAll(t, opts, makeTar(t, tc.entries...))
			if err == nil {
				t.Fatal("layer accepted")
			}
			if !errors.Is(err, ErrUnsafeLayer) {
				t.Errorf("error %v does not wrap ErrUnsafeLayer", err)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "layer sha256:layer0") {
				t.Errorf("error %q\nwant it to contain %q and the layer digest", err, tc.want)
			}
			// Nothing may land outside the work dir, and nothing inside it either:
			// layer contents never touch the disk under their own names.
			f.Close()
			left, _ := os.ReadDir(work)
			if len(left) != 0 {
				t.Errorf("work dir holds %v after refusal", left)
			}
		})
	}
}

func TestApplyWhiteouts(t *testing.T) {
	base := makeTar(t,
		tarEntry{Name: "etc/", Typ: tar.TypeDir},
		tarEntry{Name: "etc/keep", Body: "keep"},
		tarEntry{Name: "etc/gone", Body: "gone"},
		tarEntry{Name: "opaque/", Typ: tar.TypeDir},
		tarEntry{Name: "opaque/old", Body: "old"},
		tarEntry{Name: "opaque/sub/deep", Body: "deep"},
		tarEntry{Name: "dir/", Typ: tar.TypeDir},
		tarEntry{Name: "dir/a", Body: "a"},
		tarEntry{Name: "replaced", Body: "file"},
	)
	upper := makeTar(t,
		tarEntry{Name: "etc/.wh.gone", Body: ""},
		// The new file comes before the opaque marker: order inside a layer must not matter.
		tarEntry{Name: "opaque/new", Body: "new"},
		tarEntry{Name: "opaque/.wh..wh..opq", Body: ""},
		tarEntry{Name: ".wh.dir", Body: ""},
		tarEntry{Name: "replaced/", Typ: tar.TypeDir},
		tarEntry{Name: "replaced/inside", Body: "in"},
		tarEntry{Name: ".wh.never-existed", Body: ""},
	)
	f, err := applyAll(t, Limits{}, base, upper)
	if err != nil {
		t.Fatal(err)
	}
	if err := fstest.TestFS(f, "etc/keep", "opaque/new", "replaced/inside"); err != nil {
		t.Fatal(err)
	}
	for _, gone := range []string{"etc/gone", "etc/.wh.gone", "opaque/old", "opaque/sub", "opaque/.wh..wh..opq", "dir", ".wh.dir", ".wh.never-existed"} {
		if _, err := fs.Stat(f, gone); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: want not exist, got %v", gone, err)
		}
	}
	// A third layer re-creating a whited-out path brings it back.
	again := makeTar(t, tarEntry{Name: "etc/gone", Body: "back"})
	if err := f.ApplyLayer(context.Background(), bytes.NewReader(again), "sha256:l3"); err != nil {
		t.Fatal(err)
	}
	if b, _ := fs.ReadFile(f, "etc/gone"); string(b) != "back" {
		t.Errorf("etc/gone = %q", b)
	}
}

func TestApplySymlinksResolveInsideRoot(t *testing.T) {
	f, err := applyAll(t, Limits{}, makeTar(t,
		tarEntry{Name: "usr/lib/libx.so.1", Body: "elf"},
		tarEntry{Name: "lib", Typ: tar.TypeSymlink, Link: "usr/lib"},
		tarEntry{Name: "usr/bin/abs", Typ: tar.TypeSymlink, Link: "/usr/lib/libx.so.1"},
		tarEntry{Name: "root", Typ: tar.TypeSymlink, Link: "/"},
		tarEntry{Name: "hard", Typ: tar.TypeLink, Link: "usr/lib/libx.so.1"},
	))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"lib/libx.so.1", "usr/bin/abs", "root/usr/lib/libx.so.1", "hard"} {
		if b, err := fs.ReadFile(f, p); err != nil || string(b) != "elf" {
			t.Errorf("read %s = %q, %v", p, b, err)
		}
	}
	if _, err := fs.ReadFile(f, "root/../../../../usr/lib/libx.so.1"); err == nil {
		t.Error("path with .. accepted by Open (fs.ValidPath forbids it)")
	}
	if target, err := fs.ReadLink(f, "root"); err != nil || target != "/" {
		t.Errorf("readlink root = %q, %v", target, err)
	}
	if err := fstest.TestFS(f, "usr/lib/libx.so.1", "hard"); err != nil {
		t.Fatal(err)
	}
	loop, err := applyAll(t, Limits{}, makeTar(t, tarEntry{Name: "loop", Typ: tar.TypeSymlink, Link: "loop"}))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(loop, "loop"); err == nil || !strings.Contains(err.Error(), "too many levels") {
		t.Errorf("loop: %v", err)
	}
}

func TestApplySpillsLargeFiles(t *testing.T) {
	work := t.TempDir()
	big := strings.Repeat("x", 3000)
	f, err := applyAll(t, Limits{TempDir: work, SpillFile: 1024, SpillTotal: 4096},
		makeTar(t, tarEntry{Name: "small", Body: "s"}, tarEntry{Name: "big", Body: big}))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := fs.ReadFile(f, "big"); string(b) != big {
		t.Fatal("spilled file content differs")
	}
	if err := fstest.TestFS(f, "small", "big"); err != nil {
		t.Fatal(err)
	}
	spilled, _ := filepath.Glob(filepath.Join(work, "opm-fs-*", "*"))
	if len(spilled) != 1 {
		t.Errorf("spilled files: %v", spilled)
	}
	f.Close()
	if left, _ := os.ReadDir(work); len(left) != 0 {
		t.Errorf("Close left %v", left)
	}
}
