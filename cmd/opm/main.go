// Command opm packages Kubernetes operators for OLM: it validates bundles
// and CSVs, builds bundle and index images, and manages sqlite indexes.
package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"
)

func main() {
	os.Exit(run(os.Args[1:], SystemStreams()))
}

// Exit codes.
const (
	exitOK          = 0
	exitFailed      = 1 // the command ran and found failing findings
	exitUsage       = 2 // bad flags or arguments, unreadable input, other I/O errors
	exitInterrupted = 130
)

// ExitError carries an exit code from a command's RunE to run. Err is
// printed to stderr; a nil Err means the command has already said
// everything (a failed validation, whose report is the explanation).
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// errFindings ends a run whose report has been printed and that failed.
var errFindings = &ExitError{Code: exitFailed}

// usageErrorf is an error in how opm was called: exit status 2.
func usageErrorf(format string, args ...any) error {
	return &ExitError{Code: exitUsage, Err: fmt.Errorf(format, args...)}
}

// run runs opm with args (without the program name) and returns the exit
// status. Tests call it with buffers.
func run(args []string, streams *IOStreams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	a := &app{streams: streams}
	root := newRootCmd(a)
	root.SetArgs(args)
	root.SetIn(streams.In)
	root.SetOut(streams.Out) // help and usage go to stdout, as asked for
	root.SetErr(streams.ErrOut)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	code := exitUsage
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
		if ee.Err == nil {
			return code
		}
	}
	t := newTheme(streams.ErrOut, streams.ErrTTY)
	fmt.Fprintln(streams.ErrOut, t.errorPrefix(), err)
	return code
}

// app is what every command shares: the streams, and the configuration
// (environment and config file) applied to its flags.
type app struct {
	streams *IOStreams

	// v holds the config file, when one was read.
	v *viper.Viper
	// configFile is the config file read, or "" when there is none.
	configFile string
	// origins says where each flag not given on the command line got its
	// value: "OPM_FAIL_ON", "fail-on in /home/me/.config/opm/config.yaml".
	origins map[string]string
}

func newRootCmd(a *app) *cobra.Command {
	root := &cobra.Command{
		Use:   "opm",
		Short: "Package Kubernetes operators for OLM",
		Long: `opm validates operator bundles and ClusterServiceVersions, and builds the
bundle and index images that the Operator Lifecycle Manager installs from.

Every flag can also be set with an OPM_* environment variable (--fail-on is
OPM_FAIL_ON) or in the config file, as a top-level key named like the flag
(fail-on: warning) or under the command (bundle: {validate: {fail-on: warning}}).
A flag on the command line wins over the environment, which wins over the
config file.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Without a subcommand, print help.
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Name() == "help" || cmd.Name() == cobra.ShellCompRequestCmd || cmd.Name() == cobra.ShellCompNoDescRequestCmd {
				return nil
			}
			if err := a.loadConfig(cmd); err != nil {
				return err
			}
			return a.applyConfig(cmd)
		},
	}
	root.PersistentFlags().String("config", "", "config file (default $XDG_CONFIG_HOME/opm/config.yaml, else ~/.config/opm/config.yaml)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return usageErrorf("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})
	root.AddCommand(newVersionCmd(a), newBundleCmd(a), newCSVCmd(a), newIndexCmd(a))
	return root
}

// defaultConfigFile is $XDG_CONFIG_HOME/opm/config.yaml, or
// ~/.config/opm/config.yaml when XDG_CONFIG_HOME is not set.
func defaultConfigFile() string {
	if dir := os.Getenv("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "opm", "config.yaml")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "opm", "config.yaml")
}

// loadConfig reads the config file: the one --config (or OPM_CONFIG) names,
// which must exist, or the default one, which may not.
func (a *app) loadConfig(cmd *cobra.Command) error {
	a.v = viper.New()
	a.configFile = ""
	name, explicit, from := "", false, ""
	if f := cmd.Flags().Lookup("config"); f != nil && f.Changed {
		name, explicit, from = f.Value.String(), true, "--config"
	} else if env := os.Getenv(envName("config")); env != "" {
		name, explicit, from = env, true, envName("config")
	} else {
		name = defaultConfigFile()
	}
	if name == "" {
		if explicit {
			return usageErrorf("%s: empty config file name", from)
		}
		return nil
	}
	st, err := os.Stat(name)
	switch {
	case err != nil && !explicit && errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return usageErrorf("config file %s (from %s): no such file", name, from)
	case err != nil:
		return usageErrorf("config file: %w", err)
	case st.IsDir():
		return usageErrorf("config file %s is a directory", name)
	}
	a.v.SetConfigFile(name)
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json", ".toml":
	default:
		a.v.SetConfigType("yaml")
	}
	if err := a.v.ReadInConfig(); err != nil {
		return usageErrorf("config file %s: %w", name, err)
	}
	a.configFile = name
	return nil
}

// noEnvAnnotation marks flags that the environment and the config file do
// not set (actions such as --list-rules, rather than settings).
const noEnvAnnotation = "opm/no-env"

// envName is the environment variable of a flag: fail-on → OPM_FAIL_ON.
func envName(flag string) string {
	return "OPM_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flag))
}

// applyConfig gives every flag of cmd that is not on the command line its
// value from the environment, else from the config file (the key under the
// command, such as bundle.validate.fail-on, else the top-level key fail-on),
// else leaves its default.
func (a *app) applyConfig(cmd *cobra.Command) error {
	a.origins = map[string]string{}
	var prefix string
	if p := strings.Fields(cmd.CommandPath()); len(p) > 1 {
		prefix = strings.Join(p[1:], ".") + "."
	}
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" || f.Name == "config" {
			return
		}
		if _, skip := f.Annotations[noEnvAnnotation]; skip {
			return
		}
		env := envName(f.Name)
		_ = a.v.BindEnv(f.Name, env)
		var val, from string
		if s, ok := os.LookupEnv(env); ok && s != "" {
			val, from = s, env
		} else {
			for _, key := range []string{prefix + f.Name, f.Name} {
				if a.configFile != "" && a.v.InConfig(key) {
					val, from = configString(a.v.Get(key)), fmt.Sprintf("%s in %s", key, a.configFile)
					break
				}
			}
		}
		if from == "" {
			return
		}
		if err := f.Value.Set(val); err != nil {
			errs = append(errs, fmt.Errorf("invalid value %q for --%s (from %s): %w", val, f.Name, from, err))
			return
		}
		a.origins[f.Name] = from
	})
	if len(errs) > 0 {
		return &ExitError{Code: exitUsage, Err: errors.Join(errs...)}
	}
	return nil
}

// configString turns a config value into flag syntax: lists become
// comma-separated.
func configString(v any) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmt.Sprint(x)
		}
		return strings.Join(parts, ",")
	case []string:
		return strings.Join(v, ",")
	}
	return fmt.Sprint(v)
}

// from says where a flag's value came from, for error messages: "" when
// from the command line or the default.
func (a *app) from(flag string) string {
	if o := a.origins[flag]; o != "" {
		return " (from " + o + ")"
	}
	return ""
}
