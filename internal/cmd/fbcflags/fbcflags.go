// Package fbcflags holds the flags that bound what a command reads from a
// file-based catalog (--max-blob-size, --max-file-size) or a template
// (--max-input-size).
package fbcflags

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/iostreams"
)

// AddLimitFlags adds --max-blob-size and --max-file-size, filling l.
func AddLimitFlags(fl *pflag.FlagSet, l *fbc.Limits) {
	l.MaxBlobBytes, l.MaxFileBytes = fbc.DefaultMaxBlobBytes, fbc.DefaultMaxFileBytes
	fl.Var((*sizeValue)(&l.MaxBlobBytes), "max-blob-size", "largest catalog blob (one JSON value or YAML document) to read, e.g. 128MiB; larger is a finding naming file and line (0: no limit)")
	fl.Var((*sizeValue)(&l.MaxFileBytes), "max-file-size", "largest catalog file to read, each blob counting at least 1 KiB, e.g. 1GiB (0: no limit)")
}

// AddInputSizeFlag adds --max-input-size, the largest template or catalog
// a command reads from a file or stdin whole (iostreams.ReadAll), filling
// max; 0 on the command line means no limit, stored as -1.
func AddInputSizeFlag(fl *pflag.FlagSet, max *int64, what string) {
	*max = iostreams.DefaultMaxInput
	fl.Var((*sizeValue)(max), "max-input-size", "largest "+what+" to read from a file or stdin, e.g. 64MiB; a larger one, or a stdin that never ends, is refused (0: no limit)")
}

// sizeValue is a byte count written as a number with an optional unit
// (B, KiB, MiB, GiB; K, M, G and KB, MB, GB mean the same powers of 1024).
// 0 means no limit, stored as -1 (fbc.Limits' "none"; its 0 is default).
type sizeValue int64

var units = []struct {
	suffix string
	shift  uint
}{{"kib", 10}, {"mib", 20}, {"gib", 30}, {"kb", 10}, {"mb", 20}, {"gb", 30}, {"k", 10}, {"m", 20}, {"g", 30}, {"b", 0}}

func (s *sizeValue) Set(v string) error {
	t := strings.ToLower(strings.TrimSpace(v))
	shift := uint(0)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return fmt.Errorf("want a size such as 64MiB, 1GiB or a number of bytes (0: no limit)")
	}
	if n == 0 {
		*s = -1
		return nil
	}
	*s = sizeValue(n << shift)
	return nil
}

func (s *sizeValue) String() string {
	n := int64(*s)
	switch {
	case n <= 0:
		return "0"
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}

func (s *sizeValue) Type() string { return "size" }
