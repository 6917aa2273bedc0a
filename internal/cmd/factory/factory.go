// Package factory holds what every command gets from outside: the IO
// streams, the environment, the configuration applied to its flags, the
// image client constructor, the clock and the build's version. main builds
// the real one; tests build one with buffers and a fake environment, so
// that they need no process-wide state and can run in parallel.
package factory

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/version"
)

// Factory is what commands are built from. Commands read its fields when
// they run, not when they are built: the root command fills Config before
// any command runs.
type Factory struct {
	IO *iostreams.IOStreams

	// LookupEnv and Environ read the environment (OPM_*, XDG_CONFIG_HOME,
	// HOME, NO_COLOR, TERM).
	LookupEnv func(string) (string, bool)
	Environ   func() []string

	// Config is the environment and config file as applied to the running
	// command's flags; Config.From names where a flag's value came from.
	Config *config.Config

	// ImageClient makes the client for registries, layouts and archives.
	ImageClient func(image.Options) (*image.Client, error)

	// Now is the clock.
	Now func() time.Time

	// Version is the build's version information.
	Version func() version.Info
}

// New is the factory of a real run: the process's environment, and io.
func New(io *iostreams.IOStreams) *Factory {
	f := &Factory{
		IO:          io,
		LookupEnv:   os.LookupEnv,
		Environ:     os.Environ,
		ImageClient: image.NewClient,
		Now:         time.Now,
		Version:     version.Get,
	}
	f.Config = config.New(f.LookupEnv)
	// Warnings such as a fall back to plain HTTP, or a pull whose
	// signature nothing verifies, are for the user: once per run, however
	// many clients a command makes.
	var warnMu sync.Mutex
	warned := map[string]bool{}
	warn := func(msg string) {
		warnMu.Lock()
		defer warnMu.Unlock()
		if !warned[msg] {
			warned[msg] = true
			fmt.Fprintln(f.IO.ErrOut, f.IO.ErrTheme().WarningPrefix(), msg)
		}
	}
	f.ImageClient = func(o image.Options) (*image.Client, error) {
		if o.Warn == nil {
			o.Warn = warn
		}
		if o.RegistriesConf == "" {
			// As podman and skopeo: the variable names the file, the
			// flag wins over it.
			if v, ok := f.LookupEnv(image.EnvRegistriesConf); ok && v != "" {
				o.RegistriesConf = v
			}
		}
		return image.NewClient(o)
	}
	return f
}

// NewWithEnv is a factory whose environment is env alone (tests), and
// whose streams see the same environment.
func NewWithEnv(io *iostreams.IOStreams, env map[string]string) *Factory {
	f := New(io)
	f.LookupEnv = func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
	f.Environ = func() []string {
		out := make([]string, 0, len(env))
		for k, v := range env {
			out = append(out, k+"="+v)
		}
		return out
	}
	io.LookupEnv = f.LookupEnv
	f.Config = config.New(f.LookupEnv)
	return f
}

// From says where a flag's value came from, for error messages: "" when
// from the command line or the default, else " (from OPM_FAIL_ON)".
func (f *Factory) From(flag string) string { return f.Config.From(flag) }
