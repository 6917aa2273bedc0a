package layerfs

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/image/layerfs/tartest"
)

func wantRefusal(t *testing.T, err error, entry string, words ...string) {
	t.Helper()
	var le *LayerError
	if !errors.As(err, &le) {
		t.Fatalf("got %v, want a *LayerError", err)
	}
	if le.Layer == "" || (entry != "" && le.Entry != entry) {
		t.Errorf("refusal names layer %q entry %q, want entry %q", le.Layer, le.Entry, entry)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("refusal %q does not say %q", err, w)
		}
	}
}

// Attack 1: a ~30 KB layer of GNU sparse entries, each 200 MiB of holes.
func TestSparseEntriesCountExpandedSize(t *testing.T) {
	layer := tartest.SparseLayer("blob", 60, 200<<20)
	if len(layer) > 32<<10 {
		t.Fatalf("test layer is %d bytes", len(layer))
	}
	work := t.TempDir()
	_, err := applyAll(t, Limits{TempDir: work}, layer)
	wantRefusal(t, err, "blob1", "256.0 MiB", TotalHint)
	if du := diskUse(t, work); du > DefaultMaxTotal {
		t.Errorf("%d bytes on disk after the refusal", du)
	}
}

func TestSparseEntryOverEntryCap(t *testing.T) {
	_, err := applyAll(t, Limits{TempDir: t.TempDir()}, tartest.SparseLayer("huge", 1, 8<<30))
	wantRefusal(t, err, "huge", "8.0 GiB", LimitHint)
}

// A sparse entry within the caps reads back as its holes (zeros).
func TestSparseEntryWithinCaps(t *testing.T) {
	f, err := applyAll(t, Limits{TempDir: t.TempDir()}, tartest.SparseLayer("holes", 1, 4096))
	if err != nil {
		t.Fatal(err)
	}
	data, err := f.ReadFile("holes")
	if err != nil || !bytes.Equal(data, make([]byte, 4096)) {
		t.Fatalf("read back %d bytes, %v", len(data), err)
	}
}

// Attack 3: one layer blob listed six times counts six times.
func TestLayerListedSixTimesCountsSixTimes(t *testing.T) {
	body := strings.Repeat("y", 100<<10)
	layer := makeTar(t, tarEntry{Name: "manifests/a.yaml", Body: body})
	f := New(Limits{MaxTotal: 510 << 10, TempDir: t.TempDir()})
	defer f.Close()
	var err error
	for i := 0; i < 6 && err == nil; i++ {
		err = f.ApplyLayer(context.Background(), bytes.NewReader(layer), "sha256:same")
	}
	wantRefusal(t, err, "manifests/a.yaml", "510.0 KiB")
	if _, _, total := f.Usage(); total != 6*int64(len(body)) {
		t.Errorf("total %d after six applications of a %d-byte file", total, len(body))
	}
}

// Attack 4: a hard link overwritten 2,000 times must not make the memory
// count go negative (which would lift the in-memory budget).
func TestHardLinkOverwritesKeepAccounting(t *testing.T) {
	body := strings.Repeat("z", 1000)
	entries := []tarEntry{{Name: "target", Body: body}}
	for i := 0; i < 2000; i++ {
		entries = append(entries, tarEntry{Name: "link", Typ: tar.TypeLink, Link: "target"})
	}
	f, err := applyAll(t, Limits{TempDir: t.TempDir()}, makeTar(t, entries...))
	if err != nil {
		t.Fatal(err)
	}
	mem, disk, _ := f.Usage()
	if mem != int64(len(body)) || disk != 0 {
		t.Errorf("after 2,000 link overwrites: mem %d disk %d, want %d and 0", mem, disk, len(body))
	}
	// Removing the target and then the link frees the content exactly once.
	wh := makeTar(t, tarEntry{Name: ".wh.target"}, tarEntry{Name: ".wh.link"})
	if err := f.ApplyLayer(context.Background(), bytes.NewReader(wh), "sha256:wh"); err != nil {
		t.Fatal(err)
	}
	if mem, disk, _ := f.Usage(); mem != 0 || disk != 0 {
		t.Errorf("after removing target and link: mem %d disk %d, want 0", mem, disk)
	}
}

// Spilled content shared by hard links is counted and removed once.
func TestSpilledHardLinkAccounting(t *testing.T) {
	work := t.TempDir()
	big := strings.Repeat("s", 4000)
	entries := []tarEntry{{Name: "big", Body: big}}
	for i := 0; i < 50; i++ {
		entries = append(entries, tarEntry{Name: "alias", Typ: tar.TypeLink, Link: "big"})
	}
	f, err := applyAll(t, Limits{TempDir: work, SpillFile: 1024, SpillTotal: 1024}, makeTar(t, entries...))
	if err != nil {
		t.Fatal(err)
	}
	if _, disk, _ := f.Usage(); disk != int64(len(big)) {
		t.Errorf("disk %d, want %d", disk, len(big))
	}
	if data, _ := f.ReadFile("alias"); string(data) != big {
		t.Error("link content differs")
	}
	wh := makeTar(t, tarEntry{Name: ".wh.big"}, tarEntry{Name: ".wh.alias"})
	if err := f.ApplyLayer(context.Background(), bytes.NewReader(wh), "sha256:wh"); err != nil {
		t.Fatal(err)
	}
	if _, disk, _ := f.Usage(); disk != 0 {
		t.Errorf("disk %d after removing every link", disk)
	}
	if du := diskUse(t, work); du != 0 {
		t.Errorf("%d bytes of spilled files left after their last link went", du)
	}
}

func TestSpillCap(t *testing.T) {
	big := strings.Repeat("s", 4000)
	_, err := applyAll(t, Limits{TempDir: t.TempDir(), SpillFile: 1024, SpillTotal: 1024, MaxSpill: 6000},
		makeTar(t, tarEntry{Name: "one", Body: big}, tarEntry{Name: "two", Body: big}))
	wantRefusal(t, err, "two", "spilled to disk")
}

func diskUse(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}
