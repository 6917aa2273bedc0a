package cmdtest

import (
	"strings"

	"github.com/opmkit/opm/internal/peakrss"
)

// RunPeak runs opm in a child process, as Run does with Dir set (in a
// temporary directory when Dir is not), and returns its result and its
// peak RSS in bytes: what the run took at most, not counting this test
// process. The package needs Main as its TestMain.
func (r *Runner) RunPeak(args ...string) (Result, int64) {
	r.t.Helper()
	if r.Dir == "" {
		r.Dir = r.t.TempDir()
		defer func() { r.Dir = "" }()
	}
	cmd := r.Command(args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	peak, err := peakrss.Run(cmd)
	return Result{r.exitCode(args, err), out.String(), errOut.String()}, peak
}
