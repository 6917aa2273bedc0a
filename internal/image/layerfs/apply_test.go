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
		{"dotdot", []tarEntry{{name: "../../etc/passwd", body: "root::0:0::/:/bin/sh\n"}}, `entry "../../etc/passwd": path escapes the image root through ".."`},
		{"absolute", []tarEntry{{name: "/abs", body: "x"}}, `entry "/abs": absolute path`},
		{"symlink-then-file", []tarEntry{
			{name: "evil", typ: tar.TypeSymlink, link: "/"},
			{name: "evil/etc/passwd", body: "pwned"},
		}, `entry "evil/etc/passwd": parent "evil" is a symbolic link; writing through symbolic links is refused`},
		{"symlink-escape", []tarEntry{{name: "a/link", typ: tar.TypeSymlink, link: "../../etc"}}, `entry "a/link": symbolic link to "../../etc" points outside the image root`},
		{"hardlink-escape", []tarEntry{{name: "h", typ: tar.TypeLink, link: "../etc/passwd"}}, `entry "h": hard link to "../etc/passwd" points outside the image root`},
		{"hardlink-absolute", []tarEntry{{name: "h", typ: tar.TypeLink, link: "/etc/passwd"}}, `entry "h": hard link to absolute path "/etc/passwd" points outside the image root`},
		{"hardlink-missing", []tarEntry{{name: "h", typ: tar.TypeLink, link: "nothere"}}, `hard link to "nothere", which is not in the image`},
		{"huge-sparse", []tarEntry{{name: "big.img", size: 2 << 30, noBody: true}}, `entry "big.img": size 2.0 GiB is over the 512.0 MiB limit (--max-layer-size)`},
		{"char-device", []tarEntry{{name: "dev/null", typ: tar.TypeChar, devMajor: 1}}, `entry "dev/null": device node`},
		{"block-device", []tarEntry{{name: "dev/sda", typ: tar.TypeBlock, devMajor: 8}}, `entry "dev/sda": device node`},
		{"fifo", []tarEntry{{name: "pipe", typ: tar.TypeFifo}}, `entry "pipe": named pipe`},
		{"truncated", []tarEntry{{name: "short", size: 100, noBody: true}}, `entry "short": layer ends inside this entry`},
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
		tarEntry{name: "etc/", typ: tar.TypeDir},
		tarEntry{name: "etc/keep", body: "keep"},
		tarEntry{name: "etc/gone", body: "gone"},
		tarEntry{name: "opaque/", typ: tar.TypeDir},
		tarEntry{name: "opaque/old", body: "old"},
		tarEntry{name: "opaque/sub/deep", body: "deep"},
		tarEntry{name: "dir/", typ: tar.TypeDir},
		tarEntry{name: "dir/a", body: "a"},
		tarEntry{name: "replaced", body: "file"},
	)
	upper := makeTar(t,
		tarEntry{name: "etc/.wh.gone", body: ""},
		// The new file comes before the opaque marker: order inside a layer must not matter.
		tarEntry{name: "opaque/new", body: "new"},
		tarEntry{name: "opaque/.wh..wh..opq", body: ""},
		tarEntry{name: ".wh.dir", body: ""},
		tarEntry{name: "replaced/", typ: tar.TypeDir},
		tarEntry{name: "replaced/inside", body: "in"},
		tarEntry{name: ".wh.never-existed", body: ""},
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
	again := makeTar(t, tarEntry{name: "etc/gone", body: "back"})
	if err := f.ApplyLayer(context.Background(), bytes.NewReader(again), "sha256:l3"); err != nil {
		t.Fatal(err)
	}
	if b, _ := fs.ReadFile(f, "etc/gone"); string(b) != "back" {
		t.Errorf("etc/gone = %q", b)
	}
}

func TestApplySymlinksResolveInsideRoot(t *testing.T) {
	f, err := applyAll(t, Limits{}, makeTar(t,
		tarEntry{name: "usr/lib/libx.so.1", body: "elf"},
		tarEntry{name: "lib", typ: tar.TypeSymlink, link: "usr/lib"},
		tarEntry{name: "usr/bin/abs", typ: tar.TypeSymlink, link: "/usr/lib/libx.so.1"},
		tarEntry{name: "root", typ: tar.TypeSymlink, link: "/"},
		tarEntry{name: "hard", typ: tar.TypeLink, link: "usr/lib/libx.so.1"},
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
	loop, err := applyAll(t, Limits{}, makeTar(t, tarEntry{name: "loop", typ: tar.TypeSymlink, link: "loop"}))
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
		makeTar(t, tarEntry{name: "small", body: "s"}, tarEntry{name: "big", body: big}))
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
