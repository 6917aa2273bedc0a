package fbcflags

import (
	"testing"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/fbc"
)

func TestLimitFlags(t *testing.T) {
	t.Parallel()
	var l fbc.Limits
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	AddLimitFlags(fl, &l)
	if l.MaxBlobBytes != fbc.DefaultMaxBlobBytes || l.MaxFileBytes != fbc.DefaultMaxFileBytes || l.MaxBlobs != fbc.DefaultMaxBlobs || l.MaxDepth != fbc.DefaultMaxDepth {
		t.Fatalf("defaults: %+v", l)
	}
	if got := fl.Lookup("max-blob-size").DefValue; got != "128MiB" {
		t.Errorf("--max-blob-size default shown as %q", got)
	}
	if got := fl.Lookup("max-blobs").DefValue; got != "250000" {
		t.Errorf("--max-blobs default shown as %q", got)
	}
	if got := fl.Lookup("max-depth").DefValue; got != "100" {
		t.Errorf("--max-depth default shown as %q", got)
	}
	if err := fl.Parse([]string{"--max-blob-size", "4M", "--max-file-size", "0", "--max-blobs", "1_000_000", "--max-depth", "0"}); err != nil {
		t.Fatal(err)
	}
	if l.MaxBlobBytes != 4<<20 || l.MaxFileBytes != -1 || l.MaxBlobs != 1_000_000 || l.MaxDepth != -1 {
		t.Errorf("parsed %+v", l)
	}
	for _, in := range []string{"", "-1", "1.5", "lots", "1k"} {
		var c countValue
		if err := c.Set(in); err == nil {
			t.Errorf("count %q accepted as %d", in, c)
		}
	}
	for in, want := range map[string]int64{"512": 512, "1KiB": 1024, "2 GiB": 2 << 30, "3mb": 3 << 20, "7B": 7} {
		var s sizeValue
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("%q: %d, %v; want %d", in, s, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5GiB", "lots", "1TiB", "99999999999G"} {
		var s sizeValue
		if err := s.Set(in); err == nil {
			t.Errorf("%q accepted as %d", in, s)
		}
	}
}
