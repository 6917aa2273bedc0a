// Package tartest crafts tar layers for tests, exactly as described: no
// cleaning, so tests can build hostile ones.
package tartest

import (
	"archive/tar"
	"bytes"
	"strconv"
	"testing"
	"time"
)

// Entry describes one entry of a crafted test layer.
type Entry struct {
	Name     string
	Typ      byte
	Body     string
	Link     string
	Size     int64 // header size when it must differ from len(body)
	Mode     int64
	NoBody   bool // write the header only (for huge declared sizes)
	DevMajor int64
}

// Make builds an uncompressed tar from entries, exactly as given: no
// cleaning, so tests can craft hostile names.
func Make(t testing.TB, entries ...Entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.Typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		size := e.Size
		if size == 0 && typ == tar.TypeReg {
			size = int64(len(e.Body))
		}
		mode := e.Mode
		if mode == 0 {
			mode = 0o644
			if typ == tar.TypeDir {
				mode = 0o755
			}
		}
		hdr := &tar.Header{Name: e.Name, Typeflag: typ, Size: size, Linkname: e.Link, Mode: mode,
			ModTime: time.Unix(1, 0), Devmajor: e.DevMajor, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("write header %s: %v", e.Name, err)
		}
		if e.NoBody {
			// Leave the writer mid-entry: the archive ends here, as a hostile
			// or truncated one would. Return the bytes written so far.
			_ = tw.Flush()
			return buf.Bytes()
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.Body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// SparseHeader is one old-GNU sparse entry (type 'S') with no stored data:
// a single 512-byte header whose sparse map declares realSize bytes, all
// holes. archive/tar no longer writes these, so the block is built by hand.
func SparseHeader(name string, realSize int64) []byte {
	blk := make([]byte, 512)
	octal := func(b []byte, v int64) {
		s := strconv.FormatInt(v, 8)
		for len(s) < len(b)-1 {
			s = "0" + s
		}
		copy(b, s)
	}
	copy(blk[0:100], name)
	octal(blk[100:108], 0o644)
	octal(blk[108:116], 0)
	octal(blk[116:124], 0)
	octal(blk[124:136], 0) // stored bytes
	octal(blk[136:148], 1)
	blk[156] = 'S'
	copy(blk[257:265], "ustar  \x00")
	// One sparse map entry: no data at offset realSize, so all of it is a hole.
	octal(blk[386:398], realSize)
	octal(blk[398:410], 0)
	octal(blk[483:495], realSize)
	copy(blk[148:156], "        ")
	var sum int64
	for _, c := range blk {
		sum += int64(c)
	}
	s := strconv.FormatInt(sum, 8)
	for len(s) < 6 {
		s = "0" + s
	}
	copy(blk[148:156], s+"\x00 ")
	return blk
}

// SparseLayer is a tar of n hole-only sparse entries named name0, name1, ...
// (or exactly name when n is 1), each realSize bytes once expanded.
func SparseLayer(name string, n int, realSize int64) []byte {
	var buf bytes.Buffer
	for i := 0; i < n; i++ {
		nm := name
		if n > 1 {
			nm = name + strconv.Itoa(i)
		}
		buf.Write(SparseHeader(nm, realSize))
	}
	buf.Write(make([]byte, 1024))
	return buf.Bytes()
}
