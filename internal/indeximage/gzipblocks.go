package indeximage

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/klauspost/compress/gzip"

	"github.com/opmkit/opm/internal/image/layerfs"
)

// The gzip database layer is a series of gzip members, one per 1 MiB of
// the tar stream, each compressed on its own (RFC 1952 allows several
// members; every gzip reader reads them as one stream). Blocks are
// compressed on every core, and the output depends on nothing but the
// input. Each member's header carries an extra field naming this format
// (blockTag), so that the next update of the image, which downloads the
// layer anyway, can tell which members it may copy as they are: adding a
// bundle to a large database changes a few percent of its 1 MiB blocks,
// and only those are compressed again.
const (
	gzipBlockSize = 1 << 20
	gzipLevel     = gzip.DefaultCompression
)

// blockTag is the extra field of every member opm writes: subfield "OP",
// then the format's version, the level, the block size and a fingerprint
// of the compressor (a member copied from an older layer must be what
// this compressor makes of the same bytes, or the same database would not
// always give the same digest).
var blockTag = sync.OnceValue(func() []byte {
	// The fingerprint: what the compressor makes of a fixed sample.
	var sample bytes.Buffer
	for i := 0; sample.Len() < 256<<10; i++ {
		fmt.Fprintf(&sample, "%d %x opm index database sample\n", i, i*i*7919)
	}
	out, err := compressMember(sample.Bytes(), nil)
	if err != nil {
		panic(err) // compressing into memory cannot fail
	}
	fp := sha256.Sum256(out)
	data := []byte("opm1")
	data = append(data, byte(gzipLevel+128))
	data = binary.LittleEndian.AppendUint32(data, gzipBlockSize)
	data = append(data, fp[:8]...)
	tag := []byte{'O', 'P'}
	tag = binary.LittleEndian.AppendUint16(tag, uint16(len(data)))
	return append(tag, data...)
})

// compressMember compresses block as one gzip member with the given extra
// field: no name, no time, the same bytes for the same block.
func compressMember(block, extra []byte) ([]byte, error) {
	var buf bytes.Buffer
	buf.Grow(len(block)/3 + 64)
	zw, err := gzip.NewWriterLevel(&buf, gzipLevel)
	if err != nil {
		return nil, err
	}
	zw.Extra = extra
	if _, err := zw.Write(block); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// previousLayer is a database layer opm wrote before, kept compressed in
// a file with the list of its members, whose blocks may be copied.
type previousLayer struct {
	file    string
	members []layerfs.GzipMember
	seed    maphash.Seed
}

// reusable says whether the members are all opm's blocks of this format:
// every one tagged, every one but the last a full block.
func reusable(members []layerfs.GzipMember) bool {
	if len(members) == 0 {
		return false
	}
	tag := blockTag()
	for i, m := range members {
		if !bytes.Equal(m.Extra, tag) {
			return false
		}
		if i < len(members)-1 && m.USize != gzipBlockSize {
			return false
		}
	}
	return true
}

// blockWriter is the io.WriteCloser that writes the members to w.
type blockWriter struct {
	w     io.Writer
	prev  *previousLayer
	old   *os.File
	buf   []byte
	index int

	queue chan *pending
	done  chan error
	pool  sync.Pool

	// Reused counts the blocks copied from the previous layer.
	Reused, Compressed int
}

type pending struct {
	ready chan struct{}
	out   []byte
	err   error
	// release returns out's buffer, when it came from the pool.
	release func()
}

func newBlockWriter(w io.Writer, prev *previousLayer) (*blockWriter, error) {
	bw := &blockWriter{w: w, queue: make(chan *pending, 2*runtime.GOMAXPROCS(0)), done: make(chan error, 1)}
	bw.pool.New = func() any { return make([]byte, 0, gzipBlockSize) }
	if prev != nil && reusable(prev.members) {
		f, err := os.Open(prev.file)
		if err != nil {
			return nil, err
		}
		bw.prev, bw.old = prev, f
	}
	bw.buf = bw.pool.Get().([]byte)[:0]
	go bw.drain()
	return bw, nil
}

// drain writes the members in order as they are ready.
func (bw *blockWriter) drain() {
	var err error
	for p := range bw.queue {
		<-p.ready
		if err == nil {
			if err = p.err; err == nil {
				_, err = bw.w.Write(p.out)
			}
		}
		if p.release != nil {
			p.release()
		}
	}
	bw.done <- err
}

func (bw *blockWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), gzipBlockSize-len(bw.buf))
		bw.buf = append(bw.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(bw.buf) == gzipBlockSize {
			bw.flush()
		}
	}
	return n, nil
}

// flush hands the current block to a goroutine: copied from the previous
// layer when that holds the same bytes at the same place, else compressed.
func (bw *blockWriter) flush() {
	block, i := bw.buf, bw.index
	bw.buf = bw.pool.Get().([]byte)[:0]
	bw.index++
	p := &pending{ready: make(chan struct{})}
	bw.queue <- p // waits while as many blocks as allowed are in flight
	var m *layerfs.GzipMember
	if bw.prev != nil && i < len(bw.prev.members) {
		m = &bw.prev.members[i]
	}
	if m != nil && m.USize == int64(len(block)) && maphash.Bytes(bw.prev.seed, block) == m.Sum {
		bw.Reused++
	} else {
		m = nil
		bw.Compressed++
	}
	go func() {
		defer close(p.ready)
		defer bw.pool.Put(block[:0]) //nolint:staticcheck // a slice header is what the pool holds
		if m != nil {
			out := make([]byte, m.Size)
			_, p.err = bw.old.ReadAt(out, m.Offset)
			p.out = out
			return
		}
		p.out, p.err = compressMember(block, blockTag())
	}()
}

// Close writes the last block and waits for every member to be written.
func (bw *blockWriter) Close() error {
	if len(bw.buf) > 0 || bw.index == 0 {
		bw.flush()
	}
	close(bw.queue)
	err := <-bw.done
	if bw.old != nil {
		if cerr := bw.old.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
