package catalogimages

import (
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/shareddata"
)

// TestListerInPartsListsAsWhole: the reference catalogs, handed to a
// Lister a bundle at a time in a shuffled order, list exactly what List
// lists of each whole catalog (what mirror relies on to read a catalog
// part by part).
func TestListerInPartsListsAsWhole(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	files, err := filepath.Glob(filepath.Join(dir, "*.fbc.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	rnd := rand.New(rand.NewSource(29))
	images := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		c := &fbc.Catalog{}
		require.NoError(t, c.LoadFile(filepath.Base(file), data))
		want := List(c, "")
		images += len(want)

		l := NewLister("")
		for _, i := range rnd.Perm(len(c.Bundles)) {
			l.Add(&fbc.Catalog{Bundles: []fbc.Bundle{c.Bundles[i]}})
		}
		assert.Equal(t, want, l.Images(), filepath.Base(file))
	}
	t.Logf("%d catalogs, %d images", len(files), images)
}

// TestListSameDigestTwoNames: one digest under two names is one image,
// named by its first use, the other name in Also.
func TestListSameDigestTwoNames(t *testing.T) {
	t.Parallel()
	d := "@sha256:" + "ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01ab01"
	c := &fbc.Catalog{Bundles: []fbc.Bundle{
		{Package: "b", Name: "b.v1", Image: "example.com/b-bundle:1", RelatedImages: []fbc.RelatedImage{{Name: "op", Image: "mirror.example/op" + d}}},
		{Package: "a", Name: "a.v1", Image: "example.com/a-bundle:1", RelatedImages: []fbc.RelatedImage{{Name: "op", Image: "quay.io/op" + d}}},
	}}
	got := List(c, "")
	require.Len(t, got, 3)
	var op Image
	for _, im := range got {
		if im.Digest != "" {
			op = im
		}
	}
	assert.Equal(t, "quay.io/op"+d, op.Image, "package a comes first")
	assert.Equal(t, []string{"mirror.example/op" + d}, op.Also)
	assert.Equal(t, []Use{{Package: "a", Bundle: "a.v1", As: "related", Name: "op"}, {Package: "b", Bundle: "b.v1", As: "related", Name: "op"}}, op.Uses)
	assert.Len(t, List(c, "a"), 2, "a's bundle image and its operator")
}

// TestRegistryRef (issue 35): a catalog names images in registries; other
// transports, which read this machine's files, are refused and listed
// with the bundles naming them, never among the images.
func TestRegistryRef(t *testing.T) {
	t.Parallel()
	for ref, want := range map[string]string{
		"quay.io/org/op@sha256:" + strings.Repeat("a", 64): "quay.io/org/op@sha256:" + strings.Repeat("a", 64),
		"docker://quay.io/org/op:v1":                       "quay.io/org/op:v1",
		"localhost:5000/op:v1":                             "localhost:5000/op:v1",
		"docker:dind":                                      "docker:dind",
		"nginx":                                            "nginx",
		"Not A Reference":                                  "Not A Reference", // left to the pull to report
	} {
		got, err := RegistryRef(ref)
		require.NoError(t, err, ref)
		assert.Equal(t, want, got, ref)
	}
	for _, ref := range []string{"docker://oci:/x:1", "oci:/var/lib/layout:1", "oci:layout", "oci-archive:/any.tar", "docker-archive:/x.tar:a:1",
		"dir:/etc", "containers-storage:quay.io/x:1", "docker-daemon:x:1", "sif:/x.sif", "ftp+x:/y"} {
		_, err := RegistryRef(ref)
		assert.Error(t, err, ref)
	}

	l := NewLister("")
	l.Add(&fbc.Catalog{Bundles: []fbc.Bundle{
		{Package: "p", Name: "p.v1", Image: "docker://quay.io/p/b:1", RelatedImages: []fbc.RelatedImage{{Name: "x", Image: "oci:/srv/x:1"}}},
		{Package: "p", Name: "p.v2", Image: "quay.io/p/b:2", RelatedImages: []fbc.RelatedImage{{Name: "x", Image: "oci:/srv/x:1"}}},
	}})
	var images []string
	for _, im := range l.Images() {
		images = append(images, im.Image)
	}
	assert.Equal(t, []string{"quay.io/p/b:1", "quay.io/p/b:2"}, images)
	refused := l.Refused()
	require.Len(t, refused, 1)
	assert.Len(t, refused[0].Uses, 2)
	assert.Contains(t, refused[0].Error(), `bundle p/p.v1 (and 1 more bundles) names related image "x" oci:/srv/x:1: the oci: transport`)
}

func FuzzRegistryRef(f *testing.F) {
	for _, s := range []string{"quay.io/x@sha256:" + strings.Repeat("0", 64), "docker://a/b", "oci:/x:1", "oci-archive:a.tar", "localhost:5000/a", "a:b:c", "x+y:/z", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		got, err := RegistryRef(ref)
		if err != nil {
			return
		}
		// What is accepted is never read as a local transport.
		for _, tr := range transports {
			if strings.HasPrefix(got, tr+":") {
				t.Fatalf("%q accepted as %q", ref, got)
			}
		}
	})
}

func TestDigestIsSHA256Only(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	if got := Digest("quay.io/x@sha256:" + hex); got != "sha256:"+hex {
		t.Errorf("sha256: %q", got)
	}
	if got := Digest("quay.io/x@sha512:" + hex + hex); got != "" {
		t.Errorf("sha512: %q", got)
	}
	if got := Digest("quay.io/x:1"); got != "" {
		t.Errorf("tag: %q", got)
	}
}
