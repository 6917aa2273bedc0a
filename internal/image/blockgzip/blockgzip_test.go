package blockgzip

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
)

func sample(n int) []byte {
	var b bytes.Buffer
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "row %d %x\n", i, i*i*2654435761)
	}
	return b.Bytes()[:n]
}

// blob compresses data block by block.
func blob(t *testing.T, data []byte) []byte {
	t.Helper()
	var out []byte
	for off := 0; off < len(data); off += BlockSize {
		m, err := Compress(data[off:min(off+BlockSize, len(data))])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

func TestRoundTripAndStandardReader(t *testing.T) {
	data := sample(3*BlockSize + 777)
	b := blob(t, data)
	if !Detect(b[:64]) {
		t.Fatal("Detect does not know the format")
	}
	seed := maphash.MakeSeed()
	z := NewReader(bytes.NewReader(b), func(blk []byte) uint64 { return maphash.Bytes(seed, blk) })
	got, err := io.ReadAll(z)
	z.Close()
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("block reader: %d bytes, %v", len(got), err)
	}
	ms := z.Members()
	if len(ms) != 4 || ms[3].USize != 777 || ms[0].Offset != 0 || ms[1].Offset != ms[0].Size || !Ours(ms[2].Extra) ||
		ms[1].Sum != maphash.Bytes(seed, data[BlockSize:2*BlockSize]) {
		t.Errorf("members %+v", ms)
	}
	var total int64
	for _, m := range ms {
		total += m.Size
	}
	if total != int64(len(b)) {
		t.Errorf("members cover %d of %d bytes", total, len(b))
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(zr)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("compress/gzip: %d bytes, %v", len(got), err)
	}
	// The same block always gives the same member.
	again, _ := Compress(data[:BlockSize])
	if !bytes.Equal(again, b[:ms[0].Size]) {
		t.Error("compressing a block twice gave two members")
	}
}

func TestDetectPlainGzip(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, _ = zw.Write(sample(1000))
	_ = zw.Close()
	if Detect(buf.Bytes()) {
		t.Error("plain gzip taken for the block format")
	}
}

func readAll(b []byte) error {
	z := NewReader(bytes.NewReader(b), nil)
	defer z.Close()
	_, err := io.ReadAll(z)
	return err
}

func TestBadBlobsRefused(t *testing.T) {
	data := sample(2*BlockSize + 10)
	good := blob(t, data)
	first, _ := Compress(data[:BlockSize])

	corrupt := bytes.Clone(good)
	corrupt[len(first)-3] ^= 0xff // the first member's size trailer
	truncated := good[:len(good)-5]

	// A member holding more than a block (a bomb): deflate of 2 MiB of
	// zeros with a header claiming the format.
	var body bytes.Buffer
	fw, _ := flate.NewWriter(&body, 9)
	zeros := make([]byte, 2*BlockSize)
	_, _ = fw.Write(zeros)
	_ = fw.Close()
	bomb := append([]byte(nil), first[:headerLen-4]...)
	bomb = binary.LittleEndian.AppendUint32(bomb, uint32(body.Len()))
	bomb = append(bomb, body.Bytes()...)
	bomb = binary.LittleEndian.AppendUint32(bomb, crc32.ChecksumIEEE(zeros))
	bomb = binary.LittleEndian.AppendUint32(bomb, uint32(len(zeros)))

	for name, tc := range map[string]struct {
		b    []byte
		want string
	}{
		"corrupt":   {corrupt, "checksum or size"},
		"truncated": {truncated, "unexpected EOF"},
		"bomb":      {bomb, "more than a 1048576-byte block"},
		"garbage":   {append(bytes.Clone(first), "not gzip at all, long enough for a header"...), "not a member"},
	} {
		if err := readAll(tc.b); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

// Close returns while members are still waiting to be read.
func TestCloseEarly(t *testing.T) {
	b := blob(t, sample(20*BlockSize))
	z := NewReader(bytes.NewReader(b), nil)
	if _, err := z.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { z.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute): // only a hang
		t.Fatal("Close did not return")
	}
}
