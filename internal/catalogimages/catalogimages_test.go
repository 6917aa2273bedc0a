package catalogimages

import (
	"math/rand"
	"os"
	"path/filepath"
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
