package iostreams

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// endless is a reader that never ends.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	return len(p), nil
}

// A pipe whose writer never closes: cancelling the context ends the read
// at once, as --timeout and SIGTERM do.
func TestReadAllStopsWhenCancelled(t *testing.T) {
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	go func() { _, _ = pw.Write([]byte("schema: olm.template.basic\n")) }()
	ctx, cancel := context.WithCancelCause(context.Background())
	cause := errors.New("stopped by the test")
	time.AfterFunc(100*time.Millisecond, func() { cancel(cause) })
	// The pipe never ends: ReadAll returning at all is the cancel's
	// doing. The minutes only catch a hang, whatever the load.
	result := make(chan error, 1)
	go func() {
		_, err := ReadAll(ctx, pr, 0)
		result <- err
	}()
	var err error
	select {
	case err = <-result:
	case <-time.After(2 * time.Minute):
		t.Fatal("ReadAll still reads 2 minutes after the cancel")
	}
	if !errors.Is(err, cause) {
		t.Fatalf("got %v, want the context's cause", err)
	}

	// Already cancelled: nothing is read.
	if _, err := ReadAll(ctx, strings.NewReader("x"), 0); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v for a cancelled context", err)
	}
}

// A reader that never ends is refused once past the bound, not read until
// memory runs out.
func TestReadAllRefusesPastTheBound(t *testing.T) {
	_, err := ReadAll(context.Background(), endless{}, 1<<20)
	if !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("got %v, want ErrInputTooLarge", err)
	}
	if !strings.Contains(err.Error(), "1048576 bytes") {
		t.Errorf("the error does not say the bound: %v", err)
	}
}

// Refusing a reader that never ends holds about the bound, not twice or
// three times it as one doubling buffer did (2.1 GB for --max-input-size's
// 1 GiB).
func TestReadAllRefusesWithinTheBoundsMemory(t *testing.T) {
	const limit = 64 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadAll(context.Background(), endless{}, limit)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrInputTooLarge) {
		t.Fatalf("got %v", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > limit+limit/4 {
		t.Errorf("refusing past %d MiB allocated %d MiB", limit>>20, got>>20)
	}
	// Within the bound, the bytes come back whole, in order.
	in := strings.Repeat("0123456789", 1<<20) // 10 MiB: several chunks
	got, err := ReadAll(context.Background(), strings.NewReader(in), limit)
	if err != nil || string(got) != in {
		t.Errorf("10 MiB read back as %d bytes, equal %v, %v", len(got), string(got) == in, err)
	}
}

func TestReadAllWithinTheBound(t *testing.T) {
	for _, c := range []struct {
		in    string
		limit int64
	}{{"abc", 3}, {"abc", 0}, {"abc", -1}, {"", 1}} {
		got, err := ReadAll(context.Background(), strings.NewReader(c.in), c.limit)
		if err != nil || string(got) != c.in {
			t.Errorf("ReadAll(%q, %d) = %q, %v", c.in, c.limit, got, err)
		}
	}
	if _, err := ReadAll(context.Background(), strings.NewReader("abcd"), 3); !errors.Is(err, ErrInputTooLarge) {
		t.Errorf("4 bytes with a bound of 3: got %v", err)
	}
}

func TestReadFile(t *testing.T) {
	t.Parallel()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := ReadFile(context.Background(), p, 10); err != nil || string(data) != "0123456789" {
		t.Fatalf("within the bound: %q, %v", data, err)
	}
	_, err := ReadFile(context.Background(), p, 9)
	if !errors.Is(err, ErrInputTooLarge) || !strings.Contains(err.Error(), "--max-input-size") {
		t.Fatalf("past the bound: %v, want ErrInputTooLarge naming --max-input-size", err)
	}
	if _, err := ReadFile(context.Background(), p+".missing", 0); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a missing file: %v", err)
	}
}
