package mirror

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestParallelLimitAndOrder: at most limit calls run at once, and
// limit 1 calls one index after another, in order.
func TestParallelLimitAndOrder(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{0, 1, 3, 8} {
		var now, most atomic.Int64
		var mu sync.Mutex
		var order []int
		// Each call waits for the next to start (or for every index to
		// have started), so that calls overlap whenever limit allows.
		started := make([]chan struct{}, 41)
		for i := range started {
			started[i] = make(chan struct{})
		}
		close(started[40])
		done := make([]bool, 40)
		k, err := parallel(context.Background(), 40, limit, func(i int) error {
			n := now.Add(1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			mu.Lock()
			order = append(order, i)
			mu.Unlock()
			close(started[i])
			if limit > 1 {
				<-started[i+1]
			}
			done[i] = true
			now.Add(-1)
			return nil
		})
		require.NoError(t, err)
		assert.Equal(t, 40, k)
		assert.NotContains(t, done, false, "every index ran")
		assert.LessOrEqual(t, most.Load(), int64(max(limit, 1)), "limit %d", limit)
		if limit <= 1 {
			assert.Equal(t, int64(1), most.Load())
			for i, got := range order {
				assert.Equal(t, i, got)
			}
		} else {
			assert.Greater(t, most.Load(), int64(1), "limit %d: calls overlap", limit)
		}
	}
}

// TestParallelFirstError: whatever the order the calls end in, the
// error returned is the lowest index's that failed, every index below
// it ran, and those well above it did not start.
func TestParallelFirstError(t *testing.T) {
	t.Parallel()
	for _, limit := range []int{1, 4} {
		ran := make([]atomic.Bool, 100)
		// With several at once, index 30 fails only once 31 is about to
		// fail: a later index fails first; those after 31 wait for it.
		failing := make(chan struct{})
		k, err := parallel(context.Background(), 100, limit, func(i int) error {
			ran[i].Store(true)
			switch {
			case i == 30:
				if limit > 1 {
					<-failing
				}
				return fmt.Errorf("index %d", i)
			case i == 31:
				if limit > 1 {
					close(failing)
				}
				return fmt.Errorf("index %d", i)
			case i > 31 && limit > 1:
				<-failing
			}
			return nil
		})
		require.EqualError(t, err, "index 30", "limit %d", limit)
		assert.Equal(t, 30, k)
		for i := range 30 {
			assert.True(t, ran[i].Load(), "limit %d: index %d ran", limit, i)
		}
		for i := 60; i < 100; i++ {
			assert.False(t, ran[i].Load(), "limit %d: index %d started after the failures", limit, i)
		}
		if limit == 1 {
			assert.False(t, ran[31].Load(), "one at a time, nothing runs after the first failure")
		}
	}
}

// TestParallelCancelled: a cancelled context starts nothing more; the
// error is the context's.
func TestParallelCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int64
	k, err := parallel(ctx, 1000, 4, func(i int) error {
		if calls.Add(1) == 10 {
			cancel()
		}
		return nil
	})
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, k, 1000)
	assert.Less(t, calls.Load(), int64(20), "it stopped at once")
	k, err = parallel(ctx, 0, 4, func(int) error { return errors.New("never called") })
	assert.NoError(t, err)
	assert.Zero(t, k)
}
