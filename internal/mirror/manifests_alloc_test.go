package mirror

import (
	"fmt"
	"os"
	"runtime"
	"testing"

	"sigs.k8s.io/yaml"
)

// scaleReport is a run of n images, each in its own repository (the most
// mirror-set entries), and its catalog.
func scaleReport(n int) *Report {
	rep := &Report{To: "127.0.0.1:5000/opm", Catalog: "127.0.0.1:5001/bench/catalog:1", Complete: true}
	for i := 0; i < n; i++ {
		d := fmt.Sprintf("sha256:%064x", i)
		src := fmt.Sprintf("127.0.0.1:5001/bench/op%d/img%d", i%50, i)
		if i%3 == 0 {
			src += ":v1"
		} else {
			src += "@" + d
		}
		rep.Images = append(rep.Images, Result{Item: Item{Source: src, Role: "related"},
			Target: fmt.Sprintf("127.0.0.1:5000/opm/bench/op%d/img%d@%s", i%50, i, d), Digest: d, Copied: true, Blobs: 3, Bytes: 12345})
	}
	rep.Images = append(rep.Images, Result{Item: Item{Source: rep.Catalog, Role: RoleCatalog},
		Target: fmt.Sprintf("127.0.0.1:5000/opm/bench/catalog@sha256:%064x", 1), Copied: true})
	return rep
}

// Writing the manifests of 2,000 images allocates in proportion to what
// it writes: the mirror sets were once marshalled as whole YAML trees
// (through JSON and back), 26 MB allocated for 2,000 images, the largest
// heap of a run (measured: 4.5 MB after).
func TestWriteManifestsAllocations(t *testing.T) {
	if raceDetector {
		t.Skip("allocations are counted without -race: its instrumentation allocates too")
	}
	rep := scaleReport(2000)
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	files, err := WriteManifests(dir, rep, ManifestOptions{ICSP: true})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	var size uint64
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		size += uint64(st.Size())
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 12*size {
		t.Errorf("writing %d bytes of manifests for 2,000 images allocated %d bytes, over 12 times their size", size, got)
	}
}

// The mirror sets, written an entry at a time, are what yaml.Marshal
// writes of the whole object, for plain references and for scalars it
// quotes.
func TestMirrorListYAMLMatchesMarshal(t *testing.T) {
	for _, m := range []map[string]string{
		{"127.0.0.1:5001/a/b": "127.0.0.1:5000/opm/a/b", "quay.io/x/y": "mirror.example.com/x/y"},
		{"a/b:": "m/b", "true": "null", "1.5": "x/y", "a: b/c": "#x/y", "-x/y": "@x/y", "a/b\nc": "m/c", "": "m/d"},
	} {
		l := mirrorList{"config.openshift.io/v1", "ImageDigestMirrorSet", "imageDigestMirrors", "n", m}
		want, err := yaml.Marshal(l.object())
		if err != nil {
			t.Fatal(err)
		}
		got, err := l.yaml()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("entry at a time:\n%s\nwhole object:\n%s", got, want)
		}
	}
}
