package rendertemplate_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
)

// A template on a stdin that stays open: --timeout stops the run on time.
func TestRenderTemplateStdinNeverCloses(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	t.Cleanup(func() { _ = pw.Close() })
	go func() { _, _ = pw.Write([]byte("schema: olm.template.basic\n")) }()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) { f.IO.In = pr }
	// The stdin never closes: a run that ends at all, timed out, is
	// --timeout's doing, however long a loaded machine took.
	r := o.Run("alpha", "render-template", "basic", "-", "--timeout", "300ms")
	assert.Equal(t, exit.TimedOut, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "timed out after 300ms")
	assert.Empty(t, r.Out)
}

// A stdin that never ends is refused past --max-input-size, naming it.
func TestRenderTemplateStdinTooLarge(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	o.Configure = func(f *factory.Factory) { f.IO.In = cmdtest.Endless('#') }
	r := o.Run("alpha", "render-template", "--max-input-size", "1MiB")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "read the template from stdin")
	assert.Contains(t, r.ErrOut, "--max-input-size")
	assert.Empty(t, r.Out)

	r = o.Run("alpha", "render-template", "-", "--max-input-size", "bad")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "want a size such as 64KiB, 128MiB, 1GiB")
}

// A template file that is a FIFO nobody writes: --timeout stops the run.
func TestRenderTemplateFIFOTimesOut(t *testing.T) {
	t.Parallel()
	fifo := filepath.Join(t.TempDir(), "template.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	// A writer that never writes: the read blocks rather than ends
	// (O_RDWR opens a FIFO without waiting for a reader on Linux).
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	require.NoError(t, err)
	t.Cleanup(func() { _ = w.Close() })
	r := cmdtest.Run(t, "alpha", "render-template", "basic", fifo, "--timeout", "300ms")
	require.Equal(t, exit.TimedOut, r.Code, r.ErrOut)
}
