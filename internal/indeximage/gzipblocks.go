package indeximage

import (
	"hash"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/opmkit/opm/internal/image/blockgzip"
	"github.com/opmkit/opm/internal/image/layerfs"
)

// The gzip database layer is in blockgzip's format: one gzip member per
// 1 MiB of the tar stream, compressed on every core. The next update of
// the image, which downloads the layer anyway, copies the members whose
// blocks it leaves unchanged: adding a bundle to a large database changes
// a few percent of its blocks, and only those are compressed again.

// previousLayer is a database layer opm wrote before, kept compressed in
// a file with the list of its members, whose blocks may be copied.
type previousLayer struct {
	file    string
	members []layerfs.GzipMember
	// key is what the members' Sums were made with.
	key *sumKey
}

// reusable says whether the members are all blockgzip's of this
// compressor: every one tagged as such, every one but the last a full
// block.
func reusable(members []layerfs.GzipMember) bool {
	if len(members) == 0 {
		return false
	}
	for i, m := range members {
		if !blockgzip.Ours(m.Extra) {
			return false
		}
		if i < len(members)-1 && m.USize != blockgzip.BlockSize {
			return false
		}
	}
	return true
}

// copyPool holds buffers for members copied from the previous layer.
var copyPool = sync.Pool{New: func() any { return make([]byte, 0, blockgzip.BlockSize/2) }}

// blockWriter is the io.WriteCloser that writes the members to w. It
// also hashes its input into diffID, on a goroutine of its own: at
// hundreds of MB, that SHA-256 is most of a small change's cost, and it
// then runs beside the comparing and compressing of blocks.
type blockWriter struct {
	w     io.Writer
	prev  *previousLayer
	old   *os.File
	buf   []byte
	index int

	queue chan *pending
	done  chan error
	pool  sync.Pool

	diffID   hash.Hash
	toHash   chan *block
	hashDone chan struct{}

	// keep, when not nil, is the key of the sums to record of every
	// block (Sums), for the database cache.
	keep *sumKey
	Sums []uint64

	// Reused counts the blocks copied from the previous layer.
	Reused, Compressed int
}

// block is one block of input, shared by the hashing and the compressing
// goroutines: back to the pool when both are done with it.
type block struct {
	data []byte
	refs atomic.Int32
}

func (bw *blockWriter) release(b *block) {
	if b.refs.Add(-1) == 0 {
		bw.pool.Put(b.data[:0]) //nolint:staticcheck // a slice header is what the pool holds
	}
}

type pending struct {
	ready chan struct{}
	out   []byte
	err   error
	// release returns out's buffer, when it came from the pool.
	release func()
}

func newBlockWriter(w io.Writer, prev *previousLayer, diffID hash.Hash, keep *sumKey) (*blockWriter, error) {
	bw := &blockWriter{w: w, queue: make(chan *pending, 2*runtime.GOMAXPROCS(0)), done: make(chan error, 1),
		diffID: diffID, toHash: make(chan *block, 4), hashDone: make(chan struct{}), keep: keep}
	bw.pool.New = func() any { return make([]byte, 0, blockgzip.BlockSize) }
	if prev != nil && reusable(prev.members) {
		f, err := os.Open(prev.file)
		if err != nil {
			return nil, err
		}
		bw.prev, bw.old = prev, f
	}
	bw.buf = bw.pool.Get().([]byte)[:0]
	go bw.drain()
	go bw.hash()
	return bw, nil
}

// hash feeds the blocks, in order, to diffID.
func (bw *blockWriter) hash() {
	defer close(bw.hashDone)
	for b := range bw.toHash {
		bw.diffID.Write(b.data)
		bw.release(b)
	}
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
		k := min(len(p), blockgzip.BlockSize-len(bw.buf))
		bw.buf = append(bw.buf, p[:k]...)
		p, n = p[k:], n+k
		if len(bw.buf) == blockgzip.BlockSize {
			bw.flush()
		}
	}
	return n, nil
}

// flush hands the current block to a goroutine: copied from the previous
// layer when that holds the same bytes at the same place, else compressed.
func (bw *blockWriter) flush() {
	blk := &block{data: bw.buf}
	blk.refs.Store(2)
	bw.toHash <- blk
	data, i := bw.buf, bw.index
	bw.buf = bw.pool.Get().([]byte)[:0]
	bw.index++
	p := &pending{ready: make(chan struct{})}
	bw.queue <- p // waits while as many blocks as allowed are in flight
	var m *layerfs.GzipMember
	if bw.prev != nil && i < len(bw.prev.members) {
		m = &bw.prev.members[i]
	}
	var kept uint64
	if bw.keep != nil {
		kept = bw.keep.sum(data)
		bw.Sums = append(bw.Sums, kept)
	}
	if m != nil && m.USize == int64(len(data)) && bw.sameBlock(data, kept) == m.Sum {
		bw.Reused++
	} else {
		m = nil
		bw.Compressed++
	}
	go func() {
		defer close(p.ready)
		defer bw.release(blk)
		if m != nil {
			out := copyPool.Get().([]byte)
			if int64(cap(out)) < m.Size {
				out = make([]byte, m.Size)
			}
			out = out[:m.Size]
			_, p.err = bw.old.ReadAt(out, m.Offset)
			p.out = out
			p.release = func() { copyPool.Put(out[:0]) } //nolint:staticcheck // a slice is what the pool holds
			return
		}
		p.out, p.err = blockgzip.Compress(data)
	}()
}

// sameBlock is data's sum as the previous layer's members were summed:
// kept, its sum for the cache, when that is under the same key.
func (bw *blockWriter) sameBlock(data []byte, kept uint64) uint64 {
	if bw.prev.key == bw.keep {
		return kept
	}
	return bw.prev.key.sum(data)
}

// Close writes the last block and waits for every member to be written.
func (bw *blockWriter) Close() error {
	if len(bw.buf) > 0 || bw.index == 0 {
		bw.flush()
	}
	close(bw.queue)
	close(bw.toHash)
	err := <-bw.done
	<-bw.hashDone
	if bw.old != nil {
		if cerr := bw.old.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
