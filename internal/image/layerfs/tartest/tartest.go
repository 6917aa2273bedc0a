// Package tartest crafts tar layers for tests, exactly as described: no
// cleaning, so tests can build hostile ones.
package tartest

import (
	"archive/tar"
	"bytes"
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
