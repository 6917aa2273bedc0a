package image

import (
	"archive/tar"
	"bytes"
	"testing"
	"time"
)

// tarEntry describes one entry of a crafted test layer.
type tarEntry struct {
	name     string
	typ      byte
	body     string
	link     string
	size     int64 // header size when it must differ from len(body)
	mode     int64
	noBody   bool // write the header only (for huge declared sizes)
	devMajor int64
}

// makeTar (a copy of layerfs's test helper) builds an uncompressed tar from entries, exactly as given: no
// cleaning, so tests can craft hostile names.
func makeTar(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		size := e.size
		if size == 0 && typ == tar.TypeReg {
			size = int64(len(e.body))
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
			if typ == tar.TypeDir {
				mode = 0o755
			}
		}
		hdr := &tar.Header{Name: e.name, Typeflag: typ, Size: size, Linkname: e.link, Mode: mode,
			ModTime: time.Unix(1, 0), Devmajor: e.devMajor, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatalf("write header %s: %v", e.name, err)
		}
		if e.noBody {
			// Leave the writer mid-entry: the archive ends here, as a hostile
			// or truncated one would. Return the bytes written so far.
			tw.Flush()
			return buf.Bytes()
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.body)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
