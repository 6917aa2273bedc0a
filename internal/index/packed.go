package index

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A prepared bundle keeps its CSV and objects (JSON text, most of its size)
// zstd-compressed until they are written: JSON shrinks about tenfold, so a
// call adding thousands of bundles holds a tenth of their text.

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

// pack compresses r's CSV and objects in place.
func (r *rows) pack() {
	enc, _, err := packer()
	if err != nil || r.packed || len(r.CSV) == 0 || len(r.Objects) == 0 {
		// Empty text stays as it is (nil is written as NULL).
		return
	}
	r.CSV = enc.EncodeAll(r.CSV, nil)
	r.Objects = enc.EncodeAll(r.Objects, nil)
	r.packed = true
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
	if csv, err = dec.DecodeAll(r.CSV, nil); err != nil {
		return nil, nil, fmt.Errorf("bundle %s: unpack its CSV: %w", r.Name, err)
	}
	if objects, err = dec.DecodeAll(r.Objects, nil); err != nil {
		return nil, nil, fmt.Errorf("bundle %s: unpack its objects: %w", r.Name, err)
	}
	return csv, objects, nil
}
