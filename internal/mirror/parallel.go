package mirror

import (
	"context"
	"sync"
)

// parallel calls f(i) for each i in [0, n), at most limit at once (at
// least one), starting the indices in increasing order: with limit 1 it
// is a plain loop. Once f(k) fails, or ctx is done before an index
// starts (that index then fails with ctx's error), no index above k
// starts and those running finish. It returns the lowest index that
// failed and its error, or n and nil: the error a loop stopping at its
// first error returns, whatever the timing, as every index below the
// lowest failure ran to its end. f keeps its results by index; it must
// not write what another index reads.
func parallel(ctx context.Context, n, limit int, f func(i int) error) (int, error) {
	limit = max(1, min(limit, n))
	var (
		mu      sync.Mutex
		next    int
		failed  = n
		failErr error
		wg      sync.WaitGroup
	)
	fail := func(i int, err error) {
		mu.Lock()
		defer mu.Unlock()
		if i < failed {
			failed, failErr = i, err
		}
	}
	// take hands out the next index, none once one below it failed.
	take := func() (int, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= n || failed < n {
			return 0, false
		}
		next++
		return next - 1, true
	}
	for range limit {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i, ok := take()
				if !ok {
					return
				}
				if err := ctx.Err(); err != nil {
					fail(i, err)
					return
				}
				if err := f(i); err != nil {
					fail(i, err)
				}
			}
		}()
	}
	wg.Wait()
	return failed, failErr
}
