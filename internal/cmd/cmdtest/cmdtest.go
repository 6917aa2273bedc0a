// Package cmdtest runs the real opm command tree in tests, with buffers for
// streams and a fake environment, so that command tests need no
// process-wide state and can run in parallel. It also decodes the -o json
// validation report strictly.
package cmdtest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
)

// Runner runs opm commands. Env is the whole environment the commands see
// (OPM_*, XDG_CONFIG_HOME, HOME, NO_COLOR, TERM); change it between runs.
//
// Runs are in-process unless Dir is set: the working directory, and what
// the libraries read from the environment (TMPDIR, PATH, registry auth),
// belong to the whole test process. A test that needs its own sets Dir
// (and ProcEnv), and each run is then a child process: the test binary
// itself, running opm (see Main). That keeps such tests parallel, where
// t.Chdir and t.Setenv would make them serial.
type Runner struct {
	t   testing.TB
	Env map[string]string
	// Dir, when set, is the working directory of a child-process run.
	Dir string
	// ProcEnv is added to a child process's environment (TMPDIR, PATH);
	// PATH defaults to the test process's.
	ProcEnv map[string]string
	// TTY makes stdout and stderr pretend to be terminals.
	TTY bool
	// Configure, when set, adjusts the factory before each run (a fake
	// clock, version or image client).
	Configure func(*factory.Factory)
	// ProgressEvery is how often progress lines are written off a
	// terminal; 0 means never in practice (an hour): a run's output must
	// not depend on how long a loaded machine takes.
	ProgressEvery time.Duration
}

// quietProgress keeps plain progress lines out of test runs (see
// Runner.ProgressEvery).
const quietProgress = time.Hour

// New is a runner whose environment holds nothing of the developer's: its
// config directory and home are an empty temporary directory.
func New(t testing.TB) *Runner {
	t.Helper()
	dir := t.TempDir()
	return &Runner{t: t, Env: map[string]string{
		"XDG_CONFIG_HOME": dir,
		"HOME":            dir,
		"TERM":            "xterm-256color",
	}, ProcEnv: map[string]string{}}
}

// ConfigFile is where the runner's default config file goes.
func (r *Runner) ConfigFile() string {
	return filepath.Join(r.Env["XDG_CONFIG_HOME"], "opm", "config.yaml")
}

// Result is what a run printed and its exit status.
type Result struct {
	Code        int
	Out, ErrOut string
}

// Run runs opm with args (without the program name).
func (r *Runner) Run(args ...string) Result {
	r.t.Helper()
	if r.Dir != "" {
		return r.runChild(args)
	}
	s, _, out, errOut := iostreams.Test()
	s.OutTTY, s.ErrTTY = r.TTY, r.TTY
	s.ProgressEvery = r.ProgressEvery
	if s.ProgressEvery == 0 {
		s.ProgressEvery = quietProgress
	}
	f := factory.NewWithEnv(s, r.Env)
	if r.Configure != nil {
		r.Configure(f)
	}
	code := root.Run(context.Background(), f, args)
	return Result{code, out.String(), errOut.String()}
}

// childEnv tells a test binary started by runChild to be opm. It is not
// an OPM_* variable, which opm would refuse as unknown.
const childEnv = "CMDTEST_RUN_OPM"

// Main is the TestMain of packages whose tests use Runner.Dir: in a child
// process it runs opm with the arguments, else the tests.
func Main(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		ctx, stop := exit.SignalContext()
		s := iostreams.System()
		s.ProgressEvery = quietProgress
		code := root.Run(ctx, factory.New(s), os.Args[1:])
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// Command is the child process a run with Dir set would start, not yet
// started: for tests that signal or time it themselves. The package needs
// Main as its TestMain.
func (r *Runner) Command(args ...string) *exec.Cmd {
	r.t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = r.Dir
	env := map[string]string{"PATH": os.Getenv("PATH")}
	for k, v := range r.Env {
		env[k] = v
	}
	for k, v := range r.ProcEnv {
		env[k] = v
	}
	env[childEnv] = "1"
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	return cmd
}

func (r *Runner) runChild(args []string) Result {
	r.t.Helper()
	if r.TTY {
		r.t.Fatal("cmdtest: a child-process run (Dir set) has no terminal")
	}
	cmd := r.Command(args...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	return Result{r.exitCode(args, cmd.Run()), out.String(), errOut.String()}
}

// exitCode is the exit status of a child run that ended with err.
func (r *Runner) exitCode(args []string, err error) int {
	r.t.Helper()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		r.t.Fatalf("cmdtest: run opm %s: %v", strings.Join(args, " "), err)
	}
	if ee != nil {
		return ee.ExitCode()
	}
	return 0
}

// RunTTY runs opm as if stdout and stderr were terminals.
func (r *Runner) RunTTY(args ...string) Result {
	r.t.Helper()
	tty := r.TTY
	r.TTY = true
	defer func() { r.TTY = tty }()
	return r.Run(args...)
}

// Run runs opm once in an isolated environment.
func Run(t testing.TB, args ...string) Result {
	t.Helper()
	return New(t).Run(args...)
}

// DecodeReport checks the -o json validation report's shape strictly and
// returns it.
func DecodeReport(t testing.TB, data string) map[string]any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc), data)
	require.ElementsMatch(t, []string{"passed", "bundles"}, Keys(doc))
	require.IsType(t, true, doc["passed"])
	bundles, ok := doc["bundles"].([]any)
	require.True(t, ok, "bundles is an array")
	for _, b := range bundles {
		bm := b.(map[string]any)
		require.ElementsMatch(t, []string{"path", "name", "findings"}, Keys(bm))
		require.IsType(t, "", bm["path"])
		require.IsType(t, "", bm["name"])
		findings, ok := bm["findings"].([]any)
		require.True(t, ok, "findings is an array, never null: %v", bm["findings"])
		for _, f := range findings {
			fm := f.(map[string]any)
			require.ElementsMatch(t, []string{"rule", "severity", "file", "line", "field", "message", "hint"}, Keys(fm))
			require.Contains(t, []any{"error", "warning", "info"}, fm["severity"])
			require.IsType(t, json.Number(""), fm["line"])
			for _, k := range []string{"rule", "file", "field", "message", "hint"} {
				require.IsType(t, "", fm[k], k)
			}
		}
	}
	return doc
}

// Keys are the keys of m.
func Keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// Findings returns the findings of the i-th bundle of a decoded report.
func Findings(doc map[string]any, i int) []map[string]any {
	var out []map[string]any
	for _, f := range doc["bundles"].([]any)[i].(map[string]any)["findings"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

// RulesOf are the rule ids of findings.
func RulesOf(fs []map[string]any) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f["rule"].(string))
	}
	return out
}

// CopyDir copies the directory tree src to dst.
func CopyDir(t testing.TB, src, dst string) {
	t.Helper()
	require.NoError(t, os.CopyFS(dst, os.DirFS(src)))
}

// Parse runs only the flag and argument parsing of the command newCmd
// makes, through its runF seam, and returns the options it would run
// with. Nothing is read from the environment or a config file (that is the
// root command's job).
func Parse[O any](t testing.TB, newCmd func(*factory.Factory, func(*O) error) *cobra.Command, args ...string) (*O, error) {
	t.Helper()
	s, _, _, _ := iostreams.Test()
	var got *O
	cmd := newCmd(factory.NewWithEnv(s, nil), func(o *O) error {
		got = o
		return nil
	})
	cmd.SetArgs(args)
	cmd.SetOut(s.Out)
	cmd.SetErr(s.ErrOut)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	err := cmd.Execute()
	return got, err
}

// Endless is a stdin that never ends: every read fills p with fill.
type Endless byte

func (e Endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(e)
	}
	return len(p), nil
}
