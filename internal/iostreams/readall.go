package iostreams

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// DefaultMaxInput is the default bound of ReadAll's callers' size flags
// (--max-input-size): the size of the largest catalog file opm reads.
const DefaultMaxInput int64 = 1 << 30

// ErrInputTooLarge means an input went past its size bound.
var ErrInputTooLarge = errors.New("input larger than its bound")

// ReadAll reads r to its end, as io.ReadAll, but gives up when ctx ends
// (--timeout, SIGINT, SIGTERM) and refuses an input longer than limit bytes
// (limit <= 0: no bound). A stdin that never ends or never closes would
// otherwise hold a command past its timeout and fill memory.
//
// On ctx's end ReadAll returns at once; the read already under way cannot
// be interrupted and finishes in the background (the command is exiting).
func ReadAll(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	src := r
	if limit > 0 {
		src = io.LimitReader(r, limit+1)
	}
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		data, err := io.ReadAll(src)
		done <- result{data, err}
	}()
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case res := <-done:
		if res.err != nil {
			return nil, res.err
		}
		if limit > 0 && int64(len(res.data)) > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrInputTooLarge, limit)
		}
		return res.data, nil
	}
}
