package layerfs

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/opmkit/opm/internal/image/blockgzip"
)

// Expect is what a layer blob must match: its digest and size from the
// manifest, and (optionally) the uncompressed diff_id from the config.
// Digests are "sha256:<hex>".
type Expect struct {
	Digest string
	Size   int64
	DiffID string
}

// Reader streams one layer's uncompressed tar. Read it, then call Verify to
// check digest, size and diff_id (Verify drains what is left), then Close.
type Reader struct {
	want Expect
	max  int64
	hint string // the flag that raises max, for messages

	raw      io.ReadCloser
	comp     *CountingReader // compressed bytes, hashed
	decomp   io.Reader
	closer   func()
	ahead    *aheadReader  // decompressing in the background (ReadAhead)
	members  *memberReader // gzip members, when asked for
	blocks   *blockgzip.Reader
	n        int64 // uncompressed bytes read
	diffHash hash.Hash
	err      error
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}
)

// NewReader wraps a compressed layer blob. The compression is detected from
// the content, because docker-archive layers are often plain tar under a gzip
// media type. max caps the compressed and the uncompressed size.
func NewReader(rc io.ReadCloser, want Expect, max int64) (*Reader, error) {
	return NewReaderHint(rc, want, max, LimitHint)
}

// NewReaderHint is NewReader naming hint as the flag that raises max.
func NewReaderHint(rc io.ReadCloser, want Expect, max int64, hint string) (*Reader, error) {
	return NewReaderWith(rc, want, max, ReaderOptions{Hint: hint})
}

// ReaderOptions tune NewReaderWith.
type ReaderOptions struct {
	// Hint names the flag that raises max, for messages.
	Hint string
	// Members records the members of a gzip blob (Reader.Members).
	Members bool
	// Sum, when set, sums the content of each member of opm's block gzip
	// format (GzipMember.Sum), on several goroutines at once. Members of
	// other gzip streams are not summed: only opm's blocks are ever copied.
	Sum func([]byte) uint64
	// Copy, when set, receives the compressed bytes as they are read.
	Copy io.Writer
	// NoDiffID skips hashing the uncompressed stream against the config's
	// diff_id; the compressed digest, which the manifest pins, is still
	// checked, and it alone fixes what the stream holds. For a caller that
	// reads one file out of a layer it then replaces (an index database of
	// hundreds of MB), the diff_id only says whether the old config was
	// consistent, at the price of hashing every uncompressed byte.
	NoDiffID bool
}

// GzipMember is one member of a gzip blob made of several (as RFC 1952
// allows and every gzip reader reads): where its compressed bytes are in
// the blob, how much it holds, a hash of what it holds, and the extra
// field of its header.
type GzipMember = blockgzip.Member

// NewReaderWith is NewReader with options.
func NewReaderWith(rc io.ReadCloser, want Expect, max int64, opts ReaderOptions) (*Reader, error) {
	hint := opts.Hint
	if hint == "" {
		hint = LimitHint
	}
	if want.Size > max {
		rc.Close()
		return nil, Errorf(want.Digest, "", "compressed size %s is over the %s limit (%s)", HumanSize(want.Size), HumanSize(max), hint)
	}
	lr := &Reader{want: want, max: max, hint: hint, raw: rc}
	if opts.NoDiffID {
		lr.want.DiffID = ""
	} else {
		lr.diffHash = sha256.New()
	}
	lr.comp = &CountingReader{R: rc, H: sha256.New(), Limit: want.Size, Copy: opts.Copy}
	br := bufio.NewReaderSize(lr.comp, 64<<10)
	head, _ := br.Peek(4)
	switch {
	case bytes.HasPrefix(head, gzipMagic):
		if peek, _ := br.Peek(64); blockgzip.Detect(peek) {
			// opm's own format: its members decompress on every core.
			z := blockgzip.NewReader(br, opts.Sum)
			lr.decomp, lr.closer, lr.blocks = z, z.Close, z
			break
		}
		zr, err := gzip.NewReader(br)
		if err != nil {
			rc.Close()
			return nil, Errorf(want.Digest, "", "bad gzip stream: %v", err)
		}
		lr.decomp, lr.closer = zr, func() { _ = zr.Close() }
		if opts.Members {
			m := &memberReader{br: br, comp: lr.comp, zr: zr}
			m.cur.Extra = bytes.Clone(zr.Extra)
			zr.Multistream(false)
			lr.members, lr.decomp = m, m
		}
	case bytes.HasPrefix(head, zstdMagic):
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(64<<20))
		if err != nil {
			rc.Close()
			return nil, Errorf(want.Digest, "", "bad zstd stream: %v", err)
		}
		lr.decomp, lr.closer = zr, zr.Close
	default:
		lr.decomp = br
	}
	return lr, nil
}

// Members are the gzip members read, once Verify has read the whole blob
// (nil unless ReaderOptions.Members was set and the blob is gzip).
func (lr *Reader) Members() []GzipMember {
	if lr.blocks != nil {
		return lr.blocks.Members()
	}
	if lr.members == nil {
		return nil
	}
	return lr.members.members
}

// memberReader reads a gzip stream one member at a time, noting where each
// starts and ends in the compressed blob. The gzip reader reads through
// br's ReadByte, never past the member it decodes, so the position in the
// blob is what was counted less what br holds.
type memberReader struct {
	br      *bufio.Reader
	comp    *CountingReader
	zr      *gzip.Reader
	cur     GzipMember
	members []GzipMember
}

func (m *memberReader) offset() int64 { return m.comp.N - int64(m.br.Buffered()) }

func (m *memberReader) Read(p []byte) (int, error) {
	for {
		n, err := m.zr.Read(p)
		m.cur.USize += int64(n)
		if err != io.EOF {
			return n, err
		}
		m.cur.Size = m.offset() - m.cur.Offset
		m.members = append(m.members, m.cur)
		if _, perr := m.br.Peek(1); perr != nil {
			return n, io.EOF
		}
		m.cur = GzipMember{Offset: m.offset()}
		if err := m.zr.Reset(m.br); err != nil {
			return n, fmt.Errorf("gzip member at byte %d: %w", m.cur.Offset, err)
		}
		m.zr.Multistream(false)
		m.cur.Extra = bytes.Clone(m.zr.Extra)
		if n > 0 {
			return n, nil
		}
	}
}

// ReadAhead makes the reader fetch and decompress in a goroutine of its
// own, a few hundred KiB ahead of Read, so that for a large layer the
// download, the digest of the compressed bytes and decompression run
// beside the diff_id hash and whatever the caller does with the tar.
// Call it before the first Read.
func (lr *Reader) ReadAhead() {
	if lr.ahead == nil && lr.blocks == nil {
		lr.ahead = newAheadReader(lr.decomp)
		lr.decomp = lr.ahead
	}
}

// Digest is the layer's (compressed) digest.
func (lr *Reader) Digest() string { return lr.want.Digest }

func (lr *Reader) Read(p []byte) (int, error) {
	if lr.err != nil {
		return 0, lr.err
	}
	n, err := lr.decomp.Read(p)
	lr.n += int64(n)
	if lr.diffHash != nil {
		lr.diffHash.Write(p[:n])
	}
	if lr.n > lr.max {
		lr.err = Errorf(lr.want.Digest, "", "uncompressed size is over the %s limit (%s)", HumanSize(lr.max), lr.hint)
		return n, lr.err
	}
	if err != nil && err != io.EOF {
		var le *LayerError
		if errors.As(err, &le) {
			lr.err = err
		} else {
			lr.err = fmt.Errorf("layer %s: %w", lr.want.Digest, err)
		}
		return n, lr.err
	}
	return n, err
}

// Verify reads what is left and checks the compressed digest and size and,
// when known, the uncompressed diff_id.
func (lr *Reader) Verify() error {
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return err
	}
	if _, err := io.Copy(io.Discard, lr.comp); err != nil {
		var le *LayerError
		if errors.As(err, &le) {
			return err
		}
		return fmt.Errorf("layer %s: %w", lr.want.Digest, err)
	}
	d := lr.want.Digest
	if lr.comp.N != lr.want.Size {
		return Errorf(d, "", "blob is %d bytes, the manifest says %d", lr.comp.N, lr.want.Size)
	}
	if got := Sum(lr.comp.H); got != d {
		return Errorf(d, "", "blob has digest %s", got)
	}
	if lr.want.DiffID != "" {
		if got := Sum(lr.diffHash); got != lr.want.DiffID {
			return Errorf(d, "", "uncompressed digest %s does not match the config's diff_id %s", got, lr.want.DiffID)
		}
	}
	return nil
}

// Close releases the stream.
func (lr *Reader) Close() error {
	// Closing the blob first ends a read a goroutine (ReadAhead, the
	// block reader) may be blocked in; the decompressor is released once
	// it has stopped.
	if lr.ahead != nil {
		lr.ahead.stopReading()
	}
	err := lr.raw.Close()
	if lr.ahead != nil {
		lr.ahead.wait()
		lr.ahead = nil
	}
	if lr.closer != nil {
		lr.closer()
		lr.closer = nil
	}
	return err
}

// Sum formats a sha256 hash as a digest string.
func Sum(h hash.Hash) string { return "sha256:" + hex.EncodeToString(h.Sum(nil)) }

// CountingReader hashes and counts what is read through it, and refuses to
// read past Limit (the descriptor's size) so a lying registry cannot stream
// forever.
type CountingReader struct {
	R     io.Reader
	H     hash.Hash
	N     int64
	Limit int64
	// Copy, when set, is written what is read.
	Copy io.Writer
}

func (c *CountingReader) Read(p []byte) (int, error) {
	if c.N > c.Limit {
		return 0, fmt.Errorf("blob is larger than the %d bytes the manifest says", c.Limit)
	}
	if rem := c.Limit + 1 - c.N; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.R.Read(p)
	c.N += int64(n)
	c.H.Write(p[:n])
	if c.Copy != nil && n > 0 {
		if _, werr := c.Copy.Write(p[:n]); werr != nil {
			return n, fmt.Errorf("copy of the blob: %w", werr)
		}
	}
	if c.N > c.Limit {
		return n, fmt.Errorf("blob is larger than the %d bytes the manifest says", c.Limit)
	}
	return n, err
}

// aheadReader reads its source in a goroutine into a few buffers, ahead of
// the consumer.
type aheadReader struct {
	full chan []byte // filled buffers, in order; closed after the last
	free chan []byte // buffers to fill
	stop chan struct{}
	done chan struct{}
	err  error  // the source's final error, set before full is closed
	buf  []byte // the buffer being consumed
	cur  []byte // what is left of it
}

const (
	aheadBuffers = 4
	aheadSize    = 256 << 10
)

func newAheadReader(r io.Reader) *aheadReader {
	a := &aheadReader{
		full: make(chan []byte, aheadBuffers),
		free: make(chan []byte, aheadBuffers),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	for range aheadBuffers - 1 {
		a.free <- make([]byte, aheadSize)
	}
	go a.run(r, make([]byte, aheadSize))
	return a
}

func (a *aheadReader) run(r io.Reader, buf []byte) {
	defer close(a.done)
	defer close(a.full)
	for {
		n, err := io.ReadFull(r, buf)
		if n > 0 {
			select {
			case a.full <- buf[:n]:
			case <-a.stop:
				return
			}
		}
		if err != nil {
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			a.err = err
			return
		}
		select {
		case buf = <-a.free:
		case <-a.stop:
			return
		}
	}
}

func (a *aheadReader) Read(p []byte) (int, error) {
	if len(a.cur) == 0 {
		if a.buf != nil {
			a.free <- a.buf[:cap(a.buf)]
			a.buf = nil
		}
		b, ok := <-a.full
		if !ok {
			return 0, a.err
		}
		a.buf, a.cur = b, b
	}
	n := copy(p, a.cur)
	a.cur = a.cur[n:]
	return n, nil
}

func (a *aheadReader) stopReading() {
	select {
	case <-a.stop:
	default:
		close(a.stop)
	}
}

func (a *aheadReader) wait() { <-a.done }
