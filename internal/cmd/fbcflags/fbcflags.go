// Package fbcflags holds the flags that bound what a command reads from a
// file-based catalog (--max-blob-size, --max-file-size) or a template
// (--max-input-size).
package fbcflags

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/bytesize"
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

// sizeValue is a byte count as every size flag takes it (see
// internal/bytesize). 0 means no limit, stored as -1 (fbc.Limits' "none";
// its 0 is the default).
type sizeValue int64

func (s *sizeValue) Set(v string) error {
	n, err := bytesize.Parse(v)
	if err != nil {
		return fmt.Errorf("%w (0: no limit)", err)
	}
	if n == 0 {
		n = -1
	}
	*s = sizeValue(n)
	return nil
}

func (s *sizeValue) String() string {
	if *s <= 0 {
		return "0"
	}
	return bytesize.Format(int64(*s))
}

func (s *sizeValue) Type() string { return "size" }
