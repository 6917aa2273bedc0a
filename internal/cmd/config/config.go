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
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/opmkit/opm/internal/cmd/configkeys"
	"github.com/opmkit/opm/internal/cmd/exit"
)

// The names of settings are configkeys'; commands use them from here.
const (
	// NoEnvAnnotation marks flags that the environment and the config
	// file do not set (actions such as --list-rules, rather than settings).
	NoEnvAnnotation = configkeys.NoEnvAnnotation
	// FlagName is the persistent flag that names the config file.
	FlagName = configkeys.FlagName
)

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
func EnvName(flag string) string { return configkeys.EnvName(flag) }

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
	// The root's own --config: a command may have a --config of its own
	// (alpha filter's filter configuration), which is not opm's.
	if f := cmd.Root().PersistentFlags().Lookup(FlagName); f != nil && f.Changed {
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
// flag of the tree under root (see configkeys.CheckUnknown). environ is the
// environment as KEY=VALUE.
func (c *Config) CheckUnknown(root *cobra.Command, environ []string) error {
	var settings map[string]any
	if c.File != "" {
		settings = c.v.AllSettings()
	}
	return configkeys.CheckUnknown(root, environ, c.File, settings)
}
