// Package configkeys names what the environment and the config file may
// set (OPM_* variables and keys, from the flags of the command tree) and
// refuses what sets nothing, with the nearest known name.
package configkeys

import (
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/spelling"
)

// NoEnvAnnotation marks flags that the environment and the config file do
// not set (actions such as --list-rules, rather than settings).
const NoEnvAnnotation = "opm/no-env"

// FlagName is the persistent flag that names the config file.
const FlagName = "config"

// EnvName is the environment variable of a flag: fail-on → OPM_FAIL_ON.
func EnvName(flag string) string {
	return "OPM_" + strings.ToUpper(strings.NewReplacer("-", "_", ".", "_").Replace(flag))
}

// CheckUnknown refuses OPM_* variables and the keys of the config file
// (file, holding settings) that set no flag, so that a typo (fial-on: warning, OPM_FAIL_NO) does not quietly
// leave a setting at its default. An OPM_* variable is known when some
// command of the tree under root has that flag; a top-level config key
// when it is such a flag or names a command; a key under a command when it
// is a flag of that command or names a subcommand. environ is the
// environment as KEY=VALUE.
func CheckUnknown(root *cobra.Command, environ []string, file string, settings map[string]any) error {
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
	if file != "" {
		k := keys{root: root, file: file, settable: settable, actions: actions}
		problems = append(problems, k.unknown(settings, "")...)
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
	names := make([]string, 0, len(envNames))
	for n := range envNames {
		names = append(names, n)
	}
	best := spelling.Nearest(k, names, 3)
	hint := " (an OPM_* variable is a flag's name: --fail-on is OPM_FAIL_ON)"
	if best != "" {
		hint = fmt.Sprintf(" (did you mean %s?)", best)
	}
	return fmt.Sprintf("%s sets no flag of any opm command%s; unset it or fix its name", k, hint)
}

// keys checks the config file's keys against the tree under root.
type keys struct {
	root              *cobra.Command
	file              string
	settable, actions map[string]bool
}

// unknown checks the keys of the map m found under the command path
// prefix ("" at the top, "bundle.validate." under a command).
func (c keys) unknown(m map[string]any, prefix string) []string {
	root, settable, actions := c.root, c.settable, c.actions
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
				out = append(out, c.unknown(inner, full+".")...)
				continue
			}
			out = append(out, fmt.Sprintf("%s in %s: %q is a command; put its settings under it (%s: {fail-on: warning})", full, c.file, k, k))
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
			out = append(out, fmt.Sprintf("%s in %s: --%s is an action, not a setting: the config file does not set it; remove the key", full, c.file, k))
		default:
			out = append(out, fmt.Sprintf("%s in %s sets no flag%s; remove it or fix its name%s", full, c.file, where(cmd), suggest(cmd, k, prefix == "", settable)))
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
	best := spelling.Nearest(k, cands, 3)
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
