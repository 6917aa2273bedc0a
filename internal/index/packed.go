package index

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A prepared bundle keeps its CSV and objects (JSON text, most of its size)
// zstd-compressed until they are written: JSON shrinks about tenfold. Given a
// Spool, the compressed text goes to a temporary file instead, so a call
// adding thousands of bundles holds only their names, versions and channels
// in memory, and each package's text only while the package is written.

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

// Spool is a temporary file holding prepared bundles' compressed text. It is
// safe for concurrent use.
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

// pack compresses r's CSV and objects, into spool when it is not nil.
func (r *rows) pack(spool *Spool) {
	enc, _, err := packer()
	if err != nil || r.packed || len(r.CSV) == 0 || len(r.Objects) == 0 {
		// Empty text stays as it is (nil is written as NULL).
		return
	}
	// EncodeAll sizes its output for the worst case; a copy the size of
	// what it wrote keeps a tenth of the text, not all of it.
	csv := shrink(enc.EncodeAll(r.CSV, nil))
	objects := shrink(enc.EncodeAll(r.Objects, nil))
	r.packed = true
	if spool != nil {
		csvAt, err1 := spool.put(csv)
		objAt, err2 := spool.put(objects)
		if err1 == nil && err2 == nil {
			// A spool that cannot be written to (a full disk) leaves the
			// text in memory: slower to run out of room, never wrong.
			r.spool, r.csvAt, r.objAt = spool, csvAt, objAt
			r.CSV, r.Objects = nil, nil
			return
		}
	}
	r.CSV, r.Objects = csv, objects
}

func shrink(b []byte) []byte {
	if cap(b)-len(b) < len(b)/4 {
		return b
	}
	return append(make([]byte, 0, len(b)), b...)
}

// text returns r's CSV and objects as JSON text.
func (r *rows) text() (csv, objects []byte, err error) {
	if !r.packed {
		return r.CSV, r.Objects, nil
	}
	_, dec, err := packer()
	if err != nil {
		return nil, nil, err
	}
	csv, objects = r.CSV, r.Objects
	if r.spool != nil {
		if csv, err = r.spool.get(r.csvAt); err != nil {
			return nil, nil, fmt.Errorf("bundle %s: %w", r.Name, err)
		}
		if objects, err = r.spool.get(r.objAt); err != nil {
			return nil, nil, fmt.Errorf("bundle %s: %w", r.Name, err)
		}
	}
	if csv, err = dec.DecodeAll(csv, nil); err != nil {
		return nil, nil, fmt.Errorf("bundle %s: unpack its CSV: %w", r.Name, err)
	}
	if objects, err = dec.DecodeAll(objects, nil); err != nil {
		return nil, nil, fmt.Errorf("bundle %s: unpack its objects: %w", r.Name, err)
	}
	return csv, objects, nil
}
