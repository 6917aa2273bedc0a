package indeximage

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"

	"github.com/opmkit/opm/internal/image/blockgzip"
)

// fakeDatabase is n bytes that compress somewhat, like a database.
func fakeDatabase(n int, salt string) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s row %d: %x\n", salt, i, i*i*2654435761)
	}
	return b.Bytes()[:n]
}

// builderUpdate runs FromIndex on from, writes data as the database and
// writes dst, returning the builder (closed) and the result.
func builderUpdate(t *testing.T, from, dst string, data []byte) (*Builder, *Result) {
	t.Helper()
	b, err := New(client(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.FromIndex(context.Background(), from); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.DatabasePath(), data, 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := b.Write(context.Background(), dst)
	if err != nil {
		t.Fatal(err)
	}
	return b, res
}

// An update copies the gzip blocks of the previous database layer that it
// leaves unchanged and compresses the others, and the layer is the same
// as one compressed from scratch: the digest depends on the database only.
func TestUnchangedBlocksAreCopied(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	const blocks = 6
	db1 := fakeDatabase(blocks*blockgzip.BlockSize-20000, "a")

	// The first index image, its database layer written by opm.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "db1"), db1, 0o600); err != nil {
		t.Fatal(err)
	}
	l1, err := buildLayer(layerSpec{db: filepath.Join(dir, "db1"), dbPath: "database/index.db"}, filepath.Join(dir, "l1"), Gzip, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if l1.reused != 0 || l1.compressed != blocks {
		t.Fatalf("first layer: %d blocks copied, %d compressed; want 0 and %d", l1.reused, l1.compressed, blocks)
	}
	base, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}), l1)
	if err != nil {
		t.Fatal(err)
	}
	base, err = mutate.Config(base, v1.Config{Labels: indexLabels()})
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, mutate.MediaType(base, types.OCIManifestSchema1), addr+"/idx:1")

	// Change bytes in the third block and append some: the third and
	// the last blocks (and the first, whose tar header holds the size)
	// change.
	db2 := bytes.Clone(db1)
	copy(db2[2*blockgzip.BlockSize+100:], "changed")
	db2 = append(db2, fakeDatabase(3000, "b")...)
	b, res := builderUpdate(t, addr+"/idx:1", addr+"/idx:2", db2)
	if b.blocksReused != blocks-3 || b.blocksCompressed != 3 {
		t.Errorf("second layer: %d blocks copied, %d compressed; want %d and 3", b.blocksReused, b.blocksCompressed, blocks-3)
	}

	// The same database compressed from scratch: the same layer.
	if err := os.WriteFile(filepath.Join(dir, "db2"), db2, 0o600); err != nil {
		t.Fatal(err)
	}
	fresh, err := buildLayer(layerSpec{db: filepath.Join(dir, "db2"), dbPath: "database/index.db"}, filepath.Join(dir, "l2"), Gzip, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.DatabaseLayer != fresh.digest.String() {
		t.Fatalf("layer with copied blocks %s, compressed from scratch %s", res.DatabaseLayer, fresh.digest)
	}

	// And it reads back as the new database, with any gzip reader.
	_, got := updateRead(t, addr+"/idx:2")
	if !bytes.Equal(got, db2) {
		t.Fatal("the database read back differs from the one written")
	}
	rc, err := fresh.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.Copy(io.Discard, rc); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(fresh.file)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, zr); err != nil || n < int64(len(db2)) {
		t.Fatalf("a plain gzip reader read %d bytes: %v", n, err)
	}
}

// A layer some other tool compressed is compressed again whole.
func TestForeignLayerCompressedWhole(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	data := fakeDatabase(3*blockgzip.BlockSize, "x")
	base, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"database/index.db": string(data)}))
	if err != nil {
		t.Fatal(err)
	}
	base, err = mutate.Config(base, v1.Config{Labels: indexLabels()})
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, mutate.MediaType(base, types.OCIManifestSchema1), addr+"/idx:1")
	b, _ := builderUpdate(t, addr+"/idx:1", addr+"/idx:2", data)
	if b.blocksReused != 0 || b.blocksCompressed != 4 {
		t.Errorf("%d blocks copied, %d compressed; want 0 and 4", b.blocksReused, b.blocksCompressed)
	}
}

// updateRead fetches ref's database.
func updateRead(t *testing.T, ref string) (*Builder, []byte) {
	t.Helper()
	b, err := New(client(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	if err := b.FetchDatabase(context.Background(), ref); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(b.DatabasePath())
	if err != nil {
		t.Fatal(err)
	}
	return b, data
}
