package layerfs

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/gzip"
)

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func expectOf(comp, data []byte) Expect {
	d, u := sha256.Sum256(comp), sha256.Sum256(data)
	return Expect{Digest: "sha256:" + hex.EncodeToString(d[:]), Size: int64(len(comp)), DiffID: "sha256:" + hex.EncodeToString(u[:])}
}

// Reading ahead gives the same bytes and the same verification as reading
// in the caller's goroutine, and a corrupt blob is still refused.
func TestReadAhead(t *testing.T) {
	data := make([]byte, 3*aheadSize*aheadBuffers+12345)
	_, _ = rand.Read(data[:len(data)/2]) // half incompressible, half zeros
	comp := gzipped(t, data)
	want := expectOf(comp, data)

	lr, err := NewReader(io.NopCloser(bytes.NewReader(comp)), want, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	lr.ReadAhead()
	got, err := io.ReadAll(lr)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("read %d bytes, not the %d written", len(got), len(data))
	}
	if err := lr.Verify(); err != nil {
		t.Fatal(err)
	}
	if err := lr.Close(); err != nil {
		t.Fatal(err)
	}

	bad := append([]byte(nil), comp...)
	bad[len(bad)/2] ^= 0xff
	lr, err = NewReader(io.NopCloser(bytes.NewReader(bad)), want, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	lr.ReadAhead()
	_, err = io.ReadAll(lr)
	if err == nil {
		err = lr.Verify()
	}
	if err == nil {
		t.Fatal("a corrupt blob was accepted")
	}
	_ = lr.Close()
}

// blockingBody serves some bytes, then blocks until closed, as a stalled
// download does.
type blockingBody struct {
	r      io.Reader
	closed chan struct{}
}

func (b *blockingBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if n > 0 || !errors.Is(err, io.EOF) {
		return n, err
	}
	<-b.closed
	return 0, errors.New("closed")
}

func (b *blockingBody) Close() error { close(b.closed); return nil }

// Closing a reader whose goroutine waits on the network ends the goroutine.
func TestReadAheadCloseWhileBlocked(t *testing.T) {
	data := make([]byte, 4*aheadSize)
	comp := gzipped(t, data)
	body := &blockingBody{r: bytes.NewReader(comp[:len(comp)/2]), closed: make(chan struct{})}
	before := runtime.NumGoroutine()
	lr, err := NewReader(body, expectOf(comp, data), 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	lr.ReadAhead()
	if _, err := lr.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = lr.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // only a hang
		t.Fatal("Close did not return while the download was stalled")
	}
	// The goroutine that called Close may take a moment to end itself.
	after := runtime.NumGoroutine()
	for deadline := time.Now().Add(time.Minute); after > before && time.Now().Before(deadline); after = runtime.NumGoroutine() { // polls: a minute only bounds a leak
		time.Sleep(10 * time.Millisecond)
	}
	if after > before {
		t.Errorf("%d goroutines left running after Close", after-before)
	}
}

func TestNoDiffIDStillChecksTheBlob(t *testing.T) {
	t.Parallel()
	data := bytes.Repeat([]byte("index database page\n"), 1000)
	comp := gzipped(t, data)
	read := func(want Expect, opts ReaderOptions) error {
		lr, err := NewReaderWith(io.NopCloser(bytes.NewReader(comp)), want, 1<<30, opts)
		if err != nil {
			return err
		}
		defer lr.Close()
		got, err := io.ReadAll(lr)
		if err != nil {
			return err
		}
		if !bytes.Equal(got, data) {
			t.Fatal("content differs")
		}
		return lr.Verify()
	}
	badDiff := expectOf(comp, data)
	badDiff.DiffID = "sha256:" + strings.Repeat("0", 64)
	if err := read(badDiff, ReaderOptions{}); err == nil || !strings.Contains(err.Error(), "diff_id") {
		t.Errorf("a wrong diff_id is not reported without NoDiffID: %v", err)
	}
	if err := read(badDiff, ReaderOptions{NoDiffID: true}); err != nil {
		t.Errorf("NoDiffID still checks the diff_id: %v", err)
	}
	badBlob := expectOf(comp, data)
	badBlob.Digest = "sha256:" + strings.Repeat("1", 64)
	if err := read(badBlob, ReaderOptions{NoDiffID: true}); err == nil || !strings.Contains(err.Error(), "blob has digest") {
		t.Errorf("NoDiffID let a blob with the wrong digest through: %v", err)
	}
}
