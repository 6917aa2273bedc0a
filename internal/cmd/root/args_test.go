package root_test

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
)

// TestArgCountErrorsPrintUsage: on every command, a wrong number of
// arguments is a usage error that prints the command's usage line, and no
// command takes arguments it ignores.
func TestArgCountErrorsPrintUsage(t *testing.T) {
	t.Parallel()
	s, _, _, _ := iostreams.Test()
	top := root.NewCmd(factory.NewWithEnv(s, map[string]string{}))
	var walk func(*cobra.Command)
	checked := 0
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			walk(sub)
		}
		if c.HasSubCommands() || !c.Runnable() || c.Hidden || c.Name() == "help" {
			return
		}
		if c.Args == nil && c.CommandPath() == "opm bundle validate" {
			// No argument is right with --list-rules and for pre-commit's
			// file lists; Run refuses none otherwise, with the usage line.
			r := cmdtest.New(t).Run("bundle", "validate")
			if r.Code != exit.Usage || !strings.Contains(r.ErrOut, "\nUsage: "+c.UseLine()+"\n") {
				t.Errorf("bundle validate without arguments: exit %d: %s", r.Code, r.ErrOut)
			}
			return
		}
		if c.Args == nil {
			t.Errorf("%s: no Args check: extra arguments would be ignored", c.CommandPath())
			return
		}
		failed := 0
		for n := range 6 {
			args := make([]string, n)
			for i := range args {
				args[i] = "arg"
			}
			err := c.Args(c, args)
			if err == nil {
				continue
			}
			failed++
			if code, _ := exit.Code(err); code != exit.Usage || !strings.Contains(err.Error(), "\nUsage: "+c.UseLine()+"\n") {
				t.Errorf("%s with %d args: exit %d, %v", c.CommandPath(), n, code, err)
			}
		}
		if failed > 0 {
			checked++
		}
	}
	walk(top)
	if checked < 20 {
		t.Errorf("only %d commands refuse some argument count", checked)
	}
}

func TestArgCountErrorRun(t *testing.T) {
	t.Parallel()
	r := cmdtest.New(t).Run("serve", "a", "b")
	if r.Code != exit.Usage || !strings.Contains(r.ErrOut, "accepts 1 arg(s), received 2\nUsage: opm serve DIR [flags]\nRun 'opm serve --help' for more.") {
		t.Errorf("exit %d: %s", r.Code, r.ErrOut)
	}
	r = cmdtest.New(t).Run("bundle", "generate", "manifests")
	if r.Code != exit.Usage || !strings.Contains(r.ErrOut, `opm bundle generate takes no arguments, got "manifests"`) || !strings.Contains(r.ErrOut, "Usage: opm bundle generate -d MANIFESTS_DIR") {
		t.Errorf("exit %d: %s", r.Code, r.ErrOut)
	}
	r = cmdtest.New(t).Run("index", "export", "x")
	if r.Code != exit.UpstreamUsage || !strings.Contains(r.ErrOut, "Usage: opm index export") {
		t.Errorf("upstream path: exit %d: %s", r.Code, r.ErrOut)
	}
}
