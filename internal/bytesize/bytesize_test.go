package bytesize

import (
	"testing"

	"github.com/spf13/pflag"
)

func TestParse(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"0": 0, "512": 512, "536870912": 512 << 20, "7B": 7, "1KiB": 1 << 10, "64KiB": 64 << 10, "128MiB": 128 << 20,
		"1GiB": 1 << 30, "2 GiB": 2 << 30, "3mb": 3 << 20, "1GB": 1 << 30, "4M": 4 << 20, "9k": 9 << 10, " 1G ": 1 << 30,
	} {
		if got, err := Parse(in); err != nil || got != want {
			t.Errorf("Parse(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "+1", "1.5GiB", "lots", "1TiB", "99999999999G", "GiB", "1 2MiB"} {
		if got, err := Parse(in); err != ErrSyntax {
			t.Errorf("Parse(%q) = %d, %v; want ErrSyntax", in, got, err)
		}
	}
	for n, want := range map[int64]string{0: "0", 512: "512", 1536: "1536", 512 << 20: "512MiB", 4 << 30: "4GiB", 3 << 10: "3KiB"} {
		if got := Format(n); got != want {
			t.Errorf("Format(%d) = %q, want %q", n, got, want)
		}
		if n > 0 {
			if back, err := Parse(Format(n)); err != nil || back != n {
				t.Errorf("Parse(Format(%d)) = %d, %v", n, back, err)
			}
		}
	}
}

func TestFlag(t *testing.T) {
	t.Parallel()
	n := int64(256 << 20)
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	fl.Var(Flag(&n), "max", "")
	if got := fl.Lookup("max").DefValue; got != "256MiB" {
		t.Errorf("default shown as %q", got)
	}
	if err := fl.Parse([]string{"--max", "64KiB"}); err != nil || n != 64<<10 {
		t.Errorf("64KiB: %d, %v", n, err)
	}
	if err := fl.Parse([]string{"--max", "1048576"}); err != nil || n != 1<<20 {
		t.Errorf("raw bytes: %d, %v", n, err)
	}
	if err := fl.Parse([]string{"--max", "big"}); err == nil {
		t.Error("big accepted")
	}
}
