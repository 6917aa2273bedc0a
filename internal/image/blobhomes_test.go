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
		require.LessOrEqual(t, h.len(), 2*maxHomes)
	}
	got, ok := h.load(base)
	require.True(t, ok)
	assert.Equal(t, "vendor/img--1", got.RepositoryStr(), "the first repository to hold it")
	got, ok = h.load(key(5*maxHomes - 1))
	require.True(t, ok)
	assert.Equal(t, repo(5*maxHomes-1), got)
	_, ok = h.load(key(0))
	assert.False(t, ok, "a blob of long ago")

	// Each registry has its own homes: a blob is mounted from a
	// repository of the same registry only.
	other, err := name.NewRegistry("other.example")
	require.NoError(t, err)
	_, ok = h.load(homeKey{reg: other, hash: base.hash})
	assert.False(t, ok, "a blob of another registry")
	h.store(homeKey{reg: other, hash: base.hash}, other.Repo("elsewhere/x"))
	got, ok = h.load(homeKey{reg: other, hash: base.hash})
	require.True(t, ok)
	assert.Equal(t, other.Repo("elsewhere/x"), got)
	got, ok = h.load(base)
	require.True(t, ok)
	assert.Equal(t, repo(-1), got)

	// Only sha256 digests are keyed; another is simply not remembered.
	_, ok = homeKeyOf(reg, v1.Hash{Algorithm: "sha512", Hex: fmt.Sprintf("%0128x", 1)})
	assert.False(t, ok)
	_, ok = homeKeyOf(reg, v1.Hash{Algorithm: "sha256", Hex: "zz"})
	assert.False(t, ok)
}

// TestBlobHomesHeap: what the blob homes hold once full, their
// repositories parsed from references as a copy's destination is, stays
// under a generous bound of 150 bytes a blob remembered (52
// measured: a 48-byte map slot, the map's spare slots, a copy of the
// repository path shared by its blobs). Not parallel: it reads the heap.
func TestBlobHomesHeap(t *testing.T) {
	before := liveHeap()
	h := &blobHomes{}
	for i := range 8 * maxHomes {
		img := i / 4 // a config and three layers an image
		ref, err := name.ParseReference(fmt.Sprintf("127.0.0.1:5000/mirror/vendor-%d/operand-%d@sha256:%x",
			img%50, img, sha256.Sum256([]byte(fmt.Sprint(img)))), name.Insecure)
		require.NoError(t, err)
		repo := ref.Context()
		k, ok := homeKeyOf(repo.Registry, v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", sha256.Sum256([]byte(fmt.Sprint("blob", i))))})
		require.True(t, ok)
		h.store(k, repo)
	}
	held := int64(liveHeap()) - int64(before)
	n := h.len()
	t.Logf("%d blobs remembered: %d bytes of heap (%.0f a blob)", n, held, float64(held)/float64(n))
	require.LessOrEqual(t, n, 2*maxHomes)
	assert.Less(t, held, int64(2*maxHomes*150), "heap held by the blob homes")
}

// len is the number of blobs remembered.
func (h *blobHomes) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, g := range h.regs {
		n += len(g.cur) + len(g.old)
	}
	return n
}
