package bundleimage

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/bundle"
)

func TestLocateAndPrepareWithMetadata(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, p := range []string{bundle.ManifestsDir, bundle.MetadataDir} {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(bundle.AnnotationsFile)), []byte("annotations: {}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	manifests := filepath.Join(dir, bundle.ManifestsDir)
	for _, arg := range []string{dir, manifests} {
		b, m := Locate(arg)
		if b != dir || m != manifests {
			t.Errorf("Locate(%s) = %s, %s; want %s, %s", arg, b, m, dir, manifests)
		}
	}
	got, res, err := Prepare(manifests, bundle.GenerateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got != dir || res != nil {
		t.Errorf("Prepare with metadata present and nothing asked = %s, %v; want %s and no generation", got, res, dir)
	}
}
