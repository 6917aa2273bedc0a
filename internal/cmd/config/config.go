// Package config applies the environment (OPM_*) and the config file to a
// command's flags: a flag on the command line wins over the environment,
// which wins over the config file, which wins over the default.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/spelling"
)

// NoEnvAnnotation marks flags that the environment and the config file do
// not set (actions such as --list-rules, rather than settings).
const NoEnvAnnotation = "opm/no-env"

// FlagName is the persistent flag that names the config file.
const FlagName = "config"

// LookupEnv reads an environment variable (os.LookupEnv, or a fake in tests).
type LookupEnv func(string) (string, bool)

// Config is the configuration applied to the running command.
type Config struct {
	env LookupEnv
	v   *viper.Viper
	// File is the config file read, or "" when there is none.
	File string
	// origins says where each flag not given on the command line got its
	// value: "OPM_FAIL_ON", "fail-on in /home/me/.config/opm/config.yaml".
	origins map[string]string
}

// New is an empty configuration reading the environment through env.
func New(env LookupEnv) *Config {
	if env == nil {
		env = os.LookupEnv
	}
	return &Config{env: env, v: viper.New(), origins: map[string]string{}}
}

func (c *Config) getenv(k string) string {
	v, _ := c.env(k)
	return v
}

// EnvName is the environment variable of a flag: fail-on → OPM_FAIL_ON.
func EnvName(flag string) string {
	return "OPM_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flag))
}

// DefaultFile is $XDG_CONFIG_HOME/opm/config.yaml, or
// ~/.config/opm/config.yaml when XDG_CONFIG_HOME is not set.
func (c *Config) DefaultFile() string {
	if dir := c.getenv("XDG_CONFIG_HOME"); dir != "" && filepath.IsAbs(dir) {
		return filepath.Join(dir, "opm", "config.yaml")
	}
	home := c.getenv("HOME")
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".config", "opm", "config.yaml")
}

// Load reads the config file: the one --config (or OPM_CONFIG) names,
// which must exist, or the default one, which may not.
func (c *Config) Load(cmd *cobra.Command) error {
	c.v = viper.New()
	c.File = ""
	name, explicit, from := "", false, ""
	if f := cmd.Flags().Lookup(FlagName); f != nil && f.Changed {
		name, explicit, from = f.Value.String(), true, "--config"
	} else if env := c.getenv(EnvName(FlagName)); env != "" {
		name, explicit, from = env, true, EnvName(FlagName)
	} else {
		name = c.DefaultFile()
	}
	if name == "" {
		if explicit {
			return exit.Usagef("%s: empty config file name", from)
		}
		return nil
	}
	st, err := os.Stat(name)
	switch {
	case err != nil && !explicit && errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil && errors.Is(err, fs.ErrNotExist):
		return exit.Usagef("config file %s (from %s): no such file", name, from)
	case err != nil:
		return exit.Usagef("config file: %w", err)
	case st.IsDir():
		return exit.Usagef("config file %s is a directory", name)
	}
	c.v.SetConfigFile(name)
	switch strings.ToLower(filepath.Ext(name)) {
	case ".yaml", ".yml", ".json", ".toml":
	default:
		c.v.SetConfigType("yaml")
	}
	if err := c.v.ReadInConfig(); err != nil {
		return exit.Usagef("config file %s: %w", name, err)
	}
	c.File = name
	return nil
}

// Apply gives every flag of cmd that is not on the command line its value
// from the environment, else from the config file (the key under the
// command, such as bundle.validate.fail-on, else the top-level key fail-on),
// else leaves its default.
func (c *Config) Apply(cmd *cobra.Command) error {
	c.origins = map[string]string{}
	prefix := keyPrefix(cmd)
	var errs []error
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if f.Changed || f.Name == "help" || f.Name == FlagName {
			return
		}
		if _, skip := f.Annotations[NoEnvAnnotation]; skip {
			return
		}
		env := EnvName(f.Name)
		var val, from string
		if s, ok := c.env(env); ok && s != "" {
			val, from = s, env
		} else if c.File != "" {
			for _, key := range []string{prefix + f.Name, f.Name} {
				if c.v.InConfig(key) {
					val, from = configString(c.v.Get(key)), fmt.Sprintf("%s in %s", key, c.File)
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
		c.origins[f.Name] = from
	})
	if len(errs) > 0 {
		return exit.With(exit.Usage, errors.Join(errs...))
	}
	return nil
}

// keyPrefix is the config key prefix of cmd: "bundle.validate." for opm
// bundle validate, "" for the root.
func keyPrefix(cmd *cobra.Command) string {
	if p := strings.Fields(cmd.CommandPath()); len(p) > 1 {
		return strings.Join(p[1:], ".") + "."
	}
	return ""
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

// From says where a flag's value came from, for error messages: "" when
// from the command line or the default, else " (from OPM_FAIL_ON)".
func (c *Config) From(flag string) string {
	if c == nil {
		return ""
	}
	if o := c.origins[flag]; o != "" {
		return " (from " + o + ")"
	}
	return ""
}

// CheckUnknown refuses OPM_* variables and config file keys that set no
// flag, so that a typo (fial-on: warning, OPM_FAIL_NO) does not quietly
// leave a setting at its default. An OPM_* variable is known when some
// command of the tree under root has that flag; a top-level config key
// when it is such a flag or names a command; a key under a command when it
// is a flag of that command or names a subcommand. environ is the
// environment as KEY=VALUE.
func (c *Config) CheckUnknown(root *cobra.Command, environ []string) error {
	settable := map[string]bool{} // flag names some command reads from env/config
	actions := map[string]bool{}  // flags that env/config never set
	walk(root, func(cmd *cobra.Command) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) { classify(f, settable, actions) })
		cmd.PersistentFlags().VisitAll(func(f *pflag.Flag) { classify(f, settable, actions) })
	})
	envNames := map[string]string{}
	for n := range settable {
		envNames[EnvName(n)] = n
	}
	var problems []string
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "OPM_") || v == "" || k == EnvName(FlagName) {
			continue
		}
		if _, ok := envNames[k]; ok {
			continue
		}
		problems = append(problems, unknownEnv(k, envNames, actions))
	}
	sort.Strings(problems)
	if c.File != "" {
		problems = append(problems, c.unknownKeys(root, c.v.AllSettings(), "", settable, actions)...)
	}
	if len(problems) > 0 {
		return exit.Usagef("%s", strings.Join(problems, "\n"))
	}
	return nil
}

func classify(f *pflag.Flag, settable, actions map[string]bool) {
	if f.Name == "help" {
		return
	}
	if _, skip := f.Annotations[NoEnvAnnotation]; skip {
		actions[f.Name] = true
		return
	}
	settable[f.Name] = true
}

func unknownEnv(k string, envNames map[string]string, actions map[string]bool) string {
	for a := range actions {
		if EnvName(a) == k {
			return fmt.Sprintf("%s: --%s is an action, not a setting: the environment does not set it; unset %s", k, a, k)
		}
	}
	best, bestD := "", 3
	names := make([]string, 0, len(envNames))
	for n := range envNames {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if d := spelling.Distance(k, n); d < bestD {
			best, bestD = n, d
		}
	}
	hint := " (an OPM_* variable is a flag's name: --fail-on is OPM_FAIL_ON)"
	if best != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", best)
	}
	return fmt.Sprintf("%s sets no flag of any opm command%s; unset it or fix its name", k, hint)
}

// unknownKeys checks the keys of the map m found under the command path
// prefix ("" at the top, "bundle.validate." under a command).
func (c *Config) unknownKeys(root *cobra.Command, m map[string]any, prefix string, settable, actions map[string]bool) []string {
	cmd := root
	if prefix != "" {
		if found, rest, err := root.Find(strings.Split(strings.TrimSuffix(prefix, "."), ".")); err == nil && len(rest) == 0 {
			cmd = found
		}
	}
	var out []string
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		full := prefix + k
		if sub := subcommand(cmd, k); sub != nil {
			if inner, ok := m[k].(map[string]any); ok {
				out = append(out, c.unknownKeys(root, inner, full+".", settable, actions)...)
				continue
			}
			out = append(out, fmt.Sprintf("%s in %s: %q is a command; put its settings under it (%s: {fail-on: warning})", full, c.File, k, k))
			continue
		}
		var known, action bool
		if prefix == "" {
			known, action = settable[k], actions[k]
		} else if f := cmd.Flags().Lookup(k); f != nil {
			_, action = f.Annotations[NoEnvAnnotation]
			known = !action && k != "help" && k != FlagName
		}
		switch {
		case known:
		case action:
			out = append(out, fmt.Sprintf("%s in %s: --%s is an action, not a setting: the config file does not set it; remove the key", full, c.File, k))
		default:
			out = append(out, fmt.Sprintf("%s in %s sets no flag%s; remove it or fix its name%s", full, c.File, where(cmd), suggest(cmd, k, prefix == "", settable)))
		}
	}
	return out
}

func where(cmd *cobra.Command) string {
	if cmd.HasParent() {
		return " of " + cmd.CommandPath()
	}
	return " of any opm command"
}

// suggest names a known key near k ("fial-on" → "fail-on").
func suggest(cmd *cobra.Command, k string, top bool, settable map[string]bool) string {
	var cands []string
	if top {
		for n := range settable {
			cands = append(cands, n)
		}
		for _, s := range cmd.Commands() {
			cands = append(cands, s.Name())
		}
	} else {
		cmd.Flags().VisitAll(func(f *pflag.Flag) { cands = append(cands, f.Name) })
		for _, s := range cmd.Commands() {
			cands = append(cands, s.Name())
		}
	}
	best, bestD := "", 3
	sort.Strings(cands)
	for _, cand := range cands {
		if d := spelling.Distance(k, cand); d < bestD {
			best, bestD = cand, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

func subcommand(cmd *cobra.Command, name string) *cobra.Command {
	for _, s := range cmd.Commands() {
		if s.Name() == name {
			return s
		}
	}
	return nil
}

func walk(cmd *cobra.Command, fn func(*cobra.Command)) {
	fn(cmd)
	for _, s := range cmd.Commands() {
		walk(s, fn)
	}
}
