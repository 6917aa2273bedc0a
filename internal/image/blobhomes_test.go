package image

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlobHomesBounded: the blobs a Copier remembers the repository of
// stay at most two generations of maxHomes, however many are written; a
// blob used again (a base layer) is remembered, and so are the latest.
func TestBlobHomesBounded(t *testing.T) {
	t.Parallel()
	reg, err := name.NewRegistry("mirror.example:5000")
	require.NoError(t, err)
	repo := func(i int) name.Repository { return reg.Repo(fmt.Sprintf("vendor/img-%d", i)) }
	key := func(i int) homeKey {
		k, ok := homeKeyOf(reg, v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint(i))))})
		require.True(t, ok)
		return k
	}
	var h blobHomes
	base := key(-1)
	h.store(base, repo(-1))
	for i := range 5 * maxHomes {
		if _, ok := h.load(base); !ok {
			t.Fatalf("base layer forgotten after %d blobs", i)
		}
		h.store(key(i), repo(i))
		require.LessOrEqual(t, len(h.cur)+len(h.old), 2*maxHomes)
	}
	got, ok := h.load(base)
	require.True(t, ok)
	assert.Equal(t, "vendor/img--1", got.RepositoryStr(), "the first repository to hold it")
	got, ok = h.load(key(5*maxHomes - 1))
	require.True(t, ok)
	assert.Equal(t, repo(5*maxHomes-1), got)
	_, ok = h.load(key(0))
	assert.False(t, ok, "a blob of long ago")

	// Only sha256 digests are keyed; another is simply not remembered.
	_, ok = homeKeyOf(reg, v1.Hash{Algorithm: "sha512", Hex: fmt.Sprintf("%0128x", 1)})
	assert.False(t, ok)
	_, ok = homeKeyOf(reg, v1.Hash{Algorithm: "sha256", Hex: "zz"})
	assert.False(t, ok)
}
