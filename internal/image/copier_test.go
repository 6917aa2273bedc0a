package image

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCopierKeepsFewDestinations: a Copier writing to thousands of
// repositories keeps the state of the last maxPushers only (its memory
// does not grow with the images of a mirror), and a repository written
// again soon after reuses its own.
func TestCopierKeepsFewDestinations(t *testing.T) {
	t.Parallel()
	cp := mustClient(t, Options{UseHTTP: true}).NewCopier()
	ctx := context.Background()
	dest := func(i int) destination {
		d, err := cp.dest(ctx, mustRef(t, fmt.Sprintf("127.0.0.1:5000/mirror/op-%05d", i)))
		require.NoError(t, err)
		return d
	}
	first := dest(0)
	assert.Same(t, first, dest(0), "the same repository, the same state")
	for i := 1; i <= 3*maxPushers; i++ {
		dest(i)
	}
	assert.Len(t, cp.pushers, maxPushers)
	assert.Equal(t, maxPushers, cp.recent.Len())
	last := dest(3 * maxPushers)
	assert.Same(t, last, dest(3*maxPushers))
	assert.NotSame(t, first, dest(0), "the oldest was dropped")
}
