// Package fbcflags holds the flags that bound what a command reads from a
// file-based catalog (--max-blob-size, --max-file-size, --max-blobs,
// --max-depth) or a template (--max-input-size).
package fbcflags

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/bytesize"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/iostreams"
)

// AddLimitFlags adds --max-blob-size, --max-file-size, --max-blobs and
// --max-depth, filling l.
func AddLimitFlags(fl *pflag.FlagSet, l *fbc.Limits) {
	l.MaxBlobBytes, l.MaxFileBytes = fbc.DefaultMaxBlobBytes, fbc.DefaultMaxFileBytes
	l.MaxBlobs, l.MaxDepth = fbc.DefaultMaxBlobs, fbc.DefaultMaxDepth
	fl.Var((*sizeValue)(&l.MaxBlobBytes), "max-blob-size", "largest catalog blob (one JSON value or YAML document) to read, e.g. 128MiB; larger is a finding naming file and line (0: no limit)")
	fl.Var((*sizeValue)(&l.MaxFileBytes), "max-file-size", "largest catalog file to read, each blob counting at least 1 KiB, e.g. 1GiB (0: no limit)")
	fl.Var((*countValue)(&l.MaxBlobs), "max-blobs", "most blobs to read from one catalog, all its files together; one more is a finding naming file and line (0: no limit)")
	fl.Var((*countValue)(&l.MaxDepth), "max-depth", "deepest nesting of objects and lists in a catalog blob, the blob itself counted; deeper is a finding naming file and line (0: no limit)")
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

// countValue is a count (of blobs, of levels). 0 means no limit, stored
// as -1, as sizeValue.
type countValue int64

func (c *countValue) Set(v string) error {
	n, err := strconv.ParseInt(strings.ReplaceAll(strings.TrimSpace(v), "_", ""), 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a count: give a whole number such as 250000 (0: no limit)", v)
	}
	if n == 0 {
		n = -1
	}
	*c = countValue(n)
	return nil
}

func (c *countValue) String() string {
	if *c <= 0 {
		return "0"
	}
	return strconv.FormatInt(int64(*c), 10)
}

func (c *countValue) Type() string { return "count" }
