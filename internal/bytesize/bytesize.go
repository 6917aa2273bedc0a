// Package bytesize reads and writes the byte counts of opm's size flags
// (--max-blob-size, --max-layer-size, ...), so that every one of them takes
// the same spellings: a number of bytes (536870912), or a whole number with
// a binary unit (64KiB, 128MiB, 1GiB; K, M, G and KB, MB, GB are the same
// powers of 1024, as container tools' size flags read them; B is bytes).
package bytesize

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// Max is the largest size Parse accepts: 4 EiB, well past any limit that
// means something, and far from int64 overflow.
const Max = int64(1) << 62

// ErrSyntax is the error of a size Parse cannot read; it says what to write.
var ErrSyntax = errors.New("want a size such as 64KiB, 128MiB, 1GiB or a number of bytes")

// units are matched in order: longest suffix first.
var units = []struct {
	suffix string
	shift  uint
}{{"kib", 10}, {"mib", 20}, {"gib", 30}, {"kb", 10}, {"mb", 20}, {"gb", 30}, {"k", 10}, {"m", 20}, {"g", 30}, {"b", 0}}

// Parse reads a size: a whole number of bytes with an optional unit,
// case-insensitive, a space allowed before the unit.
func Parse(s string) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	shift := uint(0)
	for _, u := range units {
		if strings.HasSuffix(t, u.suffix) {
			t, shift = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 63)
	if err != nil || int64(n) > Max>>shift {
		return 0, ErrSyntax
	}
	return int64(n) << shift, nil
}

// Format writes n as Parse reads it, in the largest binary unit that
// divides it (512MiB, 1GiB), else in bytes.
func Format(n int64) string {
	switch {
	case n <= 0:
		return strconv.FormatInt(n, 10)
	case n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n%(1<<20) == 0:
		return fmt.Sprintf("%dMiB", n>>20)
	case n%(1<<10) == 0:
		return fmt.Sprintf("%dKiB", n>>10)
	}
	return strconv.FormatInt(n, 10)
}

// Flag is a pflag.Value that parses into *p.
func Flag(p *int64) pflag.Value { return (*value)(p) }

type value int64

func (v *value) Set(s string) error {
	n, err := Parse(s)
	if err != nil {
		return err
	}
	*v = value(n)
	return nil
}

func (v *value) String() string { return Format(int64(*v)) }

func (v *value) Type() string { return "size" }
