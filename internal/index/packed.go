package index

import (
	"bytes"
	"encoding/gob"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A prepared bundle keeps its CSV and objects (JSON text, most of its size)
// zstd-compressed until they are written: JSON shrinks about tenfold. Given a
// Spool, all but its name, package, version and path go to a temporary file
// instead, so a call adding thousands of bundles holds a few hundred bytes
// a bundle in memory, and a package's bundles whole only while the package
// is written.

var (
	packOnce sync.Once
	packEnc  *zstd.Encoder
	packDec  *zstd.Decoder
	packErr  error
)

// packer returns the shared encoder and decoder; both are safe for
// concurrent EncodeAll/DecodeAll.
func packer() (*zstd.Encoder, *zstd.Decoder, error) {
	packOnce.Do(func() {
		packEnc, packErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if packErr == nil {
			packDec, packErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0))
		}
	})
	return packEnc, packDec, packErr
}

// Spool is a temporary file holding prepared bundles' bodies, their text
// compressed. It is safe for concurrent use.
type Spool struct {
	mu   sync.Mutex
	f    *os.File
	end  int64
	name string // set while the file still has a name to remove
}

// NewSpool creates a spool in dir ("" is the system's temporary directory).
// Close it when the bundles have been added.
func NewSpool(dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "opm-bundles-*.spool")
	if err != nil {
		if dir == "" {
			return nil, fmt.Errorf("create bundle spool: %w (set TMPDIR to a writable directory)", err)
		}
		return nil, fmt.Errorf("create bundle spool: %w", err)
	}
	s := &Spool{f: f}
	// Unlinked at once where the system allows it, so the space is freed
	// however opm exits.
	if err := os.Remove(f.Name()); err != nil {
		s.name = f.Name()
	}
	return s, nil
}

// Close releases the spool's file; bundles prepared into it can no longer
// be added.
func (s *Spool) Close() error {
	err := s.f.Close()
	if s.name != "" {
		err = errors.Join(err, os.Remove(s.name))
	}
	return err
}

// spooled is where a spool holds one piece of text.
type spooled struct {
	off int64
	n   int
}

func (s *Spool) put(b []byte) (spooled, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := spooled{off: s.end, n: len(b)}
	if _, err := s.f.WriteAt(b, s.end); err != nil {
		return spooled{}, fmt.Errorf("write bundle spool %s: %w", s.f.Name(), err)
	}
	s.end += int64(len(b))
	return at, nil
}

func (s *Spool) get(at spooled) ([]byte, error) {
	b := make([]byte, at.n)
	if _, err := s.f.ReadAt(b, at.off); err != nil {
		return nil, fmt.Errorf("read bundle spool %s: %w", s.f.Name(), err)
	}
	return b, nil
}

// pack compresses r's CSV and objects and, given a spool, moves r's body
// into it (see restore).
func (r *rows) pack(spool *Spool) {
	enc, _, err := packer()
	if err != nil || r.packed {
		return
	}
	if len(r.CSV) > 0 && len(r.Objects) > 0 {
		// Empty text stays as it is (nil is written as NULL). EncodeAll
		// sizes its output for the worst case; a copy the size of what it
		// wrote keeps a tenth of the text, not all of it.
		r.CSV = shrink(enc.EncodeAll(r.CSV, nil))
		r.Objects = shrink(enc.EncodeAll(r.Objects, nil))
		r.packed = true
	}
	if spool == nil {
		return
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(r.body); err != nil {
		return
	}
	at, err := spool.put(buf.Bytes())
	if err != nil {
		// A spool that cannot be written to (a full disk) leaves the
		// bundle in memory: slower to run out of room, never wrong.
		return
	}
	r.spool, r.spoolAt = spool, at
	r.release()
}

// restore reads back what pack moved into the spool; release drops it
// again once r's package is written. Both may be called any number of times.
func (r *rows) restore() error {
	if r.spool == nil || r.restored {
		return nil
	}
	data, err := r.spool.get(r.spoolAt)
	if err != nil {
		return fmt.Errorf("bundle %s: %w", r.Name, err)
	}
	var b body
	if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&b); err != nil {
		return fmt.Errorf("bundle %s: read back from the spool: %w", r.Name, err)
	}
	r.body, r.restored = b, true
	return nil
}

func (r *rows) release() {
	if r.spool == nil {
		return
	}
	r.body, r.restored = body{}, false
}

func shrink(b []byte) []byte {
	if cap(b)-len(b) < len(b)/4 {
		return b
	}
	return append(make([]byte, 0, len(b)), b...)
}

// text returns r's CSV and objects as JSON text.
func (r *rows) text() (csv, objects []byte, err error) {
	if err := r.restore(); err != nil {
		return nil, nil, err
	}
	if !r.packed {
		return r.CSV, r.Objects, nil
	}
	_, dec, err := packer()
	if err != nil {
		return nil, nil, err
	}
	if csv, err = dec.DecodeAll(r.CSV, nil); err != nil {
		return nil, nil, fmt.Errorf("bundle %s: unpack its CSV: %w", r.Name, err)
	}
	if objects, err = dec.DecodeAll(r.Objects, nil); err != nil {
		return nil, nil, fmt.Errorf("bundle %s: unpack its objects: %w", r.Name, err)
	}
	return csv, objects, nil
}
