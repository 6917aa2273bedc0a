package indeximage

import (
	"context"
	"os"
	"strings"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// updateWith is update with the database layer compressed as comp.
func updateWith(t *testing.T, from, dst, data string, comp Compression) (*Result, string, error) {
	t.Helper()
	b, err := New(client(t), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	b.Compression = comp
	if err := b.FromIndex(context.Background(), from); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(b.DatabasePath())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b.DatabasePath(), []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	res, err := b.Write(context.Background(), dst)
	return res, string(old), err
}

// A zstd database layer is written with the OCI zstd media type, replaces
// a gzip one, is read back by the next update, and replaced by gzip again.
func TestZstdDatabaseLayer(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	base, err := mutate.AppendLayers(empty.Image, layer(t, map[string]string{"bin/opm": "binary"}), layer(t, map[string]string{"database/index.db": "v1"}))
	if err != nil {
		t.Fatal(err)
	}
	base, err = mutate.Config(base, v1.Config{Labels: indexLabels()})
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, mutate.MediaType(base, types.OCIManifestSchema1), addr+"/idx:1")

	steps := []struct {
		comp     Compression
		data     string
		wantType types.MediaType
	}{
		{Zstd, "v2", types.OCILayerZStd},
		{Zstd, "v3", types.OCILayerZStd},
		{Gzip, "v4", types.OCILayer},
	}
	prev := "v1"
	for i, s := range steps {
		from, dst := addr+"/idx:"+string(rune('1'+i)), addr+"/idx:"+string(rune('2'+i))
		res, old, err := updateWith(t, from, dst, s.data, s.comp)
		if err != nil {
			t.Fatal(err)
		}
		if old != prev {
			t.Errorf("step %d read database %q, want %q", i, old, prev)
		}
		if res.ReplacedLayers != 1 {
			t.Errorf("step %d: the previous database layer was not replaced", i)
		}
		m, err := openRemote(t, dst).Manifest()
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Layers) != 2 || m.Layers[1].MediaType != s.wantType {
			t.Errorf("step %d: layers %+v, want the database layer as %s", i, m.Layers, s.wantType)
		}
		prev = s.data
	}
}

// Docker's schema 2 has no zstd layer type: a zstd layer on a Docker
// image is refused, naming the way out.
func TestZstdRefusedOnDockerImage(t *testing.T) {
	addr, _ := startRegistry(t)
	c := client(t)
	img, err := mutate.AppendLayers(mutate.MediaType(mutate.ConfigMediaType(empty.Image, types.DockerConfigJSON), types.DockerManifestSchema2),
		layer(t, map[string]string{"database/index.db": "v1"}))
	if err != nil {
		t.Fatal(err)
	}
	img, err = mutate.Config(img, v1.Config{Labels: indexLabels()})
	if err != nil {
		t.Fatal(err)
	}
	push(t, c, img, addr+"/docker:1")
	_, _, err = updateWith(t, addr+"/docker:1", addr+"/docker:2", "v2", Zstd)
	if err == nil || !strings.Contains(err.Error(), "--layer-compression gzip") {
		t.Fatalf("got %v, want a refusal naming --layer-compression gzip", err)
	}
}

func TestParseCompression(t *testing.T) {
	for in, want := range map[string]Compression{"": Gzip, "gzip": Gzip, "zstd": Zstd} {
		if got, err := ParseCompression(in); err != nil || got != want {
			t.Errorf("%q: %v, %v", in, got, err)
		}
	}
	if _, err := ParseCompression("xz"); err == nil || !strings.Contains(err.Error(), "xz") {
		t.Errorf("xz: %v", err)
	}
}
