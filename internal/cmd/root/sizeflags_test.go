package root_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/stretchr/testify/assert"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
)

// TestSizeFlagsShareOneParser: every size flag of every command takes the
// same spellings (128MiB, 64KiB, 1GB, raw bytes), not some units and
// others bytes only.
func TestSizeFlagsShareOneParser(t *testing.T) {
	t.Parallel()
	s, _, _, _ := iostreams.Test()
	top := root.NewCmd(factory.NewWithEnv(s, map[string]string{}))
	seen := map[string]bool{}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(fl *pflag.Flag) {
			if !strings.HasSuffix(fl.Name, "-size") {
				return
			}
			seen[fl.Name] = true
			if fl.Value.Type() != "size" {
				t.Errorf("%s --%s is a %s flag, not a size", c.CommandPath(), fl.Name, fl.Value.Type())
			}
		})
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(top)
	for _, name := range []string{"max-blob-size", "max-file-size", "max-layer-size", "max-image-size", "max-database-size"} {
		assert.True(t, seen[name], "--%s is on some command", name)
	}

	o := cmdtest.New(t)
	r := o.Run("render", validBundle, "--max-layer-size", "64KiB", "--max-image-size", "1GB", "--max-database-size", "4294967296", "--max-blob-size", "128MiB")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	r = o.Run("render", validBundle, "--max-layer-size", "lots")
	assert.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "want a size such as 64KiB, 128MiB, 1GiB or a number of bytes")
}
