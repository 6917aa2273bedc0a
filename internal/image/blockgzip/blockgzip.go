// Package blockgzip is opm's gzip format for large layers (index
// databases): a series of gzip members, one per 1 MiB block of input, each
// compressed on its own. Any gzip reader reads it as one stream (RFC 1952
// allows several members). Each member's header carries an extra field
// (subfield "OP") naming the format, a fingerprint of the compressor and
// the member's compressed size, so that opm can decompress the members on
// every core, and can copy a member of an older layer as it is when the
// block it holds has not changed: the compressor makes the same member of
// the same block, so the result does not depend on what was copied.
package blockgzip

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"runtime"
	"sync"

	"github.com/klauspost/compress/flate"
)

// BlockSize is the input of one member (the last may hold less).
const BlockSize = 1 << 20

const (
	level   = flate.DefaultCompression
	version = "opm2"
	// The fixed header: magic, deflate, FEXTRA only, no time, no extra
	// flags, OS unknown; then XLEN and the subfield.
	fixedHeader = "\x1f\x8b\x08\x04\x00\x00\x00\x00\x00\xff"
	// subfield: 'O' 'P', LEN, then version, 8 bytes of fingerprint and
	// the compressed size (uint32, little-endian).
	dataLen  = len(version) + 8 + 4
	extraLen = 4 + dataLen
	// HeaderLen is the length of a member's header.
	headerLen = len(fixedHeader) + 2 + extraLen
)

// identity is the subfield up to the compressed size: what members of
// the same compressor have in common.
var identity = sync.OnceValue(func() []byte {
	// The fingerprint: what the compressor makes of a fixed sample.
	var sample bytes.Buffer
	for i := 0; sample.Len() < 256<<10; i++ {
		fmt.Fprintf(&sample, "%d %x opm index database sample\n", i, i*i*7919)
	}
	out, err := deflate(sample.Bytes())
	if err != nil {
		panic(err) // compressing into memory cannot fail
	}
	fp := sha256.Sum256(out)
	id := []byte{'O', 'P'}
	id = binary.LittleEndian.AppendUint16(id, uint16(dataLen))
	id = append(id, version...)
	return append(id, fp[:8]...)
})

var flatePool = sync.Pool{New: func() any {
	w, err := flate.NewWriter(io.Discard, level)
	if err != nil {
		panic(err) // the level is valid
	}
	return w
}}

func deflate(block []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(block)/3 + 64)
	w := flatePool.Get().(*flate.Writer)
	defer flatePool.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(block); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Compress makes the member holding block (at most BlockSize bytes).
func Compress(block []byte) ([]byte, error) {
	if len(block) > BlockSize {
		return nil, fmt.Errorf("block of %d bytes is over %d", len(block), BlockSize)
	}
	body, err := deflate(block)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 0, headerLen+len(body)+8)
	out = append(out, fixedHeader...)
	out = binary.LittleEndian.AppendUint16(out, uint16(extraLen))
	out = append(out, identity()...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(body)))
	out = append(out, body...)
	out = binary.LittleEndian.AppendUint32(out, crc32.ChecksumIEEE(block))
	return binary.LittleEndian.AppendUint32(out, uint32(len(block))), nil
}

// Ours says whether a member's extra field is this compressor's: a member
// with it is what Compress makes of the same block.
func Ours(extra []byte) bool {
	id := identity()
	return len(extra) == extraLen && bytes.Equal(extra[:len(id)], id)
}

// Detect says whether a blob starting with head is in this format (of
// any compressor version): its first member has the format's header.
func Detect(head []byte) bool {
	_, ok := parseHeader(head)
	return ok
}

// parseHeader checks a member header and returns its compressed size.
func parseHeader(h []byte) (uint32, bool) {
	if len(h) < headerLen || string(h[:len(fixedHeader)]) != fixedHeader {
		return 0, false
	}
	x := h[len(fixedHeader):]
	if binary.LittleEndian.Uint16(x) != uint16(extraLen) || x[2] != 'O' || x[3] != 'P' ||
		binary.LittleEndian.Uint16(x[4:]) != uint16(dataLen) || string(x[6:6+len(version)]) != version {
		return 0, false
	}
	return binary.LittleEndian.Uint32(x[6+dataLen-4:]), true
}

// Member is one member of a blob: where its compressed bytes are, how
// much it holds, a hash of what it holds, and its header's extra field.
type Member struct {
	Offset, Size int64
	USize        int64
	Sum          uint64
	Extra        []byte
}

// Reader decompresses a blob in this format, its members on every core.
type Reader struct {
	queue chan *pending
	stop  chan struct{}
	done  chan struct{}
	buf   []byte // the block being read, back to outPool when done
	rest  []byte
	err   error

	mu      sync.Mutex
	members []Member
}

type pending struct {
	ready chan struct{}
	out   []byte
	err   error
}

// Buffers for compressed members and decompressed blocks: a large layer
// is hundreds of blocks, which should not all become garbage.
var (
	outPool  = sync.Pool{New: func() any { return make([]byte, 0, BlockSize+1) }}
	bodyPool = sync.Pool{New: func() any { return make([]byte, 0, BlockSize/2) }}
)

var errFormat = errors.New("not a member of opm's block gzip format")

// NewReader reads the members from r, which is at the start of the blob,
// summing each one's content with sum (Member.Sum; nil sums nothing; it is
// called on several goroutines at once). Close it when done.
func NewReader(r io.Reader, sum func([]byte) uint64) *Reader {
	z := &Reader{queue: make(chan *pending, 2*runtime.GOMAXPROCS(0)), stop: make(chan struct{}), done: make(chan struct{})}
	go z.dispatch(r, sum)
	return z
}

// dispatch reads the members one after the other and hands each to a
// goroutine that decompresses and checks it.
func (z *Reader) dispatch(r io.Reader, sumOf func([]byte) uint64) {
	defer close(z.done)
	defer close(z.queue)
	var off int64
	fail := func(err error) {
		p := &pending{ready: make(chan struct{}), err: err}
		close(p.ready)
		select {
		case z.queue <- p:
		case <-z.stop:
		}
	}
	for i := 0; ; i++ {
		head := make([]byte, headerLen)
		n, err := io.ReadFull(r, head)
		if n == 0 && err == io.EOF && i > 0 {
			return
		}
		if err != nil {
			fail(fmt.Errorf("gzip member %d at byte %d: %w", i, off, noEOF(err)))
			return
		}
		size, ok := parseHeader(head)
		if !ok {
			fail(fmt.Errorf("gzip member %d at byte %d: %w", i, off, errFormat))
			return
		}
		if int64(size) > 2*BlockSize {
			fail(fmt.Errorf("gzip member %d at byte %d: compressed size %d is more than a block can need", i, off, size))
			return
		}
		body := bodyPool.Get().([]byte)
		if cap(body) < int(size)+8 {
			body = make([]byte, 0, int(size)+8)
		}
		body = body[:int(size)+8]
		if _, err := io.ReadFull(r, body); err != nil {
			fail(fmt.Errorf("gzip member %d at byte %d: %w", i, off, noEOF(err)))
			return
		}
		m := Member{Offset: off, Size: int64(headerLen) + int64(len(body)), Extra: bytes.Clone(head[len(fixedHeader)+2:])}
		off += m.Size
		z.mu.Lock()
		z.members = append(z.members, m)
		z.mu.Unlock()
		p := &pending{ready: make(chan struct{})}
		select {
		case z.queue <- p: // waits while enough members are in flight
		case <-z.stop:
			return
		}
		go func() {
			defer close(p.ready)
			p.out, p.err = inflate(body)
			bodyPool.Put(body[:0]) //nolint:staticcheck // a slice is what the pool holds
			if p.err != nil {
				p.err = fmt.Errorf("gzip member %d at byte %d: %w", i, m.Offset, p.err)
				return
			}
			var sum uint64
			if sumOf != nil {
				sum = sumOf(p.out)
			}
			z.mu.Lock()
			z.members[i].USize = int64(len(p.out))
			z.members[i].Sum = sum
			z.mu.Unlock()
		}()
	}
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// inflate decompresses one member's deflate data and checks its trailer.
func inflate(body []byte) ([]byte, error) {
	data, trailer := body[:len(body)-8], body[len(body)-8:]
	fr := flate.NewReader(bytes.NewReader(data))
	defer fr.Close()
	// One byte of room more than a block: filling it means too much.
	out := outPool.Get().([]byte)[:0]
	for {
		n, err := fr.Read(out[len(out):cap(out)])
		out = out[:len(out)+n]
		if len(out) > BlockSize {
			return nil, fmt.Errorf("holds more than a %d-byte block", BlockSize)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	if crc32.ChecksumIEEE(out) != binary.LittleEndian.Uint32(trailer) || uint32(len(out)) != binary.LittleEndian.Uint32(trailer[4:]) {
		return nil, errors.New("checksum or size does not match the data")
	}
	return out, nil
}

// Read reads the decompressed blob.
func (z *Reader) Read(p []byte) (int, error) {
	for len(z.rest) == 0 {
		if z.err != nil {
			return 0, z.err
		}
		next, ok := <-z.queue
		if !ok {
			z.err = io.EOF
			return 0, io.EOF
		}
		<-next.ready
		if next.err != nil {
			z.err = next.err
			return 0, z.err
		}
		if z.buf != nil {
			outPool.Put(z.buf[:0]) //nolint:staticcheck // a slice is what the pool holds
		}
		z.buf, z.rest = next.out, next.out
	}
	n := copy(p, z.rest)
	z.rest = z.rest[n:]
	return n, nil
}

// Members are the members read; complete once Read has returned io.EOF.
func (z *Reader) Members() []Member {
	z.mu.Lock()
	defer z.mu.Unlock()
	return append([]Member(nil), z.members...)
}

// Close stops reading ahead; it returns once the reading goroutine has
// stopped (close the underlying blob first if a read of it may block).
func (z *Reader) Close() {
	select {
	case <-z.stop:
	default:
		close(z.stop)
	}
	// Let go of members waiting to be read, so that dispatch can end.
	for range z.queue { //nolint:revive // draining
	}
	<-z.done
}

// HeaderLen is the length of a member's header, and FixedHeaderLen that of
// its part before the extra field's length.
const (
	HeaderLen      = headerLen
	FixedHeaderLen = len(fixedHeader)
)

// ParseHeader returns the compressed size of the body that follows a
// member's header (before its 8-byte trailer), or false when h is not the
// header of a member in this format.
func ParseHeader(h []byte) (uint32, bool) { return parseHeader(h) }
