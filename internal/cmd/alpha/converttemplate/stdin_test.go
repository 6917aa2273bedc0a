package converttemplate_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
)

// A catalog on a stdin that stays open: --timeout stops the run on time.
func TestConvertStdinNeverCloses(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	go func() { _, _ = pw.Write([]byte(`{"schema": "olm.package", "name": "p"}`)) }()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) { f.IO.In = pr }
	// The stdin never closes: a run that ends at all, timed out, is
	// --timeout's doing, however long a loaded machine took.
	r := o.Run("alpha", "convert-template", "basic", "--timeout", "300ms")
	assert.Equal(t, exit.TimedOut, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "timed out after 300ms")
	assert.Empty(t, r.Out)
}

// A stdin that never ends is refused past --max-input-size, naming it.
func TestConvertStdinTooLarge(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) { f.IO.In = cmdtest.Endless(' ') }
	r := o.Run("alpha", "convert-template", "substitutes", "-", "--max-input-size", "1MiB")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "read the catalog from stdin")
	assert.Contains(t, r.ErrOut, "--max-input-size")
	assert.Empty(t, r.Out)
}
