package iostreams

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
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
		data, err := readChunks(src, limit)
		done <- result{data, err}
	}()
	select {
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	case res := <-done:
		return res.data, res.err
	}
}

// readChunks reads r to its end in chunks and joins them once at the end,
// refusing more than limit bytes (limit <= 0: no bound) without joining.
// io.ReadAll doubles one buffer instead: refusing an endless stdin past a
// 1 GiB bound took 2.1 GB, where chunks hold the bound and one chunk.
func readChunks(r io.Reader, limit int64) ([]byte, error) {
	var chunks [][]byte
	size, total := 64<<10, int64(0)
	for {
		buf := make([]byte, size)
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			chunks = append(chunks, buf[:n])
			total += int64(n)
		}
		if limit > 0 && total > limit {
			return nil, fmt.Errorf("%w: more than %d bytes", ErrInputTooLarge, limit)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(size*2, 16<<20)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	out := make([]byte, 0, total)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil // collectable as soon as copied
	}
	return out, nil
}

// ReadFile is ReadAll of the file at path. Past limit its error names the
// --max-input-size flag that raises it.
func ReadFile(ctx context.Context, path string, limit int64) ([]byte, error) {
	in, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	data, err := ReadAll(ctx, in, limit)
	return data, FlagHint(err)
}

// FlagHint adds to an ErrInputTooLarge error how to get past the bound.
func FlagHint(err error) error {
	if errors.Is(err, ErrInputTooLarge) {
		return fmt.Errorf("%w (--max-input-size; raise it, or 0 for no limit)", err)
	}
	return err
}

// ReadInput reads a command's input: the file named, or in for "" and "-"
// (source says which: the file, or "stdin"), bounded by limit and stopped
// by ctx as ReadAll is (a FIFO or a stdin that never ends would otherwise
// outlive --timeout and fill memory). what names the input in errors
// ("template", "catalog").
func ReadInput(ctx context.Context, in io.Reader, file, what string, limit int64) (data []byte, source string, err error) {
	if file == "" || file == "-" {
		data, err := ReadAll(ctx, in, limit)
		if err != nil {
			return nil, "stdin", fmt.Errorf("read the %s from stdin: %w", what, FlagHint(err))
		}
		return data, "stdin", nil
	}
	data, err = ReadFile(ctx, file, limit)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, file, fmt.Errorf("read %s %s: %w", what, file, err)
	}
	return data, file, nil
}
